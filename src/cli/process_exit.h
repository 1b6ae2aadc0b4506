// Teardown a CLI process can leave to the kernel. `dlenv deps` maps hundreds of MB of
// libraries and runs a thread per core; unmapping and joining them costs 1-3 ms on the
// H200 VM, a third of what `ldd` takes in all. main() opts in and, when a command kept
// something, exits with std::_Exit right after flushing its output; tests (which call
// cli_main in-process) do not opt in, so everything is released as usual there.
#pragma once

#include <memory>

namespace dlenv {

// main() calls it once, before cli_main.
void enable_exit_without_teardown();
// Keeps `resources` alive until the process exits when enabled (and says so to main);
// otherwise releases them now.
void keep_until_exit(std::shared_ptr<void> resources);
// Whether something was kept: main should flush and std::_Exit instead of returning.
bool exit_without_teardown();

}  // namespace dlenv
