#include <signal.h>
#include <unistd.h>

#include <cstdlib>

#include "cli/kill_point.h"

namespace dlenv {

void kill_this_process() {
  ::kill(::getpid(), SIGKILL);
  std::_Exit(137);  // not reached
}

}  // namespace dlenv
