#include "platform/registry_file.h"

#include <gtest/gtest.h>

namespace dlenv {
namespace {

// What `reg export HKCU\Environment f.reg` writes: UTF-16LE with a BOM and CRLF.
std::string utf16le(std::string_view ascii) {
  std::string out = "\xFF\xFE";
  for (char ch : ascii) {
    out += ch;
    out += '\0';
  }
  return out;
}

// hex(2) bytes of a UTF-16LE string with its terminating NUL.
std::string hex2(std::string_view ascii) {
  std::string out;
  char buf[8];
  for (char ch : ascii) {
    std::snprintf(buf, sizeof buf, "%02x,00,", static_cast<unsigned char>(ch));
    out += buf;
  }
  return out + "00,00";
}

TEST(RegistryFile, ReadsUtf16ExportWithExpandSzAcrossContinuationLines) {
  std::string h = hex2("%USERPROFILE%\\AppData\\Local\\Microsoft\\WindowsApps;C:\\Tools");
  // reg.exe wraps hex lists at ~80 columns with a trailing backslash.
  std::string wrapped = h.substr(0, 40) + "\\\r\n  " + h.substr(40);
  std::string text =
      "Windows Registry Editor Version 5.00\r\n\r\n[HKEY_CURRENT_USER\\Environment]\r\n"
      "\"Path\"=hex(2):" +
      wrapped + "\r\n\"TEMP\"=\"C:\\\\Users\\\\ann\\\\Temp\"\r\n\"Count\"=dword:00000001\r\n";
  auto data = parse_reg_file(utf16le(text), "user.reg");
  ASSERT_TRUE(data) << data.error().message;
  auto reg = registry_from_data(*data);
  EXPECT_EQ(reg(RegistryHive::current_user, "Environment", "PATH"),
            "%USERPROFILE%\\AppData\\Local\\Microsoft\\WindowsApps;C:\\Tools");
  EXPECT_EQ(reg(RegistryHive::current_user, "environment", "Temp"), "C:\\Users\\ann\\Temp");
  EXPECT_FALSE(reg(RegistryHive::current_user, "Environment", "Count"));  // dword: skipped
  EXPECT_FALSE(reg(RegistryHive::local_machine, "Environment", "Path"));
}

TEST(RegistryFile, Utf8MachineKeyAndNonAsciiText) {
  std::string text =
      "\xEF\xBB\xBFWindows Registry Editor Version 5.00\n\n"
      "[HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment]\n"
      "\"Path\"=\"C:\\\\Windows\\\\system32;C:\\\\Users\\\\Jos\xC3\xA9\\\\bin\"\n";
  auto data = parse_reg_file(text, "m.reg");
  ASSERT_TRUE(data) << data.error().message;
  auto reg = registry_from_data(*data);
  EXPECT_EQ(reg(RegistryHive::local_machine,
                "SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment", "Path"),
            "C:\\Windows\\system32;C:\\Users\\Jos\xC3\xA9\\bin");
}

TEST(RegistryFile, ErrorsNameFileAndLine) {
  auto not_reg = parse_reg_file("PATH=C:\\x\n", "env.txt");
  ASSERT_FALSE(not_reg);
  EXPECT_NE(not_reg.error().message.find("env.txt"), std::string::npos);
  EXPECT_NE(not_reg.error().message.find("reg export"), std::string::npos);

  auto bad = parse_reg_file("REGEDIT4\n[HKEY_CURRENT_USER\\Environment]\n\"Path\"=hex(2):zz,00\n",
                            "u.reg");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("u.reg:3"), std::string::npos) << bad.error().message;

  auto unterminated = parse_reg_file("REGEDIT4\n[HKEY_CURRENT_USER\\Environment\n", "u.reg");
  ASSERT_FALSE(unterminated);
  EXPECT_NE(unterminated.error().message.find("u.reg:2"), std::string::npos);
}

TEST(RegistryFile, TruncatedUtf16AndSurrogatesNeverCrash) {
  std::string text = utf16le("REGEDIT4\r\n[HKCU\\Environment]\r\n\"A\"=hex(2):3d,d8,00,de,00,d8");
  text += "X";  // an odd trailing byte
  auto data = parse_reg_file(text, "odd.reg");
  ASSERT_TRUE(data) << data.error().message;
  auto v = registry_from_data(*data)(RegistryHive::current_user, "Environment", "A");
  ASSERT_TRUE(v);
  EXPECT_EQ(*v, "\xF0\x9F\x98\x80\xEF\xBF\xBD");  // U+1F600, then an unpaired surrogate
}

}  // namespace
}  // namespace dlenv
