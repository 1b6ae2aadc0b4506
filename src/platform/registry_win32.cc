// RegistryReader on Windows: RegOpenKeyExW + RegQueryValueExW, REG_SZ and
// REG_EXPAND_SZ (left unexpanded), returned as UTF-8. The 64-bit view is read
// (KEY_WOW64_64KEY), where NVIDIA's installers write, whatever our own bitness.
#include <windows.h>

#include <vector>

#include "platform/registry.h"
#include "platform/win32_text.h"

namespace dlenv {
namespace {

class Key {
 public:
  Key() = default;
  ~Key() {
    if (key_ != nullptr) ::RegCloseKey(key_);
  }
  Key(const Key&) = delete;
  Key& operator=(const Key&) = delete;
  HKEY* out() { return &key_; }
  HKEY get() const { return key_; }

 private:
  HKEY key_ = nullptr;
};

std::optional<std::string> read_string(RegistryHive hive, std::string_view key_path,
                                       std::string_view value_name) {
  HKEY root = hive == RegistryHive::local_machine ? HKEY_LOCAL_MACHINE : HKEY_CURRENT_USER;
  std::wstring key_w = win32::widen(key_path);
  std::wstring value_w = win32::widen(value_name);
  Key key;
  if (::RegOpenKeyExW(root, key_w.c_str(), 0, KEY_QUERY_VALUE | KEY_WOW64_64KEY, key.out()) !=
      ERROR_SUCCESS) {
    return std::nullopt;
  }
  // The value can change size between the two calls: retry a few times.
  for (int attempt = 0; attempt < 4; ++attempt) {
    DWORD type = 0;
    DWORD bytes = 0;
    LONG rc = ::RegQueryValueExW(key.get(), value_w.c_str(), nullptr, &type, nullptr, &bytes);
    if (rc != ERROR_SUCCESS) return std::nullopt;
    if (type != REG_SZ && type != REG_EXPAND_SZ) return std::nullopt;
    std::vector<BYTE> data(static_cast<size_t>(bytes) + sizeof(wchar_t));
    DWORD size = bytes;
    rc = ::RegQueryValueExW(key.get(), value_w.c_str(), nullptr, &type, data.data(), &size);
    if (rc == ERROR_MORE_DATA) continue;
    if (rc != ERROR_SUCCESS) return std::nullopt;
    if (type != REG_SZ && type != REG_EXPAND_SZ) return std::nullopt;
    // The stored string may or may not end in NULs: cut at the first one.
    size_t chars = size / sizeof(wchar_t);
    std::wstring text(chars, L'\0');
    for (size_t i = 0; i < chars; ++i) {
      text[i] = static_cast<wchar_t>(data[2 * i] | (data[2 * i + 1] << 8));
    }
    if (auto nul = text.find(L'\0'); nul != std::wstring::npos) text.resize(nul);
    return win32::narrow(text);
  }
  return std::nullopt;
}

}  // namespace

RegistryReader live_registry() {
  return [](RegistryHive hive, std::string_view key,
            std::string_view value) -> std::optional<std::string> {
    return read_string(hive, key, value);
  };
}

}  // namespace dlenv
