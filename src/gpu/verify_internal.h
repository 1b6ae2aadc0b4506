// Shared by verify.cc (copies, GEMM) and verify_dnn.cc (cuDNN): RAII device
// buffers, event timing and the problem list. Internal to the gpu layer.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/cuda_api.h"
#include "gpu/cudnn_api.h"
#include "gpu/numeric.h"
#include "gpu/verify.h"
#include "kb/finding_catalog.h"

namespace dlenv::verify_detail {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

inline void problem(VerifyResult& r, FindingId id, Severity severity, std::string text,
                    std::string fix) {
  r.problems.push_back(
      {std::string(finding_name(id)), severity_name(severity), std::move(text), std::move(fix)});
}

// Maps a CUDA error seen at a step to the catalog's finding id.
inline FindingId id_for(CUresult e) {
  switch (e) {
    case kCudaErrorNoDevice: return FindingId::cuda_visible_devices_hides_gpu;
    case kCudaErrorStubLibrary: return FindingId::libcuda_stub_loaded;
    case kCudaErrorOutOfMemory: return FindingId::verify_out_of_memory;
    case kCudaErrorNoBinaryForGpu: return FindingId::no_kernel_image_new_gpu;
    case 999: return FindingId::cuda_unknown_error_uvm;
    case 802: return FindingId::fabric_manager_missing_802;
    case 804: return FindingId::forward_compat_unsupported_804;
    case 35: return FindingId::cuda_driver_insufficient;
    case 46: return FindingId::exclusive_compute_mode_busy;  // CUDA_ERROR_DEVICE_UNAVAILABLE
    default: return FindingId::verify_cuda_error;
  }
}

// RAII device and pinned buffers.
struct DeviceBuffer {
  const CudaApi* api = nullptr;
  CUdeviceptr ptr = 0;
  ~DeviceBuffer() {
    if (ptr) api->cuMemFree(ptr);
  }
};
struct PinnedBuffer {
  const CudaApi* api = nullptr;
  void* ptr = nullptr;
  ~PinnedBuffer() {
    if (ptr) api->cuMemFreeHost(ptr);
  }
};
struct EventPair {
  const CudaApi* api = nullptr;
  CUevent start = nullptr, stop = nullptr;
  ~EventPair() {
    if (start) api->cuEventDestroy(start);
    if (stop) api->cuEventDestroy(stop);
  }
};

struct StepError {
  CUresult code = 0;
  std::string what;
};

#define DLENV_CU(call, what)                              \
  do {                                                    \
    CUresult rc_ = (call);                                \
    if (rc_ != kCudaSuccess) return StepError{rc_, what}; \
  } while (0)

// Copies host floats to a new device buffer in the type's format.
inline std::optional<StepError> upload(const CudaApi& api, DeviceBuffer& buf,
                                       const std::vector<float>& v, DType t, const char* what) {
  // fp32 and tf32 upload the floats as they are; the others are converted first.
  const bool as_is = t == DType::fp32 || t == DType::tf32;
  const std::vector<uint8_t> bytes = as_is ? std::vector<uint8_t>{} : to_device_bytes(v, t);
  const void* src = as_is ? static_cast<const void*>(v.data()) : bytes.data();
  const size_t size = v.size() * elem_size(t);
  CUresult e = api.cuMemAlloc(&buf.ptr, std::max<size_t>(size, 1));
  if (e != kCudaSuccess) return StepError{e, std::string("cuMemAlloc ") + what};
  e = api.cuMemcpyHtoD(buf.ptr, src, size);
  if (e != kCudaSuccess) return StepError{e, std::string("cuMemcpyHtoD ") + what};
  return std::nullopt;
}

inline std::optional<StepError> download(const CudaApi& api, const DeviceBuffer& buf, size_t bytes,
                                         std::vector<uint8_t>& out, const char* what) {
  out.resize(bytes);
  CUresult e = api.cuMemcpyDtoH(out.data(), buf.ptr, bytes);
  if (e != kCudaSuccess) return StepError{e, std::string("cuMemcpyDtoH ") + what};
  return std::nullopt;
}

// Times `iterations` runs of `op` between two events on the default stream.
template <class Op>
std::optional<StepError> time_op(const CudaApi& api, int warmup, int iterations, Op op,
                                 double& ms_per) {
  EventPair ev{&api};
  auto run = [&]() -> std::optional<StepError> {
    DLENV_CU(api.cuEventCreate(&ev.start, 0), "cuEventCreate");
    DLENV_CU(api.cuEventCreate(&ev.stop, 0), "cuEventCreate");
    for (int i = 0; i < warmup; ++i) {
      if (auto e = op()) return e;
    }
    DLENV_CU(api.cuCtxSynchronize(), "cuCtxSynchronize");
    DLENV_CU(api.cuEventRecord(ev.start, nullptr), "cuEventRecord");
    for (int i = 0; i < iterations; ++i) {
      if (auto e = op()) return e;
    }
    DLENV_CU(api.cuEventRecord(ev.stop, nullptr), "cuEventRecord");
    DLENV_CU(api.cuEventSynchronize(ev.stop), "cuEventSynchronize");
    float ms = 0;
    DLENV_CU(api.cuEventElapsedTime(&ms, ev.start, ev.stop), "cuEventElapsedTime");
    ms_per = static_cast<double>(ms) / iterations;
    return std::nullopt;
  };
  return run();
}

// The cuDNN part (verify_dnn.cc): convolutions, activations, LSTM/GRU on one GPU
// whose context is current.
void dnn_tests(const CudaApi& api, const CudnnApi& dnn, const VerifyOptions& o,
               const GpuPeaks* peaks, DeviceResult& dev, VerifyResult& r);

}  // namespace dlenv::verify_detail
