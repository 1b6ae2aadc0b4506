// registry_win32.cc against the real (Wine's) registry: values written under
// HKCU\Software\dlenv-test-<pid> and removed again.
#include <gtest/gtest.h>
#include <windows.h>

#include <string>

#include "platform/registry.h"

namespace dlenv {
namespace {

class RegistryWin32 : public ::testing::Test {
 protected:
  void SetUp() override {
    key_ = L"Software\\dlenv-test-" + std::to_wstring(::GetCurrentProcessId());
    ASSERT_EQ(::RegCreateKeyExW(HKEY_CURRENT_USER, key_.c_str(), 0, nullptr, 0, KEY_ALL_ACCESS,
                                nullptr, &hkey_, nullptr),
              ERROR_SUCCESS);
  }
  void TearDown() override {
    if (hkey_ != nullptr) ::RegCloseKey(hkey_);
    ::RegDeleteTreeW(HKEY_CURRENT_USER, key_.c_str());
  }
  void set(const wchar_t* name, DWORD type, const void* data, DWORD size) {
    ASSERT_EQ(::RegSetValueExW(hkey_, name, 0, type, static_cast<const BYTE*>(data), size),
              ERROR_SUCCESS);
  }
  void set_string(const wchar_t* name, DWORD type, const std::wstring& v) {
    set(name, type, v.c_str(), static_cast<DWORD>((v.size() + 1) * sizeof(wchar_t)));
  }
  std::string key() const {
    return "Software\\dlenv-test-" + std::to_string(::GetCurrentProcessId());
  }

  std::wstring key_;
  HKEY hkey_ = nullptr;
};

TEST_F(RegistryWin32, ReadsStringsAsUtf8) {
  set_string(L"InstallDir", REG_SZ,
             L"C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4");
  set_string(L"Unicode", REG_SZ, L"C:\\Users\\J\u00fcrgen\\\u6df1\u5ea6");
  set_string(L"Expand", REG_EXPAND_SZ, L"%ProgramFiles%\\NVIDIA Corporation");
  auto reg = live_registry();
  EXPECT_EQ(reg(RegistryHive::current_user, key(), "InstallDir"),
            "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4");
  EXPECT_EQ(reg(RegistryHive::current_user, key(), "Unicode"),
            "C:\\Users\\J\xc3\xbcrgen\\\xe6\xb7\xb1\xe5\xba\xa6");
  EXPECT_EQ(reg(RegistryHive::current_user, key(), "Expand"),
            "%ProgramFiles%\\NVIDIA Corporation");  // unexpanded
}

TEST_F(RegistryWin32, StringWithoutTerminatorAndOtherTypes) {
  const std::wstring raw = L"no-nul";
  set(L"NoNul", REG_SZ, raw.data(), static_cast<DWORD>(raw.size() * sizeof(wchar_t)));
  DWORD dword = 42;
  set(L"Number", REG_DWORD, &dword, sizeof dword);
  auto reg = live_registry();
  EXPECT_EQ(reg(RegistryHive::current_user, key(), "NoNul"), "no-nul");
  EXPECT_FALSE(reg(RegistryHive::current_user, key(), "Number"));
  EXPECT_FALSE(reg(RegistryHive::current_user, key(), "Missing"));
  EXPECT_FALSE(reg(RegistryHive::current_user, key() + "\\NoSuchKey", "InstallDir"));
  EXPECT_FALSE(reg(RegistryHive::local_machine, "SOFTWARE\\dlenv-no-such-key", "x"));
}

TEST(RegistryWin32Live, ReadsAKeyWineAndWindowsBothHave) {
  auto v = live_registry()(RegistryHive::local_machine,
                           "SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion", "SystemRoot");
  ASSERT_TRUE(v);
  EXPECT_NE(v->find(":\\"), std::string::npos) << *v;
}

}  // namespace
}  // namespace dlenv
