// The kill-point testing hook of the writing commands (cudnn install, uninstall,
// recover; env --persist): with DLENV_KILL_AT=N in the process environment the
// process kills itself (SIGKILL on Linux, TerminateProcess on Windows: no clean-up
// runs) at its N-th mutating file-system call, after half of a write or journal
// append, so tests can check that `dlenv cudnn recover` then leaves exactly the
// state before or after (docs/install-transactions.md).
#pragma once

#include <memory>
#include <string>

#include "actions/file_writer.h"

namespace dlenv {

// make_file_writer(root), wrapped in the hook when DLENV_KILL_AT is set.
std::unique_ptr<FileWriter> make_cli_file_writer(const std::string& root);

// Ends this process at once, as `kill -9` would (kill_point_posix.cc / _win32.cc).
[[noreturn]] void kill_this_process();

}  // namespace dlenv
