#include "gpu/cuda_api.h"

#include <type_traits>

namespace dlenv {

std::string CudaApi::error_text(CUresult r) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName) cuGetErrorName(r, &name);
  if (cuGetErrorString) cuGetErrorString(r, &text);
  std::string out = name ? name : "CUDA error";
  out += " (" + std::to_string(r) + ")";
  if (text) out += ": " + std::string(text);
  return out;
}

Result<CudaApi> load_cuda_api(const std::vector<std::string>& candidates) {
  CudaApi api;
  void* p[29] = {};
  const SymbolSpec specs[] = {
      {"cuInit", &p[0], true, 0},
      {"cuDriverGetVersion", &p[1], true, 0},
      {"cuDeviceGetCount", &p[2], true, 0},
      {"cuDeviceGet", &p[3], true, 0},
      {"cuDeviceGetName", &p[4], true, 0},
      {"cuDeviceGetAttribute", &p[5], true, 0},
      {"cuDeviceTotalMem", &p[6], true, 2},
      {"cuDevicePrimaryCtxRetain", &p[7], true, 0},
      {"cuDevicePrimaryCtxRelease", &p[8], true, 2},
      {"cuCtxSetCurrent", &p[9], true, 0},
      {"cuCtxSynchronize", &p[10], true, 0},
      {"cuMemAlloc", &p[11], true, 2},
      {"cuMemFree", &p[12], true, 2},
      {"cuMemAllocHost", &p[13], true, 2},
      {"cuMemFreeHost", &p[14], true, 0},
      {"cuMemcpyHtoDAsync", &p[15], true, 2},
      {"cuMemcpyDtoHAsync", &p[16], true, 2},
      {"cuMemcpyDtoDAsync", &p[17], true, 2},
      {"cuMemcpyHtoD", &p[18], true, 2},
      {"cuMemcpyDtoH", &p[19], true, 2},
      {"cuEventCreate", &p[20], true, 0},
      {"cuEventDestroy", &p[21], true, 2},
      {"cuEventRecord", &p[22], true, 0},
      {"cuEventSynchronize", &p[23], true, 0},
      // Not the _v2 name: its meaning changed in CUDA 12.8; the plain one is stable.
      {"cuEventElapsedTime", &p[24], true, 0},
      {"cuGetErrorName", &p[25], false, 0},
      {"cuGetErrorString", &p[26], false, 0},
      {"cuDeviceGetPCIBusId", &p[27], false, 0},
  };
  auto lib = open_first_with_symbols(candidates, specs);
  if (!lib) return fail("cannot load the CUDA driver API: " + lib.error().message);
  auto as = [&](int i, auto& fn) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p[i]);
  };
  as(0, api.cuInit);
  as(1, api.cuDriverGetVersion);
  as(2, api.cuDeviceGetCount);
  as(3, api.cuDeviceGet);
  as(4, api.cuDeviceGetName);
  as(5, api.cuDeviceGetAttribute);
  as(6, api.cuDeviceTotalMem);
  as(7, api.cuDevicePrimaryCtxRetain);
  as(8, api.cuDevicePrimaryCtxRelease);
  as(9, api.cuCtxSetCurrent);
  as(10, api.cuCtxSynchronize);
  as(11, api.cuMemAlloc);
  as(12, api.cuMemFree);
  as(13, api.cuMemAllocHost);
  as(14, api.cuMemFreeHost);
  as(15, api.cuMemcpyHtoDAsync);
  as(16, api.cuMemcpyDtoHAsync);
  as(17, api.cuMemcpyDtoDAsync);
  as(18, api.cuMemcpyHtoD);
  as(19, api.cuMemcpyDtoH);
  as(20, api.cuEventCreate);
  as(21, api.cuEventDestroy);
  as(22, api.cuEventRecord);
  as(23, api.cuEventSynchronize);
  as(24, api.cuEventElapsedTime);
  as(25, api.cuGetErrorName);
  as(26, api.cuGetErrorString);
  as(27, api.cuDeviceGetPCIBusId);
  api.path = lib->lib.loaded_path();
  api.lib = std::move(lib->lib);
  return api;
}

std::string cublas_status_text(cublasStatus_t s) {
  const char* name = "CUBLAS_STATUS_UNKNOWN";
  switch (s) {
    case 0: name = "CUBLAS_STATUS_SUCCESS"; break;
    case 1: name = "CUBLAS_STATUS_NOT_INITIALIZED"; break;
    case 3: name = "CUBLAS_STATUS_ALLOC_FAILED"; break;
    case 7: name = "CUBLAS_STATUS_INVALID_VALUE"; break;
    case 8: name = "CUBLAS_STATUS_ARCH_MISMATCH"; break;
    case 11: name = "CUBLAS_STATUS_MAPPING_ERROR"; break;
    case 13: name = "CUBLAS_STATUS_EXECUTION_FAILED"; break;
    case 14: name = "CUBLAS_STATUS_INTERNAL_ERROR"; break;
    case 15: name = "CUBLAS_STATUS_NOT_SUPPORTED"; break;
    case 16: name = "CUBLAS_STATUS_LICENSE_ERROR"; break;
  }
  return std::string(name) + " (" + std::to_string(s) + ")";
}

Result<CublasApi> load_cublas(const std::string& dir, int cuda_major) {
  std::string m = std::to_string(cuda_major);
  std::string lt_name = "libcublasLt.so." + m, name = "libcublas.so." + m;
  std::string lt_path = dir.empty() ? lt_name : dir + "/" + lt_name;
  std::string path = dir.empty() ? name : dir + "/" + name;
  CublasApi api;
  auto lt = DynamicLibrary::open(lt_path);
  if (!lt) return fail(lt.error().message);
  auto lib = DynamicLibrary::open(path);
  if (!lib) return fail(lib.error().message);
  void* p[5] = {};
  const SymbolSpec specs[] = {
      {"cublasCreate", &p[0], true, 2},     {"cublasDestroy", &p[1], true, 2},
      {"cublasGetVersion", &p[2], true, 2}, {"cublasSetWorkspace", &p[3], false, 2},
      {"cublasGemmEx", &p[4], true, 0},
  };
  auto bound = bind_symbols(*lib, specs);
  if (!bound) return fail(bound.error().message);
  api.create = reinterpret_cast<decltype(api.create)>(p[0]);
  api.destroy = reinterpret_cast<decltype(api.destroy)>(p[1]);
  api.get_version = reinterpret_cast<decltype(api.get_version)>(p[2]);
  api.set_workspace = reinterpret_cast<decltype(api.set_workspace)>(p[3]);
  api.gemm_ex = reinterpret_cast<decltype(api.gemm_ex)>(p[4]);
  void* q[13] = {};
  const SymbolSpec lt_specs[] = {
      {"cublasLtGetVersion", &q[0], true, 0},
      {"cublasLtCreate", &q[1], true, 0},
      {"cublasLtDestroy", &q[2], true, 0},
      {"cublasLtMatmulDescCreate", &q[3], true, 0},
      {"cublasLtMatmulDescDestroy", &q[4], true, 0},
      {"cublasLtMatmulDescSetAttribute", &q[5], true, 0},
      {"cublasLtMatrixLayoutCreate", &q[6], true, 0},
      {"cublasLtMatrixLayoutDestroy", &q[7], true, 0},
      {"cublasLtMatmulPreferenceCreate", &q[8], true, 0},
      {"cublasLtMatmulPreferenceDestroy", &q[9], true, 0},
      {"cublasLtMatmulPreferenceSetAttribute", &q[10], true, 0},
      {"cublasLtMatmulAlgoGetHeuristic", &q[11], true, 0},
      {"cublasLtMatmul", &q[12], true, 0},
  };
  if (auto lt_bound = bind_symbols(*lt, lt_specs); !lt_bound) {
    api.lt_missing = lt_bound.error().message;
  } else {
    auto as = [&](int i, auto& fn) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(q[i]);
    };
    as(0, api.lt_get_version);
    as(1, api.lt_create);
    as(2, api.lt_destroy);
    as(3, api.lt_desc_create);
    as(4, api.lt_desc_destroy);
    as(5, api.lt_desc_set);
    as(6, api.lt_layout_create);
    as(7, api.lt_layout_destroy);
    as(8, api.lt_pref_create);
    as(9, api.lt_pref_destroy);
    as(10, api.lt_pref_set);
    as(11, api.lt_heuristic);
    as(12, api.lt_matmul);
  }
  api.path = lib->loaded_path();
  api.lt_path = lt->loaded_path();
  api.lt = std::move(*lt);
  api.lib = std::move(*lib);
  return api;
}

}  // namespace dlenv
