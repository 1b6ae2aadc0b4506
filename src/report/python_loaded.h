// The loaded-vs-installed view of a --deep run: for each main CUDA library the
// framework process really mapped, the copies installed in the environment (pip
// wheels) and on the system (cuDNN copies, toolkits), and whether the loaded one is
// older than another installed copy of the same major.
#pragma once

#include <string>
#include <vector>

#include "probe/facts.h"

namespace dlenv {

struct LoadedLibraryView {
  std::string name;                    // "libcudnn.so.9"
  std::string loaded;                  // the mapped file
  std::string version;                 // its version where known ("9.1.0"); "" unknown
  std::vector<std::string> installed;  // "PATH (package VERSION)" / "PATH (VERSION)"
  std::string warning;                 // "older than 9.19.0.56 at PATH"; "" when it is the newest
};

// Empty when --deep did not run or mapped no main CUDA library.
std::vector<LoadedLibraryView> loaded_vs_installed(const Facts& f, const PythonEnv& e);

}  // namespace dlenv
