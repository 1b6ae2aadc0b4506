#include "probe/nvml_health.h"

#include <type_traits>

#include "platform/dynamic_library.h"

namespace dlenv {

namespace {
struct nvmlDevice_st;
using NvmlDevice = nvmlDevice_st*;
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlNotSupported = 3;
constexpr int kNvmlInsufficientSize = 7;
constexpr int kEccCorrected = 0, kEccUncorrected = 1;  // nvmlMemoryErrorType_t
constexpr int kVolatileEcc = 0;                        // nvmlEccCounterType_t
}  // namespace

struct NvmlHealthReader::Impl {
  DynamicLibrary lib;
  std::string path;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*by_bus)(const char*, NvmlDevice*) = nullptr;
  int (*by_index)(unsigned, NvmlDevice*) = nullptr;
  int (*compute_mode)(NvmlDevice, int*) = nullptr;
  int (*processes)(NvmlDevice, unsigned*, void*) = nullptr;
  int (*ecc_mode)(NvmlDevice, int*, int*) = nullptr;
  int (*ecc_total)(NvmlDevice, int, int, unsigned long long*) = nullptr;
  int (*remapped)(NvmlDevice, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;

  NvmlGpuHealth read(NvmlDevice d, std::string bus) const {
    NvmlGpuHealth h;
    h.pci_bus_id = std::move(bus);
    int mode = 0;
    if (compute_mode && compute_mode(d, &mode) == kNvmlSuccess) {
      // nvmlComputeMode_t: 0 default, 1 exclusive-thread (gone since CUDA 8), 2 prohibited,
      // 3 exclusive-process.
      h.compute_mode = mode == 0   ? "default"
                       : mode == 2 ? "prohibited"
                       : mode == 3 ? "exclusive-process"
                                   : "exclusive-thread";
    }
    if (processes) {
      unsigned count = 0;
      int r = processes(d, &count, nullptr);  // count only: no struct layout needed
      if (r == kNvmlSuccess || r == kNvmlInsufficientSize) h.compute_processes = int(count);
    }
    if (ecc_mode) {
      int current = 0, pending = 0;
      int r = ecc_mode(d, &current, &pending);
      if (r == kNvmlSuccess) h.ecc_enabled = current != 0;
      if (r == kNvmlNotSupported) h.ecc_enabled = false;
    }
    if (ecc_total && h.ecc_enabled.value_or(false)) {
      unsigned long long n = 0;
      if (ecc_total(d, kEccUncorrected, kVolatileEcc, &n) == kNvmlSuccess) {
        h.ecc_uncorrected_volatile = n;
      }
      if (ecc_total(d, kEccCorrected, kVolatileEcc, &n) == kNvmlSuccess) {
        h.ecc_corrected_volatile = n;
      }
    }
    if (remapped) {
      unsigned corr = 0, unc = 0, pending = 0, failed = 0;
      if (remapped(d, &corr, &unc, &pending, &failed) == kNvmlSuccess) {
        h.remap_pending = pending != 0;
        h.remap_failed = failed != 0;
      }
    }
    return h;
  }
};

NvmlHealthReader::NvmlHealthReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

NvmlHealthReader::~NvmlHealthReader() {
  if (impl_ && impl_->shutdown) impl_->shutdown();
}

Result<std::unique_ptr<NvmlHealthReader>> NvmlHealthReader::open(
    const std::vector<std::string>& candidates) {
  auto impl = std::make_unique<Impl>();
  void* p[9] = {};
  const SymbolSpec specs[] = {
      {"nvmlInit", &p[0], true, 2},
      {"nvmlShutdown", &p[1], true, 0},
      {"nvmlDeviceGetHandleByPciBusId", &p[2], false, 2},
      {"nvmlDeviceGetHandleByIndex", &p[3], true, 2},
      {"nvmlDeviceGetComputeMode", &p[4], false, 0},
      {"nvmlDeviceGetComputeRunningProcesses", &p[5], false, 3},
      {"nvmlDeviceGetEccMode", &p[6], false, 0},
      {"nvmlDeviceGetTotalEccErrors", &p[7], false, 0},
      {"nvmlDeviceGetRemappedRows", &p[8], false, 0},
  };
  // A library whose nvmlInit fails is passed over for the next candidate.
  auto initialised = [&](const DynamicLibrary& lib) -> std::string {
    if (int r = reinterpret_cast<decltype(impl->init)>(p[0])(); r != kNvmlSuccess) {
      return lib.loaded_path() + ": nvmlInit failed (return code " + std::to_string(r) + ")";
    }
    return "";
  };
  auto lib = open_first_with_symbols(candidates, specs, initialised);
  if (!lib) return fail("NVML is not available: " + lib.error().message);
  auto as = [&](int i, auto& fn) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p[i]);
  };
  as(0, impl->init);
  as(1, impl->shutdown);
  as(2, impl->by_bus);
  as(3, impl->by_index);
  as(4, impl->compute_mode);
  as(5, impl->processes);
  as(6, impl->ecc_mode);
  as(7, impl->ecc_total);
  as(8, impl->remapped);
  impl->path = lib->lib.loaded_path();
  impl->lib = std::move(lib->lib);
  return std::unique_ptr<NvmlHealthReader>(new NvmlHealthReader(std::move(impl)));
}

std::optional<NvmlGpuHealth> NvmlHealthReader::by_pci_bus_id(const std::string& bus_id) const {
  if (!impl_->by_bus || bus_id.empty()) return std::nullopt;
  NvmlDevice d = nullptr;
  if (impl_->by_bus(bus_id.c_str(), &d) != kNvmlSuccess || !d) return std::nullopt;
  return impl_->read(d, bus_id);
}

std::optional<NvmlGpuHealth> NvmlHealthReader::by_index(int nvml_index) const {
  NvmlDevice d = nullptr;
  if (nvml_index < 0 || impl_->by_index(static_cast<unsigned>(nvml_index), &d) != kNvmlSuccess ||
      !d) {
    return std::nullopt;
  }
  return impl_->read(d, "");
}

const std::string& NvmlHealthReader::library() const {
  return impl_->path;
}

}  // namespace dlenv
