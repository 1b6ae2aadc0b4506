// CUDA's own environment variables that change how every CUDA program runs, set where the
// program starts: CUDA_LAUNCH_BLOCKING=1 (synchronous kernel launches, a debugging aid).
#include "rules/checks.h"
#include "rules/rule_helpers.h"
#include "rules/windows_common.h"
#include "util/strings.h"

namespace dlenv::checks {

using namespace rule_helpers;

void launch_blocking(const Ctx& c, Findings& out) {
  const auto it = c.f.env.vars.find("CUDA_LAUNCH_BLOCKING");
  if (it == c.f.env.vars.end() || trim(it->second) != "1") return;
  Finding x = make_finding(FindingId::cuda_launch_blocking_set, Severity::warning,
                           "CUDA_LAUNCH_BLOCKING=1 is set: every CUDA kernel launch waits for the "
                           "GPU to finish, so programs started here run far slower",
                           "CUDA_LAUNCH_BLOCKING");
  x.evidence.push_back(ev("CUDA_LAUNCH_BLOCKING=\"" + it->second + "\"", c.f.env.source));
  if (c.os == Os::windows) {
    x.fix.push_back(windows_common::ps("unset it in this shell (it is a debugging aid only)",
                                       "Remove-Item Env:CUDA_LAUNCH_BLOCKING"));
    x.fix.push_back(windows_common::ps(
        "and where it was set for good (user variables; an IDE run configuration sets its own)",
        "[Environment]::SetEnvironmentVariable('CUDA_LAUNCH_BLOCKING', $null, 'User')"));
  } else {
    x.fix.push_back(
        step("unset it in this shell (it is a debugging aid only)", "unset CUDA_LAUNCH_BLOCKING"));
    x.fix.push_back(step(
        "and remove the line that sets it (a shell profile, /etc/environment, a Dockerfile ENV "
        "or an IDE run configuration)",
        "grep -n CUDA_LAUNCH_BLOCKING ~/.bashrc ~/.profile ~/.zshrc /etc/environment 2>/dev/null"));
  }
  out.push_back(std::move(x));
}

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check launch_blocking_entry{"launch_blocking",
                                         "CUDA_LAUNCH_BLOCKING=1 left set after debugging",
                                         launch_blocking,
                                         {FindingId::cuda_launch_blocking_set},
                                         fact_area::env};

}  // namespace dlenv::checks
