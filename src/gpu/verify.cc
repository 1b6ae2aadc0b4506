#include "gpu/verify.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <thread>

#include "gpu/cuda_api.h"
#include "gpu/verify_internal.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using namespace verify_detail;

void bandwidth_tests(const CudaApi& api, const VerifyOptions& o, const GpuPeaks* peaks,
                     DeviceResult& dev, VerifyResult& r) {
  const size_t bytes = o.copy_bytes ? o.copy_bytes
                       : o.full     ? (size_t{1} << 30)
                                    : (size_t{64} << 20);
  const int iters = o.full ? 20 : 5;
  if (o.progress) o.progress("GPU " + std::to_string(dev.index) + ": copies");
  DeviceBuffer d1{&api}, d2{&api};
  PinnedBuffer pinned{&api};
  auto add = [&](const std::string& name, std::optional<StepError> err, double ms, double peak) {
    BandwidthResult b;
    b.name = name;
    b.bytes = bytes;
    b.iterations = iters;
    if (err) {
      b.error = err->what + ": " + api.error_text(err->code);
      problem(r, id_for(err->code), "error",
              "GPU " + std::to_string(dev.index) + ": " + name + ": " + b.error,
              "see `dlenv explain " + id_for(err->code) + "`");
    } else {
      b.ms = ms;
      b.gbs = bandwidth_gbs(bytes, ms);
      b.peak_gbs = peak;
    }
    dev.bandwidth.push_back(b);
  };
  if (CUresult e = api.cuMemAlloc(&d1.ptr, bytes); e != kCudaSuccess) {
    add("device-to-device", StepError{e, "cuMemAlloc " + human_bytes(bytes)}, 0, 0);
    return;
  }
  if (CUresult e = api.cuMemAlloc(&d2.ptr, bytes); e != kCudaSuccess) {
    add("device-to-device", StepError{e, "cuMemAlloc " + human_bytes(bytes)}, 0, 0);
    return;
  }
  double ms = 0;
  auto err = time_op(
      api, 2, iters,
      [&]() -> std::optional<StepError> {
        DLENV_CU(api.cuMemcpyDtoDAsync(d2.ptr, d1.ptr, bytes, nullptr), "cuMemcpyDtoDAsync");
        return std::nullopt;
      },
      ms);
  add("device-to-device", err, ms, peaks ? peaks->memory_gbs : 0);

  if (CUresult e = api.cuMemAllocHost(&pinned.ptr, bytes); e != kCudaSuccess) {
    add("host-to-device pinned", StepError{e, "cuMemAllocHost " + human_bytes(bytes)}, 0, 0);
    return;
  }
  std::memset(pinned.ptr, 1, bytes);
  err = time_op(
      api, 1, iters,
      [&]() -> std::optional<StepError> {
        DLENV_CU(api.cuMemcpyHtoDAsync(d1.ptr, pinned.ptr, bytes, nullptr), "cuMemcpyHtoDAsync");
        return std::nullopt;
      },
      ms);
  add("host-to-device pinned", err, ms, 0);
  err = time_op(
      api, 1, iters,
      [&]() -> std::optional<StepError> {
        DLENV_CU(api.cuMemcpyDtoHAsync(pinned.ptr, d1.ptr, bytes, nullptr), "cuMemcpyDtoHAsync");
        return std::nullopt;
      },
      ms);
  add("device-to-host pinned", err, ms, 0);

  std::vector<uint8_t> pageable(bytes, 1);
  err = time_op(
      api, 1, iters,
      [&]() -> std::optional<StepError> {
        DLENV_CU(api.cuMemcpyHtoD(d1.ptr, pageable.data(), bytes), "cuMemcpyHtoD");
        return std::nullopt;
      },
      ms);
  add("host-to-device pageable", err, ms, 0);
  err = time_op(
      api, 1, iters,
      [&]() -> std::optional<StepError> {
        DLENV_CU(api.cuMemcpyDtoH(pageable.data(), d1.ptr, bytes), "cuMemcpyDtoH");
        return std::nullopt;
      },
      ms);
  add("device-to-host pageable", err, ms, 0);
}

int cuda_type(DType t) {
  switch (t) {
    case DType::fp16: return kCudaR16F;
    case DType::bf16: return kCudaR16BF;
    default: return kCudaR32F;
  }
}

size_t elem_size(DType t) {
  return t == DType::fp16 || t == DType::bf16 ? 2 : 4;
}

// One GEMM on the device: C = A * B (column-major), returns C's bytes.
std::optional<StepError> run_gemm(const CudaApi& api, const CublasApi& blas, cublasHandle_t h,
                                  DType t, int m, int n, int k, const std::vector<float>& a,
                                  const std::vector<float>& b, int warmup, int iterations,
                                  double* ms_out, std::vector<uint8_t>& c_out,
                                  std::string& blas_error) {
  DeviceBuffer da{&api}, db{&api}, dc{&api};
  const size_t es = elem_size(t);
  auto ha = to_device_bytes(a, t), hb = to_device_bytes(b, t);
  const size_t c_bytes = static_cast<size_t>(m) * n * es;
  DLENV_CU(api.cuMemAlloc(&da.ptr, ha.size()), "cuMemAlloc A");
  DLENV_CU(api.cuMemAlloc(&db.ptr, hb.size()), "cuMemAlloc B");
  DLENV_CU(api.cuMemAlloc(&dc.ptr, c_bytes), "cuMemAlloc C");
  DLENV_CU(api.cuMemcpyHtoD(da.ptr, ha.data(), ha.size()), "cuMemcpyHtoD A");
  DLENV_CU(api.cuMemcpyHtoD(db.ptr, hb.data(), hb.size()), "cuMemcpyHtoD B");
  const float alpha = 1.0f, beta = 0.0f;
  const int type = cuda_type(t);
  const int compute = t == DType::tf32 ? kCublasCompute32FFastTf32 : kCublasCompute32F;
  auto gemm = [&]() -> std::optional<StepError> {
    cublasStatus_t s = blas.gemm_ex(
        h, kCublasOpN, kCublasOpN, m, n, k, &alpha, reinterpret_cast<const void*>(da.ptr), type, m,
        reinterpret_cast<const void*>(db.ptr), type, k, &beta, reinterpret_cast<void*>(dc.ptr),
        type, m, compute, kCublasGemmDefault);
    if (s != 0) {
      blas_error = "cublasGemmEx: " + cublas_status_text(s);
      return StepError{-1, blas_error};
    }
    return std::nullopt;
  };
  double ms = 0;
  if (ms_out) {
    if (auto e = time_op(api, warmup, iterations, gemm, ms)) return e;
    *ms_out = ms;
  } else {
    if (auto e = gemm()) return e;
    DLENV_CU(api.cuCtxSynchronize(), "cuCtxSynchronize");
  }
  c_out.resize(c_bytes);
  DLENV_CU(api.cuMemcpyDtoH(c_out.data(), dc.ptr, c_bytes), "cuMemcpyDtoH C");
  return std::nullopt;
}

void gemm_tests(const CudaApi& api, const CublasApi& blas, const VerifyOptions& o,
                const GpuPeaks* peaks, DeviceResult& dev, VerifyResult& r) {
  cublasHandle_t h = nullptr;
  if (cublasStatus_t s = blas.create(&h); s != 0) {
    problem(r, "cublas-status-not-initialized", "error",
            "GPU " + std::to_string(dev.index) + ": cublasCreate failed: " + cublas_status_text(s) +
                " (" + blas.path + ")",
            "see `dlenv explain cublas-status-not-initialized`");
    return;
  }
  if (blas.get_version) blas.get_version(h, &r.cublas_version);
  DeviceBuffer workspace{&api};
  const size_t ws_bytes = size_t{32} << 20;  // as PyTorch does for cuBLAS on Hopper-class GPUs
  if (blas.set_workspace && api.cuMemAlloc(&workspace.ptr, ws_bytes) == kCudaSuccess) {
    blas.set_workspace(h, reinterpret_cast<void*>(workspace.ptr), ws_bytes);
  }
  const int n = o.gemm_n ? o.gemm_n : o.full ? 8192 : 4096;
  const int iters = o.full ? 20 : 5;
  std::vector<float> a_small = gemm_input(192 * 136, 11), b_small = gemm_input(136 * 160, 12);
  std::vector<float> a = gemm_input(static_cast<size_t>(n) * n, 21);
  std::vector<float> b = gemm_input(static_cast<size_t>(n) * n, 22);
  for (DType t : {DType::fp32, DType::tf32, DType::fp16, DType::bf16}) {
    if (o.progress) o.progress("GPU " + std::to_string(dev.index) + ": GEMM " + dtype_name(t));
    GemmResult g;
    g.type = t;
    g.m = g.n = g.k = n;
    g.iterations = iters;
    if (peaks) {
      g.peak_tflops = t == DType::fp32   ? peaks->fp32
                      : t == DType::tf32 ? peaks->tf32
                      : t == DType::fp16 ? peaks->fp16
                                         : peaks->bf16;
    }
    std::string blas_error;
    std::vector<uint8_t> c;
    // Small, odd-shaped, every element checked (catches layout and type mistakes).
    if (auto e = run_gemm(api, blas, h, t, 192, 160, 136, a_small, b_small, 0, 0, nullptr, c,
                          blas_error)) {
      g.error = e->code == -1 ? e->what : e->what + ": " + api.error_text(e->code);
    } else {
      g.small_check = check_gemm(a_small, b_small, c, t, t, 192, 160, 136, 192 * 160);
      double ms = 0;
      if (auto e2 = run_gemm(api, blas, h, t, n, n, n, a, b, 3, iters, &ms, c, blas_error)) {
        g.error = e2->code == -1 ? e2->what : e2->what + ": " + api.error_text(e2->code);
      } else {
        g.ms = ms;
        g.tflops = gemm_tflops(n, n, n, ms);
        g.large_check = check_gemm(a, b, c, t, t, n, n, n, o.full ? 512 : 128);
      }
    }
    std::string label = "GPU " + std::to_string(dev.index) + " GEMM " + dtype_name(t);
    if (!g.error.empty()) {
      problem(r,
              contains(g.error, "CUBLAS_STATUS_NOT_INITIALIZED") ? "cublas-status-not-initialized"
              : contains(g.error, "CUBLAS_STATUS_ARCH_MISMATCH") ? "no-kernel-image-new-gpu"
                                                                 : "verify-cuda-error",
              "error", label + ": " + g.error, "");
    } else {
      for (const CheckResult* cr : {&g.small_check, &g.large_check}) {
        if (!cr->ok()) {
          problem(
              r, "verify-wrong-result", "error",
              label + ": wrong result: " + std::to_string(cr->bad) + " of " +
                  std::to_string(cr->checked) +
                  " checked elements differ from the CPU reference (" + cr->first_bad + ")",
              "a GPU that computes wrong results needs attention: check `nvidia-smi -q -d ECC`, "
              "clocks and the driver; rerun `dlenv verify --full`");
          break;
        }
      }
    }
    dev.gemm.push_back(g);
  }
  blas.destroy(h);
}

}  // namespace

VerifyResult run_verify(const VerifyOptions& o) {
  auto t0 = Clock::now();
  VerifyResult r;
  r.cpu_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto api = load_cuda_api(o.cuda_candidates.empty()
                               ? std::vector<std::string>{"libcuda.so.1", "libcuda.so"}
                               : o.cuda_candidates);
  // The CPU side runs whatever happens on the GPU: the GPU/CPU ratio needs it.
  r.cpu_gemm_n = o.cpu_gemm_n ? o.cpu_gemm_n : o.full ? 1024 : 512;
  r.cpu_gemm_gflops = cpu_gemm_gflops(r.cpu_gemm_n, r.cpu_threads);
  if (!api) {
    r.no_gpu = true;
    problem(r, "no-nvidia-driver", "error", "no CUDA driver: " + api.error().message,
            "install the NVIDIA driver (`dlenv doctor` explains what is missing)");
    r.wall_ms = ms_since(t0);
    return r;
  }
  r.cuda_library = api->path;
  api->cuDriverGetVersion(&r.driver_cuda_version);
  if (CUresult e = api->cuInit(0); e != kCudaSuccess) {
    r.no_gpu = e == kCudaErrorNoDevice;
    problem(r, id_for(e), "error", "cuInit failed: " + api->error_text(e) + " (" + api->path + ")",
            "see `dlenv explain " + id_for(e) + "` and run `dlenv doctor`");
    r.wall_ms = ms_since(t0);
    return r;
  }
  int count = 0;
  api->cuDeviceGetCount(&count);
  if (count == 0) {
    r.no_gpu = true;
    problem(r, "cuda-visible-devices-hides-gpu", "error", "the CUDA driver sees no GPU",
            "check CUDA_VISIBLE_DEVICES and `dlenv doctor`");
    r.wall_ms = ms_since(t0);
    return r;
  }
  int major = o.cuda_major > 0 ? o.cuda_major : r.driver_cuda_version / 1000;
  auto blas = load_cublas(o.cublas_dir, major);
  if (!blas) {
    problem(r, "verify-cublas-not-loadable", "error", blas.error().message,
            "install cuBLAS for CUDA " + std::to_string(major) +
                " (toolkit or the nvidia-cublas wheel), or point --libs at its directory");
  } else {
    r.cublas_library = blas->path;
    r.cublaslt_library = blas->lt_path;
  }
  // cuDNN 9 maps several hundred MB of sub-libraries: load it on a second thread
  // while the copies and GEMMs run.
  auto dnn_future = std::async(std::launch::async, [&o]() -> Result<CudnnApi> {
    if (o.skip_dnn) return fail("skipped");
    std::string failures;
    for (int m : o.cudnn_major ? std::vector<int>{o.cudnn_major} : std::vector<int>{9, 8}) {
      auto loaded = load_cudnn(o.cudnn_path, m);
      if (loaded) return loaded;
      failures += (failures.empty() ? "" : "; ") + loaded.error().message;
    }
    return fail(failures);
  });
  std::optional<CudnnApi> dnn;
  bool dnn_waited = false;
  auto wait_dnn = [&]() {
    if (dnn_waited) return;
    dnn_waited = true;
    auto tw = Clock::now();
    auto loaded = dnn_future.get();
    r.timing_ms["cudnn_load_wait"] = ms_since(tw);
    if (loaded) {
      dnn = std::move(*loaded);
      r.cudnn_library = dnn->path;
      r.cudnn_version = dnn->version;
    } else if (!o.skip_dnn) {
      problem(r, "verify-cudnn-not-loadable", "error",
              "cuDNN could not be loaded: " + loaded.error().message,
              "install cuDNN (the toolkit's, the nvidia-cudnn wheel, or `dlenv cudnn install`), "
              "point --libs at its directory, or skip it with --no-cudnn");
    }
  };
  for (int i = 0; i < count; ++i) {
    if (o.device >= 0 && i != o.device) continue;
    DeviceResult dev;
    dev.index = i;
    CUdevice d = 0;
    api->cuDeviceGet(&d, i);
    char name[256] = {};
    api->cuDeviceGetName(name, sizeof name - 1, d);
    dev.name = name;
    int cc_major = 0, cc_minor = 0;
    api->cuDeviceGetAttribute(&cc_major, kAttrComputeCapabilityMajor, d);
    api->cuDeviceGetAttribute(&cc_minor, kAttrComputeCapabilityMinor, d);
    dev.compute_capability = Version{cc_major, cc_minor};
    size_t mem = 0;
    api->cuDeviceTotalMem(&mem, d);
    dev.memory_bytes = mem;
    auto tc = Clock::now();
    CUcontext ctx = nullptr;
    if (CUresult e = api->cuDevicePrimaryCtxRetain(&ctx, d); e != kCudaSuccess) {
      problem(r, id_for(e), "error",
              "GPU " + std::to_string(i) + ": context: " + api->error_text(e),
              "see `dlenv explain " + id_for(e) + "`");
      r.devices.push_back(dev);
      continue;
    }
    api->cuCtxSetCurrent(ctx);
    dev.context_ms = ms_since(tc);
    std::optional<GpuPeaks> peaks;
    if (o.kb) peaks = gpu_peaks(*o.kb, dev.name);
    auto tp = Clock::now();
    bandwidth_tests(*api, o, peaks ? &*peaks : nullptr, dev, r);
    r.timing_ms["gpu" + std::to_string(i) + "_copies"] = ms_since(tp);
    tp = Clock::now();
    if (blas) gemm_tests(*api, *blas, o, peaks ? &*peaks : nullptr, dev, r);
    r.timing_ms["gpu" + std::to_string(i) + "_gemm"] = ms_since(tp);
    wait_dnn();
    tp = Clock::now();
    if (dnn) dnn_tests(*api, *dnn, o, peaks ? &*peaks : nullptr, dev, r);
    r.timing_ms["gpu" + std::to_string(i) + "_cudnn"] = ms_since(tp);
    api->cuCtxSetCurrent(nullptr);
    api->cuDevicePrimaryCtxRelease(d);
    r.devices.push_back(dev);
  }
  wait_dnn();
  r.wall_ms = ms_since(t0);
  return r;
}

}  // namespace dlenv
