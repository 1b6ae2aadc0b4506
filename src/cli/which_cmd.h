// `dlenv which`: the NVIDIA/CUDA libraries a live process has mapped.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace dlenv {

struct WhichOptions {
  int pid = 0;                       // --pid N
  std::string holding;               // --holding NAME
  std::vector<std::string> command;  // -- CMD ARGS...
  bool json = false;
  std::string root;     // --root DIR: /proc is read under DIR (not for -- CMD)
  int timeout_s = 120;  // -- CMD: killed after this long
  int interval_ms = 2;  // -- CMD: how often its maps are read
};

// Exit: 0 done, 2 usage error (none or several of --pid/--holding/CMD; no such
// process), 3 the command could not be started.
int run_which(const WhichOptions& options, std::ostream& out, std::ostream& err);

}  // namespace dlenv
