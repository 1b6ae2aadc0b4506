// Live NVML probe: loads libnvidia-ml at run time (no NVIDIA headers or libraries
// at build time), calls nvmlInit and reads the driver version and every GPU.
#pragma once

#include <string>
#include <vector>

#include "probe/facts.h"

namespace dlenv {

struct NvmlSnapshot {
  // The libnvidia-ml file the loader really mapped. not-found (reason: every
  // candidate with the loader's message) when none could be loaded; error when
  // one loaded but lacks a required symbol (the reason names the symbols).
  Fact<std::string> library;
  Fact<std::string> driver_version;  // nvmlSystemGetDriverVersion, e.g. "580.95.05"
  Fact<int> cuda_driver_version;     // nvmlSystemGetCudaDriverVersion_v2, e.g. 13000
  Fact<int> device_count;            // nvmlDeviceGetCount_v2
  std::vector<GpuFacts> gpus;
  // Has a value only when the library loaded and nvmlInit failed: nvmlErrorString's
  // text with the return code, e.g. "Driver/library version mismatch (return code 18,
  // NVML_ERROR_LIB_RM_VERSION_MISMATCH)". Otherwise the reason says why there is none.
  Fact<std::string> init_error;
  int init_return = 0;  // nvmlInit's return code (0 when it succeeded or was not called)
  // Exact names that bound ("nvmlInit_v2", "nvmlDeviceGetPciInfo_v3", ...).
  std::vector<std::string> bound_symbols;
  double init_ms = 0;   // load + bind + nvmlInit
  double query_ms = 0;  // every query after nvmlInit, and nvmlShutdown
};

// "libnvidia-ml.so.1", "libnvidia-ml.so" (nvml.dll on Windows).
std::vector<std::string> default_nvml_candidates();

// Tries each candidate (a name for the loader or a path) in order and uses the first
// that loads and has every required symbol. Never throws, prints or exits.
NvmlSnapshot probe_nvml(const std::vector<std::string>& candidates);

}  // namespace dlenv
