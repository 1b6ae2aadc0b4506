#include "probe/nvml.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "platform/dynamic_library.h"
#include "util/strings.h"

namespace dlenv {

namespace {

// --- The few NVML types we need, as in NVIDIA's nvml.h ------------------------

struct nvmlDevice_st;
using NvmlDevice = nvmlDevice_st*;  // typedef struct nvmlDevice_st* nvmlDevice_t;
using NvmlReturn = int;             // nvmlReturn_t (a C enum)

// nvmlPciInfo_t (filled by nvmlDeviceGetPciInfo_v3).
struct NvmlPciInfo {
  char busIdLegacy[16];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE
};
static_assert(sizeof(NvmlPciInfo) == 68);

// nvmlMemory_t (v1, filled by nvmlDeviceGetMemoryInfo).
struct NvmlMemory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
static_assert(sizeof(NvmlMemory) == 24);

// nvmlReturn_t values.
constexpr NvmlReturn kSuccess = 0;
constexpr NvmlReturn kErrorNotSupported = 3;
constexpr NvmlReturn kErrorNoPermission = 4;
constexpr NvmlReturn kErrorNotFound = 6;
constexpr NvmlReturn kErrorTimeout = 10;

// Buffer sizes from nvml.h.
constexpr unsigned kDriverVersionBufferSize = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
constexpr unsigned kNameBufferSize = 96;           // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kUuidBufferSize = 96;           // NVML_DEVICE_UUID_V2_BUFFER_SIZE

// More than this many GPUs means the library answered garbage.
constexpr unsigned kMaxDevices = 4096;

// nvmlEnableState_t
constexpr int kFeatureEnabled = 1;  // NVML_FEATURE_ENABLED (DISABLED = 0)
// MIG modes (nvmlDeviceGetMigMode)
constexpr unsigned kMigDisable = 0;  // NVML_DEVICE_MIG_DISABLE
constexpr unsigned kMigEnable = 1;   // NVML_DEVICE_MIG_ENABLE

using InitFn = NvmlReturn (*)();
using ShutdownFn = NvmlReturn (*)();
using ErrorStringFn = const char* (*)(NvmlReturn);
using DriverVersionFn = NvmlReturn (*)(char*, unsigned int);
using CudaDriverVersionFn = NvmlReturn (*)(int*);
using CountFn = NvmlReturn (*)(unsigned int*);
using HandleByIndexFn = NvmlReturn (*)(unsigned int, NvmlDevice*);
using StringQueryFn = NvmlReturn (*)(NvmlDevice, char*, unsigned int);
using PciInfoFn = NvmlReturn (*)(NvmlDevice, NvmlPciInfo*);
using ComputeCapabilityFn = NvmlReturn (*)(NvmlDevice, int*, int*);
using MemoryInfoFn = NvmlReturn (*)(NvmlDevice, NvmlMemory*);
using EnableStateFn = NvmlReturn (*)(NvmlDevice, int*);  // nvmlEnableState_t*
using MigModeFn = NvmlReturn (*)(NvmlDevice, unsigned int*, unsigned int*);
using ComputeModeFn = NvmlReturn (*)(NvmlDevice, int*);        // nvmlComputeMode_t*
using DriverModelFn = NvmlReturn (*)(NvmlDevice, int*, int*);  // nvmlDriverModel_t*

template <class Fn>
Fn as(void* p) {
  return reinterpret_cast<Fn>(p);
}

struct NvmlApi {
  void* init = nullptr;
  void* shutdown = nullptr;
  void* error_string = nullptr;
  void* driver_version = nullptr;
  void* cuda_driver_version = nullptr;
  void* count = nullptr;
  void* handle_by_index = nullptr;
  void* name = nullptr;
  void* uuid = nullptr;
  void* pci_info = nullptr;
  void* compute_capability = nullptr;
  void* memory_info = nullptr;
  void* persistence_mode = nullptr;
  void* mig_mode = nullptr;
  void* compute_mode = nullptr;
  void* driver_model = nullptr;
};

std::vector<SymbolSpec> nvml_specs(NvmlApi& api) {
  return {
      {"nvmlInit", &api.init, true, 2},
      {"nvmlShutdown", &api.shutdown, true, 0},
      {"nvmlErrorString", &api.error_string, true, 0},
      {"nvmlSystemGetDriverVersion", &api.driver_version, true, 0},
      {"nvmlSystemGetCudaDriverVersion", &api.cuda_driver_version, false, 2},
      {"nvmlDeviceGetCount", &api.count, true, 2},
      {"nvmlDeviceGetHandleByIndex", &api.handle_by_index, true, 2},
      {"nvmlDeviceGetName", &api.name, false, 0},
      {"nvmlDeviceGetUUID", &api.uuid, false, 0},
      {"nvmlDeviceGetPciInfo", &api.pci_info, false, 3},
      {"nvmlDeviceGetCudaComputeCapability", &api.compute_capability, false, 0},
      {"nvmlDeviceGetMemoryInfo", &api.memory_info, false, 0},
      {"nvmlDeviceGetPersistenceMode", &api.persistence_mode, false, 0},
      {"nvmlDeviceGetMigMode", &api.mig_mode, false, 0},
      {"nvmlDeviceGetComputeMode", &api.compute_mode, false, 0},
      {"nvmlDeviceGetDriverModel", &api.driver_model, false, 2},
  };
}

const char* nvml_return_name(NvmlReturn r) {
  switch (r) {
    case 0: return "NVML_SUCCESS";
    case 1: return "NVML_ERROR_UNINITIALIZED";
    case 2: return "NVML_ERROR_INVALID_ARGUMENT";
    case 3: return "NVML_ERROR_NOT_SUPPORTED";
    case 4: return "NVML_ERROR_NO_PERMISSION";
    case 5: return "NVML_ERROR_ALREADY_INITIALIZED";
    case 6: return "NVML_ERROR_NOT_FOUND";
    case 7: return "NVML_ERROR_INSUFFICIENT_SIZE";
    case 8: return "NVML_ERROR_INSUFFICIENT_POWER";
    case 9: return "NVML_ERROR_DRIVER_NOT_LOADED";
    case 10: return "NVML_ERROR_TIMEOUT";
    case 11: return "NVML_ERROR_IRQ_ISSUE";
    case 12: return "NVML_ERROR_LIBRARY_NOT_FOUND";
    case 13: return "NVML_ERROR_FUNCTION_NOT_FOUND";
    case 14: return "NVML_ERROR_CORRUPTED_INFOROM";
    case 15: return "NVML_ERROR_GPU_IS_LOST";
    case 16: return "NVML_ERROR_RESET_REQUIRED";
    case 17: return "NVML_ERROR_OPERATING_SYSTEM";
    case 18: return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
    case 19: return "NVML_ERROR_IN_USE";
    case 20: return "NVML_ERROR_MEMORY";
    case 21: return "NVML_ERROR_NO_DATA";
    case 999: return "NVML_ERROR_UNKNOWN";
    default: return nullptr;
  }
}

// Fallback texts when nvmlErrorString gives nothing.
const char* nvml_default_text(NvmlReturn r) {
  switch (r) {
    case 1: return "Uninitialized";
    case 3: return "Not Supported";
    case 4: return "Insufficient Permissions";
    case 9: return "Driver Not Loaded";
    case 10: return "Timeout";
    case 12: return "NVML Shared Library Not Found";
    case 15: return "GPU is lost";
    case 17: return "The operating system has blocked the request";
    case 18: return "Driver/library version mismatch";
    default: return "Unknown Error";
  }
}

FactStatus status_for(NvmlReturn r) {
  switch (r) {
    case kErrorNotSupported: return FactStatus::not_supported;
    case kErrorNoPermission: return FactStatus::permission_denied;
    case kErrorNotFound: return FactStatus::not_found;
    case kErrorTimeout: return FactStatus::timed_out;
    default: return FactStatus::error;
  }
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The exact name that bound for `base` ("nvmlInit" -> "nvmlInit_v2"), or base.
std::string bound_name(const BoundSymbols& bound, std::string_view base) {
  for (const std::string& n : bound.bound_names) {
    if (n == base) return n;
    if (n.size() > base.size() + 2 && starts_with(n, base) &&
        std::string_view(n).substr(base.size(), 2) == "_v") {
      return n;
    }
  }
  return std::string(base);
}

std::string c_string(const char* buf, size_t cap) {
  size_t n = 0;
  while (n < cap && buf[n] != '\0') ++n;
  return std::string(buf, n);
}

class Probe {
 public:
  Probe(const NvmlApi& api, const BoundSymbols& bound, std::string path)
      : api_(api), bound_(bound), path_(std::move(path)) {}

  std::string source(std::string_view base) const {
    return "NVML " + bound_name(bound_, base) + " (" + path_ + ")";
  }

  std::string error_text(NvmlReturn r) const {
    std::string text;
    if (api_.error_string) {
      if (const char* s = as<ErrorStringFn>(api_.error_string)(r)) text = s;
    }
    if (text.empty()) text = nvml_default_text(r);
    text += " (return code " + std::to_string(r);
    if (const char* name = nvml_return_name(r)) text += std::string(", ") + name;
    text += ")";
    return text;
  }

  template <class T>
  Fact<T> failed(std::string_view base, NvmlReturn r) const {
    return Fact<T>::unknown(status_for(r), bound_name(bound_, base) + " failed: " + error_text(r),
                            source(base));
  }

  template <class T>
  Fact<T> missing(std::string_view base) const {
    return Fact<T>::unknown(FactStatus::not_supported,
                            std::string(base) + " is not exported by " + path_, source(base));
  }

  GpuFacts query_gpu(unsigned index) const;

  const NvmlApi& api_;
  const BoundSymbols& bound_;
  std::string path_;
};

GpuFacts Probe::query_gpu(unsigned index) const {
  GpuFacts g;
  g.index = static_cast<int>(index);
  g.source = source("nvmlDeviceGetHandleByIndex");
  NvmlDevice dev = nullptr;
  NvmlReturn r = as<HandleByIndexFn>(api_.handle_by_index)(index, &dev);
  if (r != kSuccess) {
    auto fail_all = [&](auto& fact) {
      using F = std::remove_reference_t<decltype(fact)>;
      fact = F::unknown(status_for(r),
                        bound_name(bound_, "nvmlDeviceGetHandleByIndex") + "(" +
                            std::to_string(index) + ") failed: " + error_text(r),
                        g.source);
    };
    fail_all(g.name);
    fail_all(g.uuid);
    fail_all(g.pci_bus_id);
    fail_all(g.compute_capability);
    fail_all(g.memory_total_bytes);
    fail_all(g.persistence_mode);
    fail_all(g.mig_mode);
    fail_all(g.compute_mode);
    return g;
  }

  if (!api_.name) {
    g.name = missing<std::string>("nvmlDeviceGetName");
  } else {
    char buf[kNameBufferSize] = {};
    r = as<StringQueryFn>(api_.name)(dev, buf, kNameBufferSize);
    g.name = r == kSuccess
                 ? Fact<std::string>::known(c_string(buf, sizeof buf), source("nvmlDeviceGetName"))
                 : failed<std::string>("nvmlDeviceGetName", r);
  }

  if (!api_.uuid) {
    g.uuid = missing<std::string>("nvmlDeviceGetUUID");
  } else {
    char buf[kUuidBufferSize] = {};
    r = as<StringQueryFn>(api_.uuid)(dev, buf, kUuidBufferSize);
    g.uuid = r == kSuccess
                 ? Fact<std::string>::known(c_string(buf, sizeof buf), source("nvmlDeviceGetUUID"))
                 : failed<std::string>("nvmlDeviceGetUUID", r);
  }

  if (!api_.pci_info) {
    g.pci_bus_id = missing<std::string>("nvmlDeviceGetPciInfo");
  } else {
    NvmlPciInfo pci{};
    r = as<PciInfoFn>(api_.pci_info)(dev, &pci);
    if (r != kSuccess) {
      g.pci_bus_id = failed<std::string>("nvmlDeviceGetPciInfo", r);
    } else {
      std::string id = c_string(pci.busId, sizeof pci.busId);
      if (id.empty()) id = c_string(pci.busIdLegacy, sizeof pci.busIdLegacy);
      g.pci_bus_id = Fact<std::string>::known(id, source("nvmlDeviceGetPciInfo"));
    }
  }

  if (!api_.compute_capability) {
    g.compute_capability = missing<Version>("nvmlDeviceGetCudaComputeCapability");
  } else {
    int major = 0, minor = 0;
    r = as<ComputeCapabilityFn>(api_.compute_capability)(dev, &major, &minor);
    g.compute_capability = r == kSuccess
                               ? Fact<Version>::known(Version{major, minor},
                                                      source("nvmlDeviceGetCudaComputeCapability"))
                               : failed<Version>("nvmlDeviceGetCudaComputeCapability", r);
  }

  if (!api_.memory_info) {
    g.memory_total_bytes = missing<uint64_t>("nvmlDeviceGetMemoryInfo");
  } else {
    NvmlMemory mem{};
    r = as<MemoryInfoFn>(api_.memory_info)(dev, &mem);
    g.memory_total_bytes = r == kSuccess ? Fact<uint64_t>::known(static_cast<uint64_t>(mem.total),
                                                                 source("nvmlDeviceGetMemoryInfo"))
                                         : failed<uint64_t>("nvmlDeviceGetMemoryInfo", r);
  }

  if (!api_.persistence_mode) {
    g.persistence_mode = missing<bool>("nvmlDeviceGetPersistenceMode");
  } else {
    int state = 0;
    r = as<EnableStateFn>(api_.persistence_mode)(dev, &state);
    g.persistence_mode = r == kSuccess ? Fact<bool>::known(state == kFeatureEnabled,
                                                           source("nvmlDeviceGetPersistenceMode"))
                                       : failed<bool>("nvmlDeviceGetPersistenceMode", r);
  }

  if (!api_.mig_mode) {
    g.mig_mode = missing<std::string>("nvmlDeviceGetMigMode");
  } else {
    unsigned current = 0, pending = 0;
    r = as<MigModeFn>(api_.mig_mode)(dev, &current, &pending);
    if (r == kSuccess) {
      std::string v = current == kMigEnable    ? "enabled"
                      : current == kMigDisable ? "disabled"
                                               : "unknown (" + std::to_string(current) + ")";
      g.mig_mode = Fact<std::string>::known(std::move(v), source("nvmlDeviceGetMigMode"));
    } else if (r == kErrorNotSupported) {
      // GPUs without MIG (anything before A100/H100) answer NOT_SUPPORTED.
      g.mig_mode = Fact<std::string>::known("n/a", source("nvmlDeviceGetMigMode"));
    } else {
      g.mig_mode = failed<std::string>("nvmlDeviceGetMigMode", r);
    }
  }

  if (!api_.compute_mode) {
    g.compute_mode = missing<std::string>("nvmlDeviceGetComputeMode");
  } else {
    int mode = 0;
    r = as<ComputeModeFn>(api_.compute_mode)(dev, &mode);
    if (r == kSuccess) {
      std::string v;
      switch (mode) {  // nvmlComputeMode_t
        case 0: v = "default"; break;
        case 1: v = "exclusive-thread"; break;
        case 2: v = "prohibited"; break;
        case 3: v = "exclusive-process"; break;
        default: v = "unknown (" + std::to_string(mode) + ")"; break;
      }
      g.compute_mode = Fact<std::string>::known(std::move(v), source("nvmlDeviceGetComputeMode"));
    } else {
      g.compute_mode = failed<std::string>("nvmlDeviceGetComputeMode", r);
    }
  }

  if (!api_.driver_model) {
    g.driver_model = missing<std::string>("nvmlDeviceGetDriverModel");
  } else {
    int current = 0, pending = 0;
    r = as<DriverModelFn>(api_.driver_model)(dev, &current, &pending);
    if (r == kSuccess) {
      // nvmlDriverModel_t: 0 WDDM (display), 1 WDM = TCC (compute only), 2 MCDM.
      std::string v = current == 0   ? "WDDM"
                      : current == 1 ? "TCC"
                      : current == 2 ? "MCDM"
                                     : "unknown (" + std::to_string(current) + ")";
      if (pending != current && pending >= 0 && pending <= 2) {
        v += std::string(" (") +
             (pending == 0   ? "WDDM"
              : pending == 1 ? "TCC"
                             : "MCDM") +
             " after a reboot)";
      }
      g.driver_model = Fact<std::string>::known(std::move(v), source("nvmlDeviceGetDriverModel"));
    } else if (r == kErrorNotSupported) {
      g.driver_model = Fact<std::string>::known("n/a", source("nvmlDeviceGetDriverModel"));
    } else {
      g.driver_model = failed<std::string>("nvmlDeviceGetDriverModel", r);
    }
  }
  return g;
}

}  // namespace

std::vector<std::string> default_nvml_candidates() {
#ifdef _WIN32
  return {"nvml.dll"};
#else
  return {"libnvidia-ml.so.1", "libnvidia-ml.so"};
#endif
}

NvmlSnapshot probe_nvml(const std::vector<std::string>& candidates) {
  NvmlSnapshot snap;
  const auto t0 = std::chrono::steady_clock::now();

  DynamicLibrary lib;
  NvmlApi api;
  BoundSymbols bound;
  std::vector<std::string> failures;
  bool any_opened = false;
  for (const std::string& candidate : candidates) {
    auto opened = DynamicLibrary::open(candidate);
    if (!opened) {
      failures.push_back(opened.error().message);
      continue;
    }
    any_opened = true;
    NvmlApi trial;
    std::vector<SymbolSpec> specs = nvml_specs(trial);
    auto b = bind_symbols(*opened, specs);
    if (!b) {
      failures.push_back(b.error().message);
      continue;
    }
    lib = std::move(*opened);
    api = trial;
    bound = std::move(*b);
    break;
  }

  if (!lib.is_open()) {
    std::string why =
        candidates.empty() ? std::string("no NVML library candidates given") : join(failures, "; ");
    FactStatus st = any_opened ? FactStatus::error : FactStatus::not_found;
    snap.library = Fact<std::string>::unknown(st, why, "NVML loader");
    const std::string skipped = "NVML library not loaded: " + why;
    snap.init_error = Fact<std::string>::unknown(FactStatus::skipped, skipped);
    snap.driver_version = Fact<std::string>::unknown(st, skipped);
    snap.cuda_driver_version = Fact<int>::unknown(st, skipped);
    snap.device_count = Fact<int>::unknown(st, skipped);
    snap.init_ms = ms_since(t0);
    return snap;
  }

  std::string path = lib.loaded_path();
  if (path.empty()) path = lib.requested_name();
  snap.library = Fact<std::string>::known(path, "NVML loader (" + lib.requested_name() + ")");
  snap.bound_symbols = bound.bound_names;
  Probe p(api, bound, path);

  const NvmlReturn init = as<InitFn>(api.init)();
  snap.init_ms = ms_since(t0);
  if (init != kSuccess) {
    snap.init_return = init;
    const std::string text = p.error_text(init);
    snap.init_error = Fact<std::string>::known(text, p.source("nvmlInit"));
    const std::string why = bound_name(bound, "nvmlInit") + " failed: " + text;
    snap.driver_version = Fact<std::string>::unknown(status_for(init), why, p.source("nvmlInit"));
    snap.cuda_driver_version = Fact<int>::unknown(status_for(init), why, p.source("nvmlInit"));
    snap.device_count = Fact<int>::unknown(status_for(init), why, p.source("nvmlInit"));
    return snap;
  }
  snap.init_error =
      Fact<std::string>::unknown(FactStatus::not_found, "nvmlInit succeeded", p.source("nvmlInit"));

  const auto t1 = std::chrono::steady_clock::now();
  {
    char buf[kDriverVersionBufferSize] = {};
    NvmlReturn r = as<DriverVersionFn>(api.driver_version)(buf, kDriverVersionBufferSize);
    snap.driver_version = r == kSuccess
                              ? Fact<std::string>::known(c_string(buf, sizeof buf),
                                                         p.source("nvmlSystemGetDriverVersion"))
                              : p.failed<std::string>("nvmlSystemGetDriverVersion", r);
  }
  if (!api.cuda_driver_version) {
    snap.cuda_driver_version = p.missing<int>("nvmlSystemGetCudaDriverVersion");
  } else {
    int v = 0;
    NvmlReturn r = as<CudaDriverVersionFn>(api.cuda_driver_version)(&v);
    snap.cuda_driver_version = r == kSuccess
                                   ? Fact<int>::known(v, p.source("nvmlSystemGetCudaDriverVersion"))
                                   : p.failed<int>("nvmlSystemGetCudaDriverVersion", r);
  }
  {
    unsigned count = 0;
    NvmlReturn r = as<CountFn>(api.count)(&count);
    if (r != kSuccess) {
      snap.device_count = p.failed<int>("nvmlDeviceGetCount", r);
    } else if (count > kMaxDevices) {
      snap.device_count =
          Fact<int>::unknown(FactStatus::error,
                             bound_name(bound, "nvmlDeviceGetCount") +
                                 " returned an implausible count " + std::to_string(count),
                             p.source("nvmlDeviceGetCount"));
    } else {
      snap.device_count = Fact<int>::known(static_cast<int>(count), p.source("nvmlDeviceGetCount"));
      for (unsigned i = 0; i < count; ++i) snap.gpus.push_back(p.query_gpu(i));
    }
  }
  as<ShutdownFn>(api.shutdown)();
  snap.query_ms = ms_since(t1);
  return snap;
}

}  // namespace dlenv
