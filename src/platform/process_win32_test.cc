// run_process on Windows, driven by the fixture child.exe (tests/fixtures/win/child.cc).
#include <gtest/gtest.h>

#include <filesystem>

#include "platform/process.h"

namespace dlenv {
namespace {

std::string child() {
  return std::string(DLENV_WIN_FIXTURES) + "/bin/child.exe";
}

TEST(ProcessWin32, CapturesOutputAndQuotesArguments) {
  auto r = run_process({child(), "args", "plain", "with space", "quote\"inside", "trail\\",
                        "back\\\\\"slash", "", "\xc3\xa9t\xc3\xa9"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->out,
            "[plain]\n[with space]\n[quote\"inside]\n[trail\\]\n[back\\\\\"slash]\n[]\n"
            "[\xc3\xa9t\xc3\xa9]\n");
}

TEST(ProcessWin32, ExitCodeAndStderr) {
  auto r = run_process({child(), "exit", "7"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_code, 7);
  auto e = run_process({child(), "stderr", "problem"});
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->out, "out");
  EXPECT_EQ(e->err, "problem");
}

TEST(ProcessWin32, EnvironmentReplacedWhenGiven) {
  ProcessOptions o;
  o.env = std::map<std::string, std::string>{{"DLENV_CHILD_VAR", "hello"}};
  auto r = run_process({child(), "env", "DLENV_CHILD_VAR"}, o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->out, "hello\n");
  auto inherited = run_process({child(), "env", "DLENV_CHILD_VAR"});
  ASSERT_TRUE(inherited);
  EXPECT_EQ(inherited->out, "<unset>\n");
}

TEST(ProcessWin32, TimeoutKillsTheChild) {
  ProcessOptions o;
  o.timeout = std::chrono::milliseconds(500);
  auto r = run_process({child(), "sleep", "30000"}, o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->exit_code, -1);
  EXPECT_EQ(r->out, "");
  EXPECT_LT(r->wall_ms, 10000);
}

TEST(ProcessWin32, LeftBehindGrandchildDoesNotHoldUsUp) {
  ProcessOptions o;
  o.timeout = std::chrono::milliseconds(20000);
  auto r = run_process({child(), "orphan", "30000"}, o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->out, "parent done\n");
  EXPECT_LT(r->wall_ms, 10000);
}

TEST(ProcessWin32, OutputIsCapped) {
  ProcessOptions o;
  o.max_output = 1000;
  auto r = run_process({child(), "flood", "200000"}, o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->out.size(), 1000u);
}

TEST(ProcessWin32, NotFoundNamesTheProgram) {
  auto r = run_process({"dlenv-no-such-program-42"});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("dlenv-no-such-program-42: not found on PATH"),
            std::string::npos)
      << r.error().message;
  auto p = run_process({"Z:\\no\\such\\dir\\prog.exe"});
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("prog.exe"), std::string::npos);
  EXPECT_FALSE(run_process({}));
}

TEST(ProcessWin32, FindsProgramsOnPathWithPathext) {
  ProcessOptions o;
  o.env = std::map<std::string, std::string>{{"Path", std::string(DLENV_WIN_FIXTURES) + "/bin"},
                                             {"PATHEXT", ".COM;.EXE"}};
  auto r = run_process({"child", "exit", "3"}, o);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_code, 3);
}

}  // namespace
}  // namespace dlenv
