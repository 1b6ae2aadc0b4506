// The path of the running dlenv executable, for running dlenv itself in a child
// process (the real load of `cudnn install`'s verification: `cudnn load-check`).
#pragma once

#include <string>

namespace dlenv {

// "/proc/self/exe" on Linux (the kernel resolves it, even when the file was
// renamed); GetModuleFileNameW on Windows.
std::string self_executable();

}  // namespace dlenv
