#include "probe/cuda_driver.h"

#include <string>
#include <string_view>
#include <vector>

#include "platform/dynamic_library.h"
#include "util/strings.h"

namespace dlenv {

namespace {

using CuResult = int;  // CUresult (a C enum)
using DriverGetVersionFn = CuResult (*)(int*);

// CUresult values (cuda.h).
constexpr CuResult kCudaSuccess = 0;
constexpr CuResult kCudaErrorStubLibrary = 34;  // CUDA_ERROR_STUB_LIBRARY

const char* cu_result_name(CuResult r) {
  switch (r) {
    case 0: return "CUDA_SUCCESS";
    case 1: return "CUDA_ERROR_INVALID_VALUE";
    case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
    case 3: return "CUDA_ERROR_NOT_INITIALIZED";
    case 4: return "CUDA_ERROR_DEINITIALIZED";
    case 34: return "CUDA_ERROR_STUB_LIBRARY";
    case 35: return "CUDA_ERROR_INSUFFICIENT_DRIVER";
    case 36: return "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER";
    case 46: return "CUDA_ERROR_DEVICE_UNAVAILABLE";
    case 100: return "CUDA_ERROR_NO_DEVICE";
    case 101: return "CUDA_ERROR_INVALID_DEVICE";
    case 303: return "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED";
    case 304: return "CUDA_ERROR_OPERATING_SYSTEM";
    case 999: return "CUDA_ERROR_UNKNOWN";
    default: return "unrecognised CUresult";
  }
}

// A path component named "stubs" (".../lib64/stubs/libcuda.so").
bool in_stubs_dir(std::string_view path) {
  for (const std::string& part : split(path, '/')) {
    if (part == "stubs") return true;
  }
  for (const std::string& part : split(path, '\\')) {
    if (part == "stubs") return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> default_cuda_driver_candidates() {
#ifdef _WIN32
  return {"nvcuda.dll"};
#else
  return {"libcuda.so.1", "libcuda.so"};
#endif
}

CudaDriverSnapshot probe_cuda_driver(const std::vector<std::string>& candidates) {
  CudaDriverSnapshot snap;

  DynamicLibrary lib;
  void* get_version = nullptr;
  std::vector<std::string> failures;
  bool any_opened = false;
  for (const std::string& candidate : candidates) {
    auto opened = DynamicLibrary::open(candidate);
    if (!opened) {
      failures.push_back(opened.error().message);
      continue;
    }
    any_opened = true;
    void* slot = nullptr;
    const SymbolSpec specs[] = {{"cuDriverGetVersion", &slot, true, 0}};
    auto bound = bind_symbols(*opened, specs);
    if (!bound) {
      failures.push_back(bound.error().message);
      continue;
    }
    lib = std::move(*opened);
    get_version = slot;
    break;
  }

  if (!lib.is_open()) {
    std::string why =
        candidates.empty() ? std::string("no libcuda candidates given") : join(failures, "; ");
    FactStatus st = any_opened ? FactStatus::error : FactStatus::not_found;
    snap.library = Fact<std::string>::unknown(st, why, "CUDA driver loader");
    snap.version = Fact<int>::unknown(st, "libcuda not loaded: " + why);
    snap.error = Fact<std::string>::unknown(FactStatus::skipped, "libcuda not loaded: " + why);
    return snap;
  }

  std::string path = lib.loaded_path();
  if (path.empty()) path = lib.requested_name();
  snap.library =
      Fact<std::string>::known(path, "CUDA driver loader (" + lib.requested_name() + ")");
  const std::string source = "CUDA driver API cuDriverGetVersion (" + path + ")";

  int version = 0;
  const CuResult r = reinterpret_cast<DriverGetVersionFn>(get_version)(&version);
  snap.result = r;
  const bool stub_path = in_stubs_dir(path);
  snap.stub = r == kCudaErrorStubLibrary || stub_path;

  if (r == kCudaSuccess) {
    snap.version = Fact<int>::known(version, source);
  } else {
    snap.version =
        Fact<int>::unknown(FactStatus::error,
                           "cuDriverGetVersion failed: " + std::string(cu_result_name(r)) + " (" +
                               std::to_string(r) + ")",
                           source);
  }

  if (snap.stub) {
    std::string why = r == kCudaErrorStubLibrary
                          ? "cuDriverGetVersion returned CUDA_ERROR_STUB_LIBRARY (34)"
                          : "it lives in a 'stubs' directory";
    snap.error = Fact<std::string>::known(
        "the loaded libcuda (" + path + ") is the CUDA toolkit's link-time stub, not the " +
            "NVIDIA driver's library (" + why +
            "); a stubs directory on LD_LIBRARY_PATH shadows the real driver, or no driver " +
            "is installed",
        source);
  } else if (r != kCudaSuccess) {
    snap.error =
        Fact<std::string>::known("cuDriverGetVersion failed: " + std::string(cu_result_name(r)) +
                                     " (" + std::to_string(r) + ")",
                                 source);
  } else {
    snap.error =
        Fact<std::string>::unknown(FactStatus::not_found, "cuDriverGetVersion succeeded", source);
  }
  return snap;
}

}  // namespace dlenv
