// See safe_output.h: on Windows the standard streams are std::cout and std::cerr, and a
// write error is read from their state.
#include <iostream>

#include "cli/cli.h"
#include "cli/safe_output.h"

namespace dlenv {

void protect_standard_fds() {}

std::ostream& standard_out() {
  return std::cout;
}

std::ostream& standard_err() {
  return std::cerr;
}

int finish_output(int code) {
  std::cout.flush();
  std::cerr.flush();
  if (std::cout && std::cerr) return code;
  if (!std::cout && std::cerr) {
    std::cerr << "dlenv: error writing to stdout; the output is incomplete\n";
    std::cerr.flush();
  }
  return kExitToolFailed;
}

}  // namespace dlenv
