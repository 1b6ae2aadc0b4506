// `dlenv verify`: the CLI side (library choice, output, exit code).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace dlenv {

struct VerifyCliOptions {
  std::string libs = "auto";  // auto | toolkit | python[:INTERPRETER] | DIR
  std::string device = "all";
  bool full = false;
  bool json = false;
  bool no_cudnn = false;
  bool progress = false;  // show the step being run on stderr (a terminal)
  std::string kb_dir;
  // The GPU work runs in a child (dlenv itself, `verify --child-protocol`) so that a crash
  // or a hang in the CUDA libraries is reported instead of ending dlenv. --in-process runs
  // it here; the child is one (with --child-protocol: its output is the protocol).
  bool in_process = false;
  bool child_protocol = false;
  double timeout_s = 0;  // the child's limit; 0: 600 s, --full 3600 s
  // libnvidia-ml for the health checks (ECC, compute mode); empty: the default names.
  std::vector<std::string> nvml_candidates;
};

int run_verify_command(const VerifyCliOptions& o, std::ostream& out, std::ostream& err);

}  // namespace dlenv
