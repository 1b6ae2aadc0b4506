#include <gtest/gtest.h>

#include <regex>

#include "platform/system.h"

namespace dlenv {
namespace {

TEST(SystemWin32, NamesTheSystem) {
  SystemInfo s = current_system();
  EXPECT_EQ(s.sysname, "Windows");
  EXPECT_TRUE(std::regex_match(s.release, std::regex(R"(\d+\.\d+\.\d+)"))) << s.release;
  EXPECT_EQ(s.machine, "x86_64");
  EXPECT_FALSE(s.hostname.empty());
  EXPECT_FALSE(s.user_name.empty());
  EXPECT_TRUE(s.groups.empty());
  EXPECT_EQ(group_name(44), "44");
}

}  // namespace
}  // namespace dlenv
