// Live CUDA driver probe: loads libcuda at run time and calls cuDriverGetVersion
// only (no cuInit, so no GPU is touched and no context is created).
#pragma once

#include <string>
#include <vector>

#include "probe/facts.h"

namespace dlenv {

struct CudaDriverSnapshot {
  // The libcuda file the loader really mapped. not-found (reason: every candidate with
  // the loader's message) when none could be loaded; error when one loaded but does not
  // export cuDriverGetVersion.
  Fact<std::string> library;
  Fact<int> version;  // cuDriverGetVersion: 13000 = 13.0
  // The toolkit's link-time stub (lib64/stubs/libcuda.so) was loaded instead of the
  // driver's libcuda: cuDriverGetVersion returned CUDA_ERROR_STUB_LIBRARY (34), or the
  // file lives in a "stubs" directory.
  bool stub = false;
  // Has a value only when a libcuda loaded and something is wrong with it
  // (cuDriverGetVersion failed, or it is the stub). Otherwise the reason says why not.
  Fact<std::string> error;
  int result = 0;  // cuDriverGetVersion's CUresult (0 when it succeeded or was not called)
};

// "libcuda.so.1", "libcuda.so" (nvcuda.dll on Windows).
std::vector<std::string> default_cuda_driver_candidates();

// Tries each candidate (a name for the loader or a path) in order and uses the first
// that loads and exports cuDriverGetVersion. Never throws, prints or exits.
CudaDriverSnapshot probe_cuda_driver(const std::vector<std::string>& candidates);

}  // namespace dlenv
