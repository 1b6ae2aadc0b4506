// Module lists on Linux: not through this interface. `dlenv which` reads
// /proc/PID/maps through the FileSystem (probe/process_maps.h), which also
// works under --root; these say so if called.
#include "platform/process_modules.h"

namespace dlenv {
namespace {

std::string not_here(const std::string& what) {
  return what +
         ": Windows module lists are not read on this system (on Linux dlenv which reads "
         "/proc/PID/maps)";
}

}  // namespace

bool native_process_modules() {
  return false;
}

Result<ProcessModules> process_modules(int pid) {
  return fail(not_here("process " + std::to_string(pid)));
}

Result<ModuleScan> all_process_modules() {
  return fail(not_here("the process list"));
}

Result<TraceResult> run_and_trace_modules(const std::vector<std::string>& argv,
                                          std::chrono::milliseconds) {
  return fail(not_here(argv.empty() ? std::string("run_and_trace_modules") : argv[0]));
}

}  // namespace dlenv
