#include "platform/env.h"

#include <gtest/gtest.h>

namespace dlenv {
namespace {

TEST(Env, MapEnvGetAndAll) {
  auto env = make_map_env({{"B", "2"}, {"A", "1"}});
  EXPECT_EQ(env->get("A"), "1");
  EXPECT_EQ(env->get("B"), "2");
  EXPECT_FALSE(env->get("C"));
  auto all = env->all();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all.begin()->first, "A");
}

TEST(ParseEnvFile, ParsesAllForms) {
  auto vars = parse_env_file(
      "# a comment\n"
      "\n"
      "PLAIN=value\n"
      "  SPACED = padded value  \n"
      "export EXPORTED=yes\n"
      "DQ=\"double quoted # not a comment\"\n"
      "SQ='single \"inner\"'\n"
      "EMPTY=\n"
      "EMPTY_QUOTED=\"\"\n"
      "WITH_EQ=a=b\r\n"
      "   # indented comment\n"
      "PLAIN=overridden\n"
      "exporter=1\n",
      "test.env");
  ASSERT_TRUE(vars) << vars.error().message;
  EXPECT_EQ(vars->size(), 9u);
  EXPECT_EQ(vars->at("PLAIN"), "overridden");
  EXPECT_EQ(vars->at("SPACED"), "padded value");
  EXPECT_EQ(vars->at("EXPORTED"), "yes");
  EXPECT_EQ(vars->at("DQ"), "double quoted # not a comment");
  EXPECT_EQ(vars->at("SQ"), "single \"inner\"");
  EXPECT_EQ(vars->at("EMPTY"), "");
  EXPECT_EQ(vars->at("EMPTY_QUOTED"), "");
  EXPECT_EQ(vars->at("WITH_EQ"), "a=b");
  EXPECT_EQ(vars->at("exporter"), "1");
  EXPECT_FALSE(vars->contains("export EXPORTED"));
}

TEST(ParseEnvFile, EmptyTextGivesNoVariables) {
  auto vars = parse_env_file("", "empty.env");
  ASSERT_TRUE(vars);
  EXPECT_TRUE(vars->empty());
}

TEST(ParseEnvFile, LineWithoutEqualsNamesFileAndLine) {
  auto vars = parse_env_file("A=1\n# c\n\nNOT AN ASSIGNMENT\n", "/etc/dlenv.env");
  ASSERT_FALSE(vars);
  EXPECT_NE(vars.error().message.find("/etc/dlenv.env:4:"), std::string::npos)
      << vars.error().message;
  EXPECT_NE(vars.error().message.find("NOT AN ASSIGNMENT"), std::string::npos);
}

TEST(ParseEnvFile, InvalidKeyNamesFileAndLine) {
  auto vars = parse_env_file("OK=1\n1BAD=2\n", "x.env");
  ASSERT_FALSE(vars);
  EXPECT_NE(vars.error().message.find("x.env:2:"), std::string::npos) << vars.error().message;
  EXPECT_NE(vars.error().message.find("1BAD"), std::string::npos);

  auto empty_key = parse_env_file("=value\n", "y.env");
  ASSERT_FALSE(empty_key);
  EXPECT_NE(empty_key.error().message.find("y.env:1:"), std::string::npos);

  auto dash = parse_env_file("A-B=1\n", "z.env");
  ASSERT_FALSE(dash);
  EXPECT_NE(dash.error().message.find("z.env:1:"), std::string::npos);
}

TEST(ParseEnvFile, UnterminatedQuoteIsAnError) {
  auto vars = parse_env_file("A=1\nB=2\nC=\"open\n", "q.env");
  ASSERT_FALSE(vars);
  EXPECT_NE(vars.error().message.find("q.env:3:"), std::string::npos) << vars.error().message;

  auto mismatched = parse_env_file("A='one\"\n", "m.env");
  ASSERT_FALSE(mismatched);
  EXPECT_NE(mismatched.error().message.find("m.env:1:"), std::string::npos);

  auto lone = parse_env_file("A=\"\n", "l.env");
  ASSERT_FALSE(lone);
  EXPECT_NE(lone.error().message.find("l.env:1:"), std::string::npos);
}

TEST(SplitPathList, DropsEmptyElements) {
  EXPECT_EQ(split_path_list("/a:/b::/c:", ':'), (std::vector<std::string>{"/a", "/b", "/c"}));
  EXPECT_EQ(split_path_list(":/only:", ':'), (std::vector<std::string>{"/only"}));
  EXPECT_TRUE(split_path_list("", ':').empty());
  EXPECT_TRUE(split_path_list(":::", ':').empty());
  EXPECT_EQ(split_path_list("C:\\x;D:\\y;", ';'), (std::vector<std::string>{"C:\\x", "D:\\y"}));
}

}  // namespace
}  // namespace dlenv
