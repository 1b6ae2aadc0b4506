// make_process_env on POSIX: environ, read once.
#include <unistd.h>

#include <string_view>

#include "platform/env.h"

extern "C" char** environ;

namespace dlenv {

std::unique_ptr<Env> make_process_env() {
  std::map<std::string, std::string> vars;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    // getenv() returns the first match, so the first occurrence wins here too.
    vars.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return make_map_env(std::move(vars));
}

}  // namespace dlenv
