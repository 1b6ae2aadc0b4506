#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "platform/process.h"

namespace dlenv {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

ProcessOptions with_timeout(std::chrono::milliseconds timeout) {
  ProcessOptions opts;
  opts.timeout = timeout;
  return opts;
}

// Every child of this test process has been reaped.
void expect_no_children() {
  errno = 0;
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST(RunProcess, CapturesStdoutAndExitCode) {
  auto r = run_process({"echo", "hello", "world"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->out, "hello world\n");
  EXPECT_EQ(r->err, "");
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->term_signal, 0);
  EXPECT_FALSE(r->timed_out);
  EXPECT_GT(r->wall_ms, 0.0);
  expect_no_children();
}

TEST(RunProcess, NonZeroExitIsASuccessfulRun) {
  auto r = run_process({"/bin/sh", "-c", "exit 7"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_code, 7);
  EXPECT_FALSE(r->timed_out);
}

TEST(RunProcess, CapturesStderrSeparately) {
  auto r = run_process({"sh", "-c", "echo to-out; echo to-err >&2; exit 3"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->out, "to-out\n");
  EXPECT_EQ(r->err, "to-err\n");
  EXPECT_EQ(r->exit_code, 3);
}

TEST(RunProcess, StdinIsEmpty) {
  auto r = run_process({"cat"}, with_timeout(5000ms));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->out, "");
  EXPECT_EQ(r->exit_code, 0);
}

TEST(RunProcess, TimeoutKillsTheProcessPromptly) {
  const auto start = Clock::now();
  auto r = run_process({"sleep", "10"}, with_timeout(300ms));
  const auto elapsed = Clock::now() - start;
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->exit_code, -1);
  EXPECT_EQ(r->term_signal, SIGKILL);
  EXPECT_LT(elapsed, 2s);
  EXPECT_GE(r->wall_ms, 290.0);
  EXPECT_LT(r->wall_ms, 2000.0);
  expect_no_children();
}

// Dead (gone, or a zombie waiting for init) according to /proc.
bool process_is_dead(long pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

TEST(RunProcess, TimeoutKillsTheWholeGroup) {
  // A background grandchild in the group keeps the pipes open; it must die with the group.
  const char* base = std::getenv("DLENV_TEST_TMP");
  std::filesystem::path dir = base != nullptr && *base != '\0'
                                  ? std::filesystem::path(base)
                                  : std::filesystem::temp_directory_path();
  std::filesystem::create_directories(dir);
  std::string tmpl = (dir / "platform-proc-XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const std::filesystem::path pid_file = std::filesystem::path(tmpl) / "bg.pid";
  const auto start = Clock::now();
  auto r = run_process(
      {"sh", "-c", "sleep 10 & echo $! > '" + pid_file.string() + "'; sleep 10; echo never"},
      with_timeout(500ms));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->out, "");
  EXPECT_LT(Clock::now() - start, 2s);
  expect_no_children();
  long bg_pid = 0;
  std::ifstream(pid_file) >> bg_pid;
  std::filesystem::remove_all(tmpl);
  ASSERT_GT(bg_pid, 0);
  bool dead = false;
  for (int i = 0; i < 100 && !dead; ++i) {
    dead = process_is_dead(bg_pid);
    if (!dead) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(dead) << "background process " << bg_pid << " survived the timeout";
}

TEST(RunProcess, ChildClosingItsOutputStillTimesOut) {
  const auto start = Clock::now();
  auto r = run_process({"sh", "-c", "echo before; exec >&- 2>&-; sleep 10"}, with_timeout(300ms));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->out, "before\n");
  EXPECT_LT(Clock::now() - start, 2s);
  expect_no_children();
}

TEST(RunProcess, LeftBehindBackgroundProcessDoesNotBlock) {
  const auto start = Clock::now();
  auto r = run_process({"sh", "-c", "sleep 10 & echo done"}, with_timeout(5000ms));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->out, "done\n");
  EXPECT_LT(Clock::now() - start, 2s);
}

TEST(RunProcess, ReportsTerminatingSignal) {
  auto r = run_process({"sh", "-c", "kill -TERM $$"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->exit_code, -1);
  EXPECT_EQ(r->term_signal, SIGTERM);
}

TEST(RunProcess, EnvOverrideReplacesTheEnvironment) {
  ASSERT_EQ(::setenv("DLENV_PROCESS_TEST_PARENT", "leaked", 1), 0);
  ProcessOptions opts;
  opts.env = std::map<std::string, std::string>{{"FOO", "bar baz"}, {"PATH", "/usr/bin:/bin"}};
  auto r = run_process({"sh", "-c", "echo \"$FOO|${DLENV_PROCESS_TEST_PARENT:-unset}\""}, opts);
  ::unsetenv("DLENV_PROCESS_TEST_PARENT");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->out, "bar baz|unset\n");
}

TEST(RunProcess, InheritsEnvironmentByDefault) {
  ASSERT_EQ(::setenv("DLENV_PROCESS_TEST_INHERIT", "yes", 1), 0);
  auto r = run_process({"sh", "-c", "echo $DLENV_PROCESS_TEST_INHERIT"});
  ::unsetenv("DLENV_PROCESS_TEST_INHERIT");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->out, "yes\n");
}

TEST(RunProcess, PathLookupUsesTheOverridePath) {
  ProcessOptions opts;
  opts.env = std::map<std::string, std::string>{{"PATH", "/nonexistent-dir-for-dlenv"}};
  auto r = run_process({"sh", "-c", "true"}, opts);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("sh"), std::string::npos);
  EXPECT_NE(r.error().message.find("not found on PATH"), std::string::npos);
}

TEST(RunProcess, OutputIsCappedPerStreamButDrained) {
  ProcessOptions opts;
  opts.max_output = 1000;
  auto r = run_process(
      {"sh", "-c", "head -c 300000 /dev/zero; head -c 200000 /dev/zero >&2; echo ok >&2; exit 4"},
      opts);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->exit_code, 4);
  EXPECT_EQ(r->out.size(), 1000u);
  EXPECT_EQ(r->err.size(), 1000u);
}

TEST(RunProcess, LargeOutputOnBothStreamsDoesNotDeadlock) {
  auto r = run_process({"sh", "-c",
                        "i=0; while [ $i -lt 2000 ]; do echo line-$i; echo err-$i >&2; "
                        "i=$((i+1)); done"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_NE(r->out.find("line-1999\n"), std::string::npos);
  EXPECT_NE(r->err.find("err-1999\n"), std::string::npos);
}

TEST(RunProcess, MissingProgramIsAnErrorNamingIt) {
  auto r = run_process({"dlenv-no-such-program-xyz", "--version"});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("dlenv-no-such-program-xyz"), std::string::npos);
  EXPECT_NE(r.error().message.find("not found on PATH"), std::string::npos) << r.error().message;

  auto abs = run_process({"/nonexistent/dlenv-prog"});
  ASSERT_FALSE(abs);
  EXPECT_NE(abs.error().message.find("/nonexistent/dlenv-prog"), std::string::npos);
  EXPECT_NE(abs.error().message.find(std::strerror(ENOENT)), std::string::npos);

  auto not_exec = run_process({"/etc/hostname"});
  EXPECT_FALSE(not_exec);

  EXPECT_FALSE(run_process({}));
  expect_no_children();
}

}  // namespace
}  // namespace dlenv
