#include "cli/self_exe.h"

namespace dlenv {

std::string self_executable() {
  return "/proc/self/exe";
}

}  // namespace dlenv
