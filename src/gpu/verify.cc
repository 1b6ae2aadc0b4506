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
      problem(r, id_for(err->code), Severity::error,
              "GPU " + std::to_string(dev.index) + ": " + name + ": " + b.error,
              "see `dlenv explain " + std::string(finding_name(id_for(err->code))) + "`");
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
    case DType::fp8: return kCudaR8FE4M3;
    default: return kCudaR32F;
  }
}

// Runs `op` once and waits (ms_out null: the checked small problem), or times
// `iterations` runs after `warmup` and stores the time per run.
template <class Op>
std::optional<StepError> run_or_time(const CudaApi& api, Op op, int warmup, int iterations,
                                     double* ms_out) {
  if (ms_out) return time_op(api, warmup, iterations, op, *ms_out);
  if (auto e = op()) return e;
  DLENV_CU(api.cuCtxSynchronize(), "cuCtxSynchronize");
  return std::nullopt;
}

// One GEMM on the device: C = A * B (column-major), returns C's bytes.
std::optional<StepError> run_gemm(const CudaApi& api, const CublasApi& blas, cublasHandle_t h,
                                  DType t, int m, int n, int k, const std::vector<float>& a,
                                  const std::vector<float>& b, int warmup, int iterations,
                                  double* ms_out, std::vector<uint8_t>& c_out,
                                  std::string& blas_error) {
  DeviceBuffer da{&api}, db{&api}, dc{&api};
  const size_t c_bytes = static_cast<size_t>(m) * n * elem_size(t);
  if (auto e = upload(api, da, a, t, "A")) return e;
  if (auto e = upload(api, db, b, t, "B")) return e;
  DLENV_CU(api.cuMemAlloc(&dc.ptr, c_bytes), "cuMemAlloc C");
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
  if (auto e = run_or_time(api, gemm, warmup, iterations, ms_out)) return e;
  return download(api, dc, c_bytes, c_out, "C");
}

// The cuBLASLt descriptors of one fp8 matmul, destroyed together.
struct LtMatmul {
  const CublasApi& blas;
  void* desc = nullptr;
  void* a = nullptr;
  void* b = nullptr;
  void* d = nullptr;
  void* pref = nullptr;
  ~LtMatmul() {
    if (pref) blas.lt_pref_destroy(pref);
    for (void* l : {a, b, d}) {
      if (l) blas.lt_layout_destroy(l);
    }
    if (desc) blas.lt_desc_destroy(desc);
  }
};

// fp8 GEMM through cuBLASLt, the layout FP8 requires ("TN"): D(bf16, m x n) =
// A^T * B with A stored k x m and B k x n, E4M3 inputs, fp32 accumulation, no
// fast accumulation (PyTorch's torch._scaled_mm default). `a` is the m x k matrix
// the reference uses; it is transposed here for the upload.
std::optional<StepError> run_gemm_fp8(const CudaApi& api, const CublasApi& blas, void* lt,
                                      CUdeviceptr workspace, size_t ws_bytes, int m, int n, int k,
                                      const std::vector<float>& a, const std::vector<float>& b,
                                      int warmup, int iterations, double* ms_out,
                                      std::vector<uint8_t>& d_out, std::string& blas_error) {
  // A as E4M3 bytes, transposed in tiles (m x k column-major -> k x m column-major).
  const std::vector<uint8_t> a_bytes = to_device_bytes(a, DType::fp8);
  std::vector<uint8_t> at(a_bytes.size());
  constexpr int kTile = 64;
  const size_t tiles = (static_cast<size_t>(k) + kTile - 1) / kTile;
  for_each_range(
      tiles,
      [&](size_t first, size_t last) {
        for (int p0 = static_cast<int>(first) * kTile;
             p0 < static_cast<int>(last) * kTile && p0 < k; p0 += kTile) {
          for (int i0 = 0; i0 < m; i0 += kTile) {
            for (int p = p0; p < std::min(k, p0 + kTile); ++p) {
              for (int i = i0; i < std::min(m, i0 + kTile); ++i) {
                at[static_cast<size_t>(i) * k + p] = a_bytes[static_cast<size_t>(p) * m + i];
              }
            }
          }
        }
      },
      4);
  DeviceBuffer da{&api}, db{&api}, dd{&api};
  const size_t d_bytes = static_cast<size_t>(m) * n * elem_size(DType::bf16);
  DLENV_CU(api.cuMemAlloc(&da.ptr, at.size()), "cuMemAlloc A");
  DLENV_CU(api.cuMemcpyHtoD(da.ptr, at.data(), at.size()), "cuMemcpyHtoD A");
  if (auto e = upload(api, db, b, DType::fp8, "B")) return e;
  DLENV_CU(api.cuMemAlloc(&dd.ptr, d_bytes), "cuMemAlloc D");
  auto lt_fail = [&](const char* call, cublasStatus_t s) {
    blas_error = std::string(call) + ": " + cublas_status_text(s);
    return StepError{-1, blas_error};
  };
#define DLENV_LT(call, name)               \
  do {                                     \
    cublasStatus_t s_ = (call);            \
    if (s_ != 0) return lt_fail(name, s_); \
  } while (0)
  LtMatmul mm{blas};
  const int32_t trans_a = kCublasOpT, trans_b = kCublasOpN;
  const int8_t fast_accum = 0;
  const uint64_t ws = ws_bytes;
  DLENV_LT(blas.lt_desc_create(&mm.desc, kCublasCompute32F, kCudaR32F), "cublasLtMatmulDescCreate");
  DLENV_LT(blas.lt_desc_set(mm.desc, kLtDescTransA, &trans_a, sizeof trans_a),
           "cublasLtMatmulDescSetAttribute(TRANSA)");
  DLENV_LT(blas.lt_desc_set(mm.desc, kLtDescTransB, &trans_b, sizeof trans_b),
           "cublasLtMatmulDescSetAttribute(TRANSB)");
  DLENV_LT(blas.lt_desc_set(mm.desc, kLtDescFastAccum, &fast_accum, sizeof fast_accum),
           "cublasLtMatmulDescSetAttribute(FAST_ACCUM)");
  DLENV_LT(blas.lt_layout_create(&mm.a, kCudaR8FE4M3, k, m, k), "cublasLtMatrixLayoutCreate(A)");
  DLENV_LT(blas.lt_layout_create(&mm.b, kCudaR8FE4M3, k, n, k), "cublasLtMatrixLayoutCreate(B)");
  DLENV_LT(blas.lt_layout_create(&mm.d, kCudaR16BF, m, n, m), "cublasLtMatrixLayoutCreate(D)");
  DLENV_LT(blas.lt_pref_create(&mm.pref), "cublasLtMatmulPreferenceCreate");
  DLENV_LT(blas.lt_pref_set(mm.pref, kLtPrefMaxWorkspaceBytes, &ws, sizeof ws),
           "cublasLtMatmulPreferenceSetAttribute");
  LtHeuristicResult heuristic{};
  int found = 0;
  DLENV_LT(blas.lt_heuristic(lt, mm.desc, mm.a, mm.b, mm.d, mm.d, mm.pref, 1, &heuristic, &found),
           "cublasLtMatmulAlgoGetHeuristic");
#undef DLENV_LT
  if (found < 1) {
    blas_error = "cublasLtMatmulAlgoGetHeuristic: no algorithm for E4M3 x E4M3 -> bf16 " +
                 std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                 " (CUBLAS_STATUS_NOT_SUPPORTED)";
    return StepError{-1, blas_error};
  }
  const float alpha = 1.0f, beta = 0.0f;
  auto gemm = [&]() -> std::optional<StepError> {
    cublasStatus_t s =
        blas.lt_matmul(lt, mm.desc, &alpha, reinterpret_cast<const void*>(da.ptr), mm.a,
                       reinterpret_cast<const void*>(db.ptr), mm.b, &beta,
                       reinterpret_cast<const void*>(dd.ptr), mm.d, reinterpret_cast<void*>(dd.ptr),
                       mm.d, heuristic.algo, reinterpret_cast<void*>(workspace), ws_bytes, nullptr);
    if (s != 0) return lt_fail("cublasLtMatmul", s);
    return std::nullopt;
  };
  if (auto e = run_or_time(api, gemm, warmup, iterations, ms_out)) return e;
  return download(api, dd, d_bytes, d_out, "D");
}

void gemm_problem(VerifyResult& r, const std::string& label, const GemmResult& g) {
  if (!g.error.empty()) {
    const bool lt = g.library == "cublasLtMatmul";
    problem(r,
            contains(g.error, "CUBLAS_STATUS_NOT_INITIALIZED")
                ? FindingId::cublas_status_not_initialized
            : contains(g.error, "CUBLAS_STATUS_ARCH_MISMATCH") ? FindingId::no_kernel_image_new_gpu
                                                               : FindingId::verify_cuda_error,
            Severity::error, label + ": " + g.error,
            lt ? "the fp8 GEMM runs in libcublasLt: check that libcublasLt matches libcublas "
                 "(`dlenv deps` on the cuBLAS library) and that the GPU supports FP8"
               : "");
    return;
  }
  for (const CheckResult* cr : {&g.small_check, &g.large_check}) {
    if (!cr->ok()) {
      problem(r, FindingId::verify_wrong_result, Severity::error,
              label + ": wrong result: " + std::to_string(cr->bad) + " of " +
                  std::to_string(cr->checked) +
                  " checked elements differ from the CPU reference (" + cr->first_bad + ")",
              "a GPU that computes wrong results needs attention: check `nvidia-smi -q -d ECC`, "
              "clocks and the driver; rerun `dlenv verify --full`");
      return;
    }
  }
}

// Why the fp8 GEMM cannot run here (empty: it can).
std::string fp8_unavailable(const CublasApi& blas, const DeviceResult& dev) {
  if (dev.compute_capability < Version{8, 9}) {
    return "FP8 tensor cores need compute capability 8.9 or newer (Ada, Hopper, Blackwell); "
           "this GPU is " +
           dev.compute_capability.str();
  }
  if (!blas.lt_missing.empty()) return "cuBLASLt cannot run it: " + blas.lt_missing;
  size_t v = blas.lt_get_version();
  if (v < 110800) {  // FP8 matmuls arrived with CUDA 11.8's cuBLASLt
    return "cuBLASLt " + std::to_string(v) + " (" + blas.lt_path +
           ") predates FP8 matmuls (CUDA 11.8)";
  }
  return "";
}

void gemm_tests(const CudaApi& api, const CublasApi& blas, const VerifyOptions& o,
                const GpuPeaks* peaks, DeviceResult& dev, VerifyResult& r) {
  cublasHandle_t h = nullptr;
  if (o.progress) o.progress("GPU " + std::to_string(dev.index) + ": cuBLAS handle");
  if (cublasStatus_t s = blas.create(&h); s != 0) {
    problem(r, FindingId::cublas_status_not_initialized, Severity::error,
            "GPU " + std::to_string(dev.index) + ": cublasCreate failed: " + cublas_status_text(s) +
                " (" + blas.path + ")",
            "see `dlenv explain cublas-status-not-initialized`");
    return;
  }
  if (blas.get_version) blas.get_version(h, &r.cublas_version);
  DeviceBuffer workspace{&api};
  size_t ws_bytes = size_t{32} << 20;  // as PyTorch does for cuBLAS on Hopper-class GPUs
  if (api.cuMemAlloc(&workspace.ptr, ws_bytes) != kCudaSuccess) {
    workspace.ptr = 0;
    ws_bytes = 0;
  }
  if (blas.set_workspace && ws_bytes) {
    blas.set_workspace(h, reinterpret_cast<void*>(workspace.ptr), ws_bytes);
  }
  const int n = o.gemm_n ? o.gemm_n : o.full ? 8192 : 4096;
  const int iters = o.full ? 20 : 5;
  // Small, odd-shaped (multiples of 16, as FP8 needs), every element checked: catches
  // layout and type mistakes. The timed problem is sampled.
  const int sm = 192, sn = 160, sk = 144;
  if (o.progress) o.progress("GPU " + std::to_string(dev.index) + ": GEMM inputs");
  const std::vector<float> a_small = gemm_input(sm * sk, 11), b_small = gemm_input(sk * sn, 12);
  const std::vector<float> a = gemm_input(static_cast<size_t>(n) * n, 21);
  const std::vector<float> b = gemm_input(static_cast<size_t>(n) * n, 22);
  void* lt = nullptr;
  std::vector<uint8_t> result;  // downloaded, its memory reused by every type
  for (DType t : {DType::fp32, DType::tf32, DType::fp16, DType::bf16, DType::fp8}) {
    GemmResult g;
    g.type = t;
    g.out_type = t == DType::fp8 ? DType::bf16 : t;
    g.library = t == DType::fp8 ? "cublasLtMatmul" : "cublasGemmEx";
    g.m = g.n = g.k = n;
    g.iterations = iters;
    if (peaks) {
      g.peak_tflops = t == DType::fp32   ? peaks->fp32
                      : t == DType::tf32 ? peaks->tf32
                      : t == DType::fp16 ? peaks->fp16
                      : t == DType::bf16 ? peaks->bf16
                                         : peaks->fp8;
    }
    if (t == DType::fp8) {
      g.skipped = fp8_unavailable(blas, dev);
      if (g.skipped.empty()) {
        if (cublasStatus_t s = blas.lt_create(&lt); s != 0) {
          g.error = "cublasLtCreate: " + cublas_status_text(s) + " (" + blas.lt_path + ")";
          lt = nullptr;
        }
      }
      if (!g.skipped.empty() || !g.error.empty()) {
        gemm_problem(r, "GPU " + std::to_string(dev.index) + " GEMM fp8", g);
        dev.gemm.push_back(g);
        continue;
      }
    }
    if (o.progress) o.progress("GPU " + std::to_string(dev.index) + ": GEMM " + dtype_name(t));
    // fp8 gets its own inputs, exact in E4M3 (generated once, only when it runs).
    std::vector<float> a8s, b8s, a8, b8;
    if (t == DType::fp8) {
      a8s = gemm_input(sm * sk, 13, t);
      b8s = gemm_input(sk * sn, 14, t);
      a8 = gemm_input(static_cast<size_t>(n) * n, 23, t);
      b8 = gemm_input(static_cast<size_t>(n) * n, 24, t);
    }
    const bool f8 = t == DType::fp8;
    const std::vector<float>&as = f8 ? a8s : a_small, &bs = f8 ? b8s : b_small;
    const std::vector<float>&al = f8 ? a8 : a, &bl = f8 ? b8 : b;
    auto run = [&](int mm, int nn, int kk, const std::vector<float>& x, const std::vector<float>& y,
                   int warmup, int count, double* ms, std::vector<uint8_t>& c,
                   std::string& blas_error) {
      return t == DType::fp8
                 ? run_gemm_fp8(api, blas, lt, workspace.ptr, ws_bytes, mm, nn, kk, x, y, warmup,
                                count, ms, c, blas_error)
                 : run_gemm(api, blas, h, t, mm, nn, kk, x, y, warmup, count, ms, c, blas_error);
    };
    std::string blas_error;
    if (auto e = run(sm, sn, sk, as, bs, 0, 0, nullptr, result, blas_error)) {
      g.error = e->code == -1 ? e->what : e->what + ": " + api.error_text(e->code);
    } else {
      g.small_check = check_gemm(as, bs, result, g.out_type, t, sm, sn, sk, sm * sn);
      double ms = 0;
      if (auto e2 = run(n, n, n, al, bl, 3, iters, &ms, result, blas_error)) {
        g.error = e2->code == -1 ? e2->what : e2->what + ": " + api.error_text(e2->code);
      } else {
        g.ms = ms;
        g.tflops = gemm_tflops(n, n, n, ms);
        g.large_check = check_gemm(al, bl, result, g.out_type, t, n, n, n, o.full ? 512 : 128);
      }
    }
    gemm_problem(r, "GPU " + std::to_string(dev.index) + " GEMM " + dtype_name(t), g);
    dev.gemm.push_back(g);
  }
  if (lt) blas.lt_destroy(lt);
  blas.destroy(h);
}

// What NVML says before the run: exclusive or prohibited compute mode, ECC errors
// already counted, rows waiting for a reset.
void health_before_problems(const DeviceResult& dev, VerifyResult& r) {
  if (!dev.health_before) return;
  const GpuHealth& h = *dev.health_before;
  const std::string gpu = "GPU " + std::to_string(dev.index) + " (" + dev.name + ")";
  const std::string smi = "nvidia-smi -i " + std::to_string(dev.index);
  if (h.compute_mode == "exclusive-process" && h.compute_processes.value_or(0) > 0) {
    problem(r, FindingId::exclusive_compute_mode_busy, Severity::error,
            gpu + " is in exclusive-process compute mode and " +
                std::to_string(*h.compute_processes) +
                " process(es) already hold it: every CUDA context here fails with "
                "CUDA_ERROR_DEVICE_UNAVAILABLE (46) (" +
                h.source + ")",
            "stop the process that holds it (`" + smi + "` lists it), or as root: `" + smi +
                " -c DEFAULT`");
  } else if (h.compute_mode == "prohibited") {
    problem(r, FindingId::exclusive_compute_mode_busy, Severity::error,
            gpu + " is in prohibited compute mode: no process may create a CUDA context on it (" +
                h.source + ")",
            "as root: `" + smi + " -c DEFAULT`");
  }
  if (h.ecc_uncorrected_volatile.value_or(0) > 0) {
    problem(r, FindingId::verify_ecc_errors, Severity::warning,
            gpu + " has counted " + std::to_string(*h.ecc_uncorrected_volatile) +
                " uncorrectable ECC error(s) since the driver loaded (" + h.source + ")",
            "check `" + smi +
                " -q -d ECC,ROW_REMAPPER` and the kernel log for Xid 48/63/64/94/95; "
                "a GPU with repeated uncorrectable errors needs a reset or service");
  }
  if (h.remap_failed.value_or(false)) {
    problem(r, FindingId::verify_ecc_errors, Severity::error,
            gpu +
                ": NVML reports a failed row remapping: the memory has a fault it could not "
                "retire (" +
                h.source + ")",
            "the GPU needs service (RMA); see `" + smi + " -q -d ROW_REMAPPER`");
  } else if (h.remap_pending.value_or(false)) {
    problem(r, FindingId::verify_ecc_errors, Severity::warning,
            gpu + " has memory rows waiting to be remapped: they take effect after a GPU reset (" +
                h.source + ")",
            "reset the GPU when it is idle (as root: `" + smi + " -r`) or reboot");
  }
}

// What changed during the run: new ECC errors mean results from this GPU cannot be trusted.
void health_after_problems(const DeviceResult& dev, VerifyResult& r) {
  if (!dev.health_before || !dev.health_after) return;
  const GpuHealth &b = *dev.health_before, &a = *dev.health_after;
  const std::string gpu = "GPU " + std::to_string(dev.index) + " (" + dev.name + ")";
  if (a.ecc_uncorrected_volatile && b.ecc_uncorrected_volatile &&
      *a.ecc_uncorrected_volatile > *b.ecc_uncorrected_volatile) {
    problem(r, FindingId::verify_ecc_errors, Severity::error,
            gpu + ": " + std::to_string(*a.ecc_uncorrected_volatile - *b.ecc_uncorrected_volatile) +
                " new uncorrectable ECC error(s) during this run: results computed on this GPU "
                "cannot be trusted (" +
                a.source + ")",
            "stop work on this GPU; check `nvidia-smi -i " + std::to_string(dev.index) +
                " -q -d ECC,ROW_REMAPPER` and the kernel log (Xid 48/94/95), then reset it");
  }
  if (a.ecc_corrected_volatile && b.ecc_corrected_volatile &&
      *a.ecc_corrected_volatile > *b.ecc_corrected_volatile) {
    problem(r, FindingId::verify_ecc_errors, Severity::info,
            gpu + ": " + std::to_string(*a.ecc_corrected_volatile - *b.ecc_corrected_volatile) +
                " corrected ECC error(s) during this run (corrected by the hardware; a rising "
                "count is an early sign of failing memory)",
            "watch `nvidia-smi -i " + std::to_string(dev.index) + " -q -d ECC` over time");
  }
}

}  // namespace

namespace {

// The checks of run_verify; every step is announced through o.progress.
// wait_cpu_gemm is called before the first timed GPU work (it may be called again).
void run_checks(const VerifyOptions& o, const std::function<void()>& wait_cpu_gemm,
                VerifyResult& r) {
  auto api = load_cuda_api(o.cuda_candidates.empty()
                               ? std::vector<std::string>{"libcuda.so.1", "libcuda.so"}
                               : o.cuda_candidates);
  if (!api) {
    r.no_gpu = true;
    problem(r, FindingId::no_nvidia_driver, Severity::error,
            "no CUDA driver: " + api.error().message,
            "install the NVIDIA driver (`dlenv doctor` explains what is missing)");
    return;
  }
  r.cuda_library = api->path;
  api->cuDriverGetVersion(&r.driver_cuda_version);
  if (CUresult e = api->cuInit(0); e != kCudaSuccess) {
    r.no_gpu = e == kCudaErrorNoDevice;
    problem(
        r, id_for(e), Severity::error,
        "cuInit failed: " + api->error_text(e) + " (" + api->path + ")",
        "see `dlenv explain " + std::string(finding_name(id_for(e))) + "` and run `dlenv doctor`");
    return;
  }
  int count = 0;
  api->cuDeviceGetCount(&count);
  if (count == 0) {
    r.no_gpu = true;
    problem(r, FindingId::cuda_visible_devices_hides_gpu, Severity::error,
            "the CUDA driver sees no GPU", "check CUDA_VISIBLE_DEVICES and `dlenv doctor`");
    return;
  }
  int major = o.cuda_major > 0 ? o.cuda_major : r.driver_cuda_version / 1000;
  o.progress("loading cuBLAS");
  auto blas = load_cublas(o.cublas_dir, major);
  if (!blas) {
    problem(r, FindingId::verify_cublas_not_loadable, Severity::error, blas.error().message,
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
      problem(r, FindingId::verify_cudnn_not_loadable, Severity::error,
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
    if (api->cuDeviceGetPCIBusId) {
      char bus[64] = {};
      if (api->cuDeviceGetPCIBusId(bus, sizeof bus - 1, d) == kCudaSuccess) dev.pci_bus_id = bus;
    }
    if (o.health) {
      dev.health_before = o.health(dev.pci_bus_id, i);
      health_before_problems(dev, r);
    }
    o.progress("GPU " + std::to_string(i) + ": context");
    auto tc = Clock::now();
    CUcontext ctx = nullptr;
    if (CUresult e = api->cuDevicePrimaryCtxRetain(&ctx, d); e != kCudaSuccess) {
      problem(r, id_for(e), Severity::error,
              "GPU " + std::to_string(i) + ": context: " + api->error_text(e),
              "see `dlenv explain " + std::string(finding_name(id_for(e))) + "`");
      r.devices.push_back(dev);
      continue;
    }
    api->cuCtxSetCurrent(ctx);
    dev.context_ms = ms_since(tc);
    std::optional<GpuPeaks> peaks;
    if (o.kb) peaks = gpu_peaks(*o.kb, dev.name);
    wait_cpu_gemm();  // before the first timed GPU work
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
    if (o.health && dev.health_before) {
      dev.health_after = o.health(dev.pci_bus_id, i);
      health_after_problems(dev, r);
    }
    r.devices.push_back(dev);
  }
  wait_dnn();
}

}  // namespace

VerifyResult run_verify(const VerifyOptions& given) {
  auto t0 = Clock::now();
  VerifyResult r;
  // Each announced step is timed into r.step_ms, then passed on to the caller's callback.
  auto step_start = t0;
  auto close_step = [&r, &step_start] {
    if (!r.step_ms.empty()) r.step_ms.back().second = ms_since(step_start);
  };
  VerifyOptions o = given;
  o.progress = [&r, &step_start, &close_step, &given](const std::string& step) {
    close_step();
    r.step_ms.emplace_back(step, 0.0);
    step_start = Clock::now();
    if (given.progress) given.progress(step);
  };
  r.cpu_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // The CPU side runs whatever happens on the GPU: the GPU/CPU ratio needs it. It runs
  // while the driver loads cuBLAS and creates the context (time spent mostly in the kernel
  // and in file reads), and is waited for before the GPU's own timed work.
  r.cpu_gemm_n = o.cpu_gemm_n ? o.cpu_gemm_n : o.full ? 1024 : 512;
  auto cpu_started = Clock::now();
  auto cpu_gemm = std::async(std::launch::async, [n = r.cpu_gemm_n, threads = r.cpu_threads] {
    return cpu_gemm_gflops(n, threads);
  });
  auto wait_cpu_gemm = [&r, &cpu_gemm, cpu_started] {
    if (!cpu_gemm.valid()) return;
    r.cpu_gemm_gflops = cpu_gemm.get();
    r.timing_ms["cpu_gemm_done_after"] = ms_since(cpu_started);
  };
  run_checks(o, wait_cpu_gemm, r);
  wait_cpu_gemm();
  close_step();
  r.wall_ms = ms_since(t0);
  return r;
}

}  // namespace dlenv
