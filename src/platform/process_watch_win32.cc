// run_and_watch on Windows: not implemented yet (dlenv which -- CMD is Linux-only;
// a Windows version would enumerate the child's modules with
// CreateToolhelp32Snapshot(TH32CS_SNAPMODULE) on each tick).
#include "platform/process_watch.h"

namespace dlenv {

Result<WatchResult> run_and_watch(const std::vector<std::string>& argv, std::chrono::milliseconds,
                                  std::chrono::milliseconds, const std::function<void(int)>&) {
  return fail((argv.empty() ? std::string("run_and_watch") : argv[0]) +
              ": watching a command's loaded modules is not implemented on Windows yet");
}

}  // namespace dlenv
