// Run a command and look at it while it runs: `dlenv which -- CMD` reads the
// child's /proc/PID/maps on every tick until it exits.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "util/result.h"

namespace dlenv {

struct WatchResult {
  int exit_code = -1;   // -1 when killed by a signal or timed out
  int term_signal = 0;  // signal number when killed by one
  bool timed_out = false;
  double wall_ms = 0;
  int ticks = 0;  // how many times on_tick ran
};

// Starts argv (looked up on PATH when it has no '/') in its own process group,
// stdin and stderr inherited and its stdout sent to our stderr (so our own
// output stays clean), and calls on_tick(pid) at once and then every
// `interval` until the child exits; after `timeout` the group is killed.
// Fails (naming argv[0]) when the program cannot be started.
Result<WatchResult> run_and_watch(const std::vector<std::string>& argv,
                                  std::chrono::milliseconds interval,
                                  std::chrono::milliseconds timeout,
                                  const std::function<void(int pid)>& on_tick);

}  // namespace dlenv
