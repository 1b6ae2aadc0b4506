// HKCU\Environment (REG_SZ / REG_EXPAND_SZ values) and the WM_SETTINGCHANGE
// broadcast that makes Explorer and new shells see a change; the backup of replaced
// values in HKCU\Software\dlenv (value UserEnvironmentBackup). Compiled only in the
// Windows build; exercised under Wine by tests/fixtures/win/env_persist.cmake.
#include <windows.h>

#include <string>

#include "actions/env_switch.h"

namespace dlenv {
namespace {

std::wstring wide(const std::string& s) {
  if (s.empty()) return {};
  int n = MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), nullptr, 0);
  std::wstring w(static_cast<size_t>(n), L'\0');
  MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), w.data(), n);
  return w;
}

std::string narrow(const std::wstring& w) {
  if (w.empty()) return {};
  int n = WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), nullptr, 0, nullptr,
                              nullptr);
  std::string s(static_cast<size_t>(n), '\0');
  WideCharToMultiByte(CP_UTF8, 0, w.data(), static_cast<int>(w.size()), s.data(), n, nullptr,
                      nullptr);
  return s;
}

std::string error_text(LONG code) {
  return "Windows error " + std::to_string(code);
}

// Reads a string value (REG_SZ or REG_EXPAND_SZ); nullopt when absent.
Result<std::optional<UserEnvValue>> read_value(HKEY root, const wchar_t* subkey,
                                               const std::string& where, const std::string& name) {
  HKEY key = nullptr;
  LONG rc = RegOpenKeyExW(root, subkey, 0, KEY_READ, &key);
  if (rc == ERROR_FILE_NOT_FOUND) return std::optional<UserEnvValue>();
  if (rc != ERROR_SUCCESS) return fail(where + ": cannot open: " + error_text(rc));
  DWORD type = 0, bytes = 0;
  std::wstring wname = wide(name);
  rc = RegQueryValueExW(key, wname.c_str(), nullptr, &type, nullptr, &bytes);
  if (rc == ERROR_FILE_NOT_FOUND) {
    RegCloseKey(key);
    return std::optional<UserEnvValue>();
  }
  std::wstring value(bytes / sizeof(wchar_t) + 1, L'\0');
  rc = RegQueryValueExW(key, wname.c_str(), nullptr, &type, reinterpret_cast<BYTE*>(value.data()),
                        &bytes);
  RegCloseKey(key);
  if (rc != ERROR_SUCCESS) return fail(where + "\\" + name + ": " + error_text(rc));
  if (type != REG_SZ && type != REG_EXPAND_SZ) {
    return fail(where + "\\" + name + ": not a string value (registry type " +
                std::to_string(type) + "); dlenv leaves it alone");
  }
  value.resize(wcsnlen(value.c_str(), value.size()));
  return std::optional<UserEnvValue>(UserEnvValue{narrow(value), type == REG_EXPAND_SZ});
}

Result<void> write_value(HKEY root, const wchar_t* subkey, const std::string& where,
                         const std::string& name, const UserEnvValue& v) {
  HKEY key = nullptr;
  LONG rc = RegCreateKeyExW(root, subkey, 0, nullptr, 0, KEY_SET_VALUE, nullptr, &key, nullptr);
  if (rc != ERROR_SUCCESS) return fail(where + ": cannot open for writing: " + error_text(rc));
  std::wstring w = wide(v.value);
  rc = RegSetValueExW(key, wide(name).c_str(), 0, v.expandable ? REG_EXPAND_SZ : REG_SZ,
                      reinterpret_cast<const BYTE*>(w.c_str()),
                      static_cast<DWORD>((w.size() + 1) * sizeof(wchar_t)));
  RegCloseKey(key);
  if (rc != ERROR_SUCCESS) return fail(where + "\\" + name + ": " + error_text(rc));
  return {};
}

Result<void> delete_value(HKEY root, const wchar_t* subkey, const std::string& where,
                          const std::string& name) {
  HKEY key = nullptr;
  LONG rc = RegOpenKeyExW(root, subkey, 0, KEY_SET_VALUE, &key);
  if (rc == ERROR_FILE_NOT_FOUND) return {};
  if (rc != ERROR_SUCCESS) return fail(where + ": cannot open: " + error_text(rc));
  rc = RegDeleteValueW(key, wide(name).c_str());
  RegCloseKey(key);
  if (rc != ERROR_SUCCESS && rc != ERROR_FILE_NOT_FOUND) {
    return fail(where + "\\" + name + ": " + error_text(rc));
  }
  return {};
}

constexpr const wchar_t* kEnvKey = L"Environment";
constexpr const char* kEnvWhere = "HKCU\\Environment";
constexpr const wchar_t* kBackupKey = L"Software\\dlenv";
constexpr const char* kBackupWhere = "HKCU\\Software\\dlenv";
constexpr const char* kBackupValue = "UserEnvironmentBackup";

class RegistryEnvironmentStore : public UserEnvironmentStore {
 public:
  Result<std::optional<UserEnvValue>> get(const std::string& name) const override {
    return read_value(HKEY_CURRENT_USER, kEnvKey, kEnvWhere, name);
  }
  Result<void> set(const std::string& name, const UserEnvValue& value) override {
    return write_value(HKEY_CURRENT_USER, kEnvKey, kEnvWhere, name, value);
  }
  Result<void> remove(const std::string& name) override {
    return delete_value(HKEY_CURRENT_USER, kEnvKey, kEnvWhere, name);
  }
  Result<std::optional<std::string>> load_backup() const override {
    auto v = read_value(HKEY_CURRENT_USER, kBackupKey, kBackupWhere, kBackupValue);
    if (!v) return std::unexpected(v.error());
    if (!*v) return std::optional<std::string>();
    return std::optional<std::string>((*v)->value);
  }
  Result<void> save_backup(const std::optional<std::string>& text) override {
    if (!text) return delete_value(HKEY_CURRENT_USER, kBackupKey, kBackupWhere, kBackupValue);
    return write_value(HKEY_CURRENT_USER, kBackupKey, kBackupWhere, kBackupValue,
                       UserEnvValue{*text, false});
  }
  std::string where() const override { return kEnvWhere; }

  Result<void> broadcast_change() override {
    DWORD_PTR result = 0;
    if (!SendMessageTimeoutW(HWND_BROADCAST, WM_SETTINGCHANGE, 0,
                             reinterpret_cast<LPARAM>(L"Environment"), SMTO_ABORTIFHUNG, 5000,
                             &result)) {
      return fail(
          "WM_SETTINGCHANGE broadcast failed: " + error_text(static_cast<LONG>(GetLastError())) +
          " (new shells still see the change after the next sign-in)");
    }
    return {};
  }
};

}  // namespace

std::unique_ptr<UserEnvironmentStore> make_user_environment_store() {
  return std::make_unique<RegistryEnvironmentStore>();
}

}  // namespace dlenv
