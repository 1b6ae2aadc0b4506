#include "probe/os_path.h"

#include <gtest/gtest.h>

namespace dlenv {
namespace {

TEST(OsPath, WindowsDrivePathsContinueWithBackslash) {
  EXPECT_EQ(path_join_os("C:\\Python311", "Lib/site-packages", true),
            "C:\\Python311\\Lib\\site-packages");
  EXPECT_EQ(path_join_os("C:/Python311/", "/python.exe", true), "C:\\Python311\\python.exe");
  EXPECT_EQ(path_join_os("c:\\", "x", true), "c:\\x");
  EXPECT_EQ(path_join_os("C:\\a\\", "", true), "C:\\a");
  // Logical paths (--root) and Linux keep '/'.
  EXPECT_EQ(path_join_os("/Python311", "Lib/site-packages", true), "/Python311/Lib/site-packages");
  EXPECT_EQ(path_join_os("C:\\Python311", "Lib/site-packages", false),
            "C:\\Python311/Lib/site-packages");
  EXPECT_EQ(path_join_os("/usr", "lib/python3.12", false), "/usr/lib/python3.12");
}

TEST(OsPath, DirnameAndBasenameSplitDrivePathsAtBothSeparators) {
  EXPECT_EQ(path_dirname_os("C:\\Python311\\python.exe"), "C:\\Python311");
  EXPECT_EQ(path_basename_os("C:\\Python311\\python.exe"), "python.exe");
  EXPECT_EQ(path_dirname_os("C:\\python.exe"), "C:\\");
  EXPECT_EQ(path_dirname_os("C:/a/b/"), "C:/a");
  EXPECT_EQ(path_basename_os("C:\\"), "");
  EXPECT_EQ(path_dirname_os("/usr/bin/python3"), "/usr/bin");
  EXPECT_EQ(path_basename_os("/usr/bin/python3"), "python3");
  EXPECT_FALSE(is_drive_path("C:"));
  EXPECT_FALSE(is_drive_path("/C:/x"));
  EXPECT_TRUE(is_drive_path("z:/x"));
}

}  // namespace
}  // namespace dlenv
