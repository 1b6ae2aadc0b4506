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
  // libnvidia-ml for the health checks (ECC, compute mode); empty: the default names.
  std::vector<std::string> nvml_candidates;
};

int run_verify_command(const VerifyCliOptions& o, std::ostream& out, std::ostream& err);

}  // namespace dlenv
