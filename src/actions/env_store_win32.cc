// HKCU\Environment (REG_EXPAND_SZ values) and the WM_SETTINGCHANGE broadcast that
// makes Explorer and new shells see a change. Compiled only in the Windows build;
// not yet exercised by a test (no Windows machine or Wine registry test here).
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

class RegistryEnvironmentStore : public UserEnvironmentStore {
 public:
  Result<std::optional<std::string>> get(const std::string& name) const override {
    HKEY key = nullptr;
    LONG rc = RegOpenKeyExW(HKEY_CURRENT_USER, L"Environment", 0, KEY_READ, &key);
    if (rc != ERROR_SUCCESS) return fail("HKCU\\Environment: cannot open: " + error_text(rc));
    DWORD type = 0, bytes = 0;
    std::wstring wname = wide(name);
    rc = RegQueryValueExW(key, wname.c_str(), nullptr, &type, nullptr, &bytes);
    if (rc == ERROR_FILE_NOT_FOUND) {
      RegCloseKey(key);
      return std::optional<std::string>();
    }
    std::wstring value(bytes / sizeof(wchar_t) + 1, L'\0');
    rc = RegQueryValueExW(key, wname.c_str(), nullptr, &type, reinterpret_cast<BYTE*>(value.data()),
                          &bytes);
    RegCloseKey(key);
    if (rc != ERROR_SUCCESS) return fail("HKCU\\Environment\\" + name + ": " + error_text(rc));
    value.resize(wcsnlen(value.c_str(), value.size()));
    return std::optional<std::string>(narrow(value));
  }

  Result<void> set(const std::string& name, const std::string& value) override {
    HKEY key = nullptr;
    LONG rc = RegOpenKeyExW(HKEY_CURRENT_USER, L"Environment", 0, KEY_SET_VALUE, &key);
    if (rc != ERROR_SUCCESS) return fail("HKCU\\Environment: cannot open: " + error_text(rc));
    std::wstring w = wide(value);
    rc = RegSetValueExW(key, wide(name).c_str(), 0, REG_EXPAND_SZ,
                        reinterpret_cast<const BYTE*>(w.c_str()),
                        static_cast<DWORD>((w.size() + 1) * sizeof(wchar_t)));
    RegCloseKey(key);
    if (rc != ERROR_SUCCESS) return fail("HKCU\\Environment\\" + name + ": " + error_text(rc));
    return {};
  }

  Result<void> remove(const std::string& name) override {
    HKEY key = nullptr;
    LONG rc = RegOpenKeyExW(HKEY_CURRENT_USER, L"Environment", 0, KEY_SET_VALUE, &key);
    if (rc != ERROR_SUCCESS) return fail("HKCU\\Environment: cannot open: " + error_text(rc));
    rc = RegDeleteValueW(key, wide(name).c_str());
    RegCloseKey(key);
    if (rc != ERROR_SUCCESS && rc != ERROR_FILE_NOT_FOUND) {
      return fail("HKCU\\Environment\\" + name + ": " + error_text(rc));
    }
    return {};
  }

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
