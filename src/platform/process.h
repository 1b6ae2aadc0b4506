// Run a subprocess with a timeout, capturing stdout and stderr. Never hangs:
// on timeout the whole process group is killed.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace dlenv {

struct ProcessResult {
  int exit_code = -1;   // -1 when killed by a signal or timed out
  int term_signal = 0;  // signal number when killed by one
  bool timed_out = false;
  std::string out;
  std::string err;
  double wall_ms = 0;
  // The child's peak resident memory when it was reaped normally (POSIX: wait4's
  // ru_maxrss); 0 where unknown (timed out, Windows).
  uint64_t peak_rss_bytes = 0;
};

// A child's standard input that the parent writes while the child runs (a request stream):
// one end becomes the child's stdin in run_process, the other stays here. Writes from any
// thread; a child that is gone makes write() return false (no SIGPIPE). close() is the
// child's end of file.
class ChildInput {
 public:
  static Result<std::shared_ptr<ChildInput>> open();
  ~ChildInput();
  ChildInput(const ChildInput&) = delete;
  ChildInput& operator=(const ChildInput&) = delete;

  bool write(std::string_view bytes);
  void close();
  // For run_process: the end the child reads (an fd, or a HANDLE on Windows), and the call
  // that drops the parent's copy of it once the child has its own.
  intptr_t child_end() const { return child_end_; }
  void release_child_end();

 private:
  ChildInput() = default;
  std::mutex mutex_;
  intptr_t child_end_ = -1;
  intptr_t parent_end_ = -1;
};

struct ProcessOptions {
  std::chrono::milliseconds timeout{10000};
  // When set, the child's complete environment; otherwise it inherits ours.
  std::optional<std::map<std::string, std::string>> env;
  size_t max_output = 8u << 20;  // per stream; the rest is discarded
  // When set, stdout is handed here piece by piece as it arrives (in order, from one
  // thread at a time) instead of being kept in ProcessResult::out, so output of any
  // size streams in bounded memory. Returning false stops reading: the process (its
  // group / job) is killed.
  std::function<bool(std::string_view)> on_stdout;
  // When set, the child's standard input (else /dev/null, NUL on Windows).
  std::shared_ptr<ChildInput> input;
};

// argv[0] is looked up on PATH when it has no '/'. Fails (naming argv[0]) when
// the program cannot be started; a non-zero exit is a successful run.
Result<ProcessResult> run_process(const std::vector<std::string>& argv,
                                  const ProcessOptions& options = {});

}  // namespace dlenv
