// The live probes that failed in their child process: a corrupt library file, a crash.
#include <algorithm>

#include "probe/live_isolation.h"
#include "rules/rule_helpers.h"
#include "util/strings.h"

namespace dlenv {
namespace checks {

using namespace rule_helpers;

// Live probes whose child crashed, hung or answered garbage, and libraries the pre-check
// refused (probe/live_isolation.h): the broken file when one is found, else the crash.
void live_probe_failures(const Ctx& c, Findings& out) {
  for (const auto& x : c.f.live_failures) {
    const std::string text = describe_live_failure(x);
    const std::string source = x.probe == kLdLibraryPathCheck
                                   ? "ELF check of the NVIDIA libraries on LD_LIBRARY_PATH"
                               : x.failure.empty() ? "ELF/PE pre-check before loading"
                                                   : "live " + x.probe + " probe process";
    if (!x.file_problem.empty()) {
      const std::string& file = x.problem_path.empty() ? x.library : x.problem_path;
      Finding f = make_finding(
          FindingId::library_file_corrupt, Severity::error,
          file +
              " is truncated, corrupt or not a library: loading it fails or crashes the process");
      f.evidence.push_back(ev(text, source));
      f.fix.push_back(
          step("reinstall the package (or copy again the file) it came from; see which "
               "package owns it",
               "dpkg -S " + shell_quote(file) + " || rpm -qf " + shell_quote(file)));
      f.fix.push_back(step("compare its size with the original, then replace it",
                           "ls -l " + shell_quote(file)));
      out.push_back(std::move(f));
      continue;
    }
    Finding f = make_finding(FindingId::live_probe_crashed, Severity::warning,
                             "Loading " + x.library + " " + x.failure);
    f.evidence.push_back(ev(text, source));
    f.fix.push_back(step("load it alone to see the failure (dlenv loads it in a child process)",
                         "dlenv load " + shell_quote(x.path.empty() ? x.library : x.path)));
    out.push_back(std::move(f));
  }
}

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check live_probe_failures_entry{
    "live_probe_failures",
    "live probes that failed in their child",
    live_probe_failures,
    {FindingId::library_file_corrupt, FindingId::live_probe_crashed},
    fact_area::live_failures};

}  // namespace checks
}  // namespace dlenv
