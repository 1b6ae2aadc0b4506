// NVML health of one GPU, for `dlenv verify`'s before/after checks: compute mode,
// processes holding a compute context, ECC mode and volatile error counts, row
// remapping. Loads libnvidia-ml at run time; one nvmlInit for the reader's life.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace dlenv {

struct NvmlGpuHealth {
  std::string pci_bus_id;                // as NVML prints it
  std::string compute_mode;              // "default" / "exclusive-process" / "prohibited"
  std::optional<int> compute_processes;  // nvmlDeviceGetComputeRunningProcesses
  std::optional<bool> ecc_enabled;       // current mode; false when not supported
  std::optional<uint64_t> ecc_uncorrected_volatile;  // nvmlDeviceGetTotalEccErrors
  std::optional<uint64_t> ecc_corrected_volatile;
  std::optional<bool> remap_pending;  // nvmlDeviceGetRemappedRows (Ampere and newer)
  std::optional<bool> remap_failed;
};

class NvmlHealthReader {
 public:
  // Loads the first candidate with the required symbols and calls nvmlInit_v2.
  static Result<std::unique_ptr<NvmlHealthReader>> open(const std::vector<std::string>& candidates);
  ~NvmlHealthReader();  // nvmlShutdown
  NvmlHealthReader(const NvmlHealthReader&) = delete;
  NvmlHealthReader& operator=(const NvmlHealthReader&) = delete;

  // By PCI bus id ("0000:3B:00.0" as CUDA prints it, or NVML's 8-digit domain form);
  // nullopt when NVML does not know that GPU.
  std::optional<NvmlGpuHealth> by_pci_bus_id(const std::string& bus_id) const;
  std::optional<NvmlGpuHealth> by_index(int nvml_index) const;
  const std::string& library() const;

  struct Impl;

 private:
  explicit NvmlHealthReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace dlenv
