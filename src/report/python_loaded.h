// The loaded-vs-installed view of a --deep run: for each main CUDA library the
// framework process really mapped (Linux .so names from /proc/self/maps, Windows DLL
// names from the module list, matched case-insensitively with either separator), where
// that file came from, the copies installed in the environment (pip wheels, torch\lib
// on Windows) and on the system (cuDNN copies, toolkits), and whether the loaded one is
// older than another installed copy of the same major or a sub-library came from
// another folder than its main library.
#pragma once

#include <string>
#include <vector>

#include "probe/facts.h"

namespace dlenv {

struct LoadedLibraryView {
  std::string name;     // "libcudnn.so.9"; on Windows the DLL's name as loaded ("cudnn64_9.dll")
  std::string loaded;   // the mapped file, as the process reported it
  std::string version;  // its version where known ("9.1.0"); "" unknown
  // Where it came from: "pip wheel: nvidia-cudnn-cu12 9.1.0.70 in C:\venv\Lib\site-packages",
  // "CUDA toolkit: ...\CUDA\v12.4 (CUDA 12.4)", "driver: C:\Windows\System32", "conda env:
  // ...", "system: DIR", "other: DIR"; "" when the run was not classified.
  std::string origin;
  std::vector<std::string> installed;  // "PATH (package VERSION)" / "PATH (VERSION)"
  // "older than the 9.19.0.56 at PATH"; "cudnn_ops64_9.dll came from DIR, not from beside
  // it"; "" when there is nothing to say. Several are joined with "; ".
  std::string warning;
};

// Empty when --deep did not run or mapped no main CUDA library.
std::vector<LoadedLibraryView> loaded_vs_installed(const Facts& f, const PythonEnv& e);

}  // namespace dlenv
