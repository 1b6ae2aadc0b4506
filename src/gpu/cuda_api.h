// The CUDA driver API and cuBLAS, loaded at run time through symbol tables
// (nothing CUDA at build time). Only what `dlenv verify` needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "platform/dynamic_library.h"
#include "util/result.h"

namespace dlenv {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUevent_st;
struct CUstream_st;
using CUcontext = CUctx_st*;
using CUevent = CUevent_st*;
using CUstream = CUstream_st*;

constexpr CUresult kCudaSuccess = 0;
constexpr CUresult kCudaErrorOutOfMemory = 2;
constexpr CUresult kCudaErrorNoDevice = 100;
constexpr CUresult kCudaErrorStubLibrary = 34;
constexpr CUresult kCudaErrorNoBinaryForGpu = 209;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrComputeMode = 20;

struct CudaApi {
  DynamicLibrary lib;
  std::string path;
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDriverGetVersion)(int*) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuMemAllocHost)(void**, size_t) = nullptr;
  CUresult (*cuMemFreeHost)(void*) = nullptr;
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream) = nullptr;
  CUresult (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream) = nullptr;
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*cuEventCreate)(CUevent*, unsigned) = nullptr;
  CUresult (*cuEventDestroy)(CUevent) = nullptr;
  CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent) = nullptr;
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent) = nullptr;
  CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;
  CUresult (*cuDeviceGetPCIBusId)(char*, int, CUdevice) = nullptr;  // optional

  // "CUDA_ERROR_OUT_OF_MEMORY (2): out of memory".
  std::string error_text(CUresult r) const;
};

// Loads the first candidate that has every required symbol.
Result<CudaApi> load_cuda_api(const std::vector<std::string>& candidates);

// cuBLAS (from a chosen directory or by soname).
using cublasHandle_t = struct cublasContext*;
using cublasStatus_t = int;
constexpr int kCudaR32F = 0;
constexpr int kCudaR16F = 2;
constexpr int kCudaR16BF = 14;
constexpr int kCudaR8FE4M3 = 28;
constexpr int kCublasCompute32F = 68;
constexpr int kCublasCompute32FFastTf32 = 77;
constexpr int kCublasGemmDefault = -1;
constexpr int kCublasOpN = 0;
constexpr int kCublasOpT = 1;

// cuBLASLt (cublasLt.h): the attributes and the heuristic result layout dlenv uses.
constexpr int kLtDescTransA = 3;             // CUBLASLT_MATMUL_DESC_TRANSA (int32)
constexpr int kLtDescTransB = 4;             // CUBLASLT_MATMUL_DESC_TRANSB (int32)
constexpr int kLtDescFastAccum = 25;         // CUBLASLT_MATMUL_DESC_FAST_ACCUM (int8)
constexpr int kLtPrefMaxWorkspaceBytes = 1;  // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES (uint64)
struct LtHeuristicResult {                   // cublasLtMatmulHeuristicResult_t
  uint64_t algo[8];
  size_t workspace_size;
  int state;
  float waves_count;
  int reserved[4];
};

struct CublasApi {
  DynamicLibrary lt;  // libcublasLt, loaded first so libcublas finds it
  DynamicLibrary lib;
  std::string path;
  std::string lt_path;
  cublasStatus_t (*create)(cublasHandle_t*) = nullptr;
  cublasStatus_t (*destroy)(cublasHandle_t) = nullptr;
  cublasStatus_t (*get_version)(cublasHandle_t, int*) = nullptr;
  cublasStatus_t (*set_workspace)(cublasHandle_t, void*, size_t) = nullptr;
  cublasStatus_t (*gemm_ex)(cublasHandle_t, int, int, int, int, int, const void*, const void*, int,
                            int, const void*, int, int, const void*, void*, int, int, int,
                            int) = nullptr;

  // cuBLASLt, for the fp8 GEMM. Optional: `lt_missing` says why it cannot run.
  std::string lt_missing;
  size_t (*lt_get_version)() = nullptr;
  cublasStatus_t (*lt_create)(void**) = nullptr;
  cublasStatus_t (*lt_destroy)(void*) = nullptr;
  cublasStatus_t (*lt_desc_create)(void**, int compute, int scale) = nullptr;
  cublasStatus_t (*lt_desc_destroy)(void*) = nullptr;
  cublasStatus_t (*lt_desc_set)(void*, int attr, const void*, size_t) = nullptr;
  cublasStatus_t (*lt_layout_create)(void**, int type, uint64_t rows, uint64_t cols,
                                     int64_t ld) = nullptr;
  cublasStatus_t (*lt_layout_destroy)(void*) = nullptr;
  cublasStatus_t (*lt_pref_create)(void**) = nullptr;
  cublasStatus_t (*lt_pref_destroy)(void*) = nullptr;
  cublasStatus_t (*lt_pref_set)(void*, int attr, const void*, size_t) = nullptr;
  cublasStatus_t (*lt_heuristic)(void* h, void* desc, void* a, void* b, void* c, void* d,
                                 void* pref, int requested, LtHeuristicResult* results,
                                 int* returned) = nullptr;
  cublasStatus_t (*lt_matmul)(void* h, void* desc, const void* alpha, const void* a, void* adesc,
                              const void* b, void* bdesc, const void* beta, const void* c,
                              void* cdesc, void* d, void* ddesc, const uint64_t* algo,
                              void* workspace, size_t workspace_bytes, CUstream) = nullptr;
};

// "CUBLAS_STATUS_NOT_INITIALIZED (1)".
std::string cublas_status_text(cublasStatus_t s);

// Loads libcublasLt then libcublas from `dir` (empty: by soname through the loader).
Result<CublasApi> load_cublas(const std::string& dir, int cuda_major);

}  // namespace dlenv
