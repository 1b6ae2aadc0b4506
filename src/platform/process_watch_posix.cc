// run_and_watch on POSIX: posix_spawnp into a new process group, waitpid(WNOHANG)
// polling with a tick callback, SIGKILL of the group on timeout.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "platform/process_watch.h"

extern "C" char** environ;

namespace dlenv {

Result<WatchResult> run_and_watch(const std::vector<std::string>& argv,
                                  std::chrono::milliseconds interval,
                                  std::chrono::milliseconds timeout,
                                  const std::function<void(int pid)>& on_tick) {
  using Clock = std::chrono::steady_clock;
  if (argv.empty()) return fail("run_and_watch: no command given");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = -1;
  const auto start = Clock::now();
  const int rc = posix_spawnp(&pid, args[0], &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return fail(argv[0] + ": cannot start: " + std::strerror(rc));
  WatchResult r;
  int status = 0;
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) {
      return fail(argv[0] + ": waitpid failed: " + std::strerror(errno));
    }
    if (on_tick) on_tick(static_cast<int>(pid));
    ++r.ticks;
    if (Clock::now() - start > timeout) {
      r.timed_out = true;
      ::kill(-pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    std::this_thread::sleep_for(interval);
  }
  r.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (WIFEXITED(status) && !r.timed_out) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.term_signal = WTERMSIG(status);
  return r;
}

}  // namespace dlenv
