// `dlenv verify`: real work on each GPU through the user's own CUDA libraries,
// every result checked against a CPU reference, speed next to the GPU's peak
// and a CPU GEMM measured on the same machine.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpu/numeric.h"
#include "kb/kb.h"
#include "util/version.h"

namespace dlenv {

// What NVML says about one GPU, read before and after the run (the CLI supplies it:
// the gpu layer does not load NVML itself). Unknown values stay empty.
struct GpuHealth {
  std::string compute_mode;              // "default" / "exclusive-process" / "prohibited"
  std::optional<int> compute_processes;  // processes holding a compute context
  std::optional<bool> ecc_enabled;       // current ECC mode
  std::optional<uint64_t> ecc_uncorrected_volatile;  // since the driver loaded
  std::optional<uint64_t> ecc_corrected_volatile;
  std::optional<bool> remap_pending;  // row remapping waits for a GPU reset
  std::optional<bool> remap_failed;   // a row could not be remapped
  std::string source;                 // "NVML (/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1)"
};

struct VerifyOptions {
  std::vector<std::string> cuda_candidates;  // empty: libcuda.so.1, libcuda.so
  std::string cublas_dir;                    // empty: by soname through the loader
  int cuda_major = 0;                        // for the cuBLAS soname; 0: from the driver
  int device = -1;                           // -1: every GPU
  bool full = false;                         // --full: bigger problems, more iterations
  const Kb* kb = nullptr;                    // for peaks (may be null)
  int gemm_n = 0;                            // override the GEMM size (tests); 0: by mode
  size_t copy_bytes = 0;                     // override the copy size (tests); 0: by mode
  int cpu_gemm_n = 0;                        // override the CPU GEMM size (tests)
  // cuDNN: a directory holding libcudnn.so.N or the file itself; empty: by soname.
  std::string cudnn_path;
  int cudnn_major = 0;     // 0: try 9 then 8
  bool skip_dnn = false;   // --no-cudnn
  bool small_dnn = false;  // tests: tiny convolution / activation / RNN problems
  // Called before each step with what is about to run (the CLI shows it on a TTY).
  std::function<void(const std::string&)> progress;
  // Reads a GPU's health by PCI bus id ("0000:3b:00.0") and CUDA index; called before
  // and after each GPU's work. Empty, or returning nullopt: no health checks.
  std::function<std::optional<GpuHealth>(const std::string& pci_bus_id, int index)> health;
};

struct VerifyProblem {
  std::string id;        // finding id (failure catalog where one fits)
  std::string severity;  // "error" / "warning" / "info"
  std::string text;
  std::string fix;
};

struct BandwidthResult {
  std::string name;  // "host-to-device pinned", ...
  size_t bytes = 0;
  int iterations = 0;
  double ms = 0;  // per copy
  double gbs = 0;
  double peak_gbs = 0;  // 0 when unknown
  std::string error;
};

struct GemmResult {
  DType type = DType::fp32;      // the input type (fp8: E4M3 inputs)
  DType out_type = DType::fp32;  // the output type (fp8 writes bf16)
  std::string library;           // "cublasGemmEx" / "cublasLtMatmul"
  std::string skipped;           // why it did not run (not an error), e.g. fp8 before sm_89
  int m = 0, n = 0, k = 0;
  int iterations = 0;
  double ms = 0;  // per GEMM
  double tflops = 0;
  double peak_tflops = 0;   // dense peak from the KB; 0 when unknown
  CheckResult small_check;  // odd-shaped problem, every element checked
  CheckResult large_check;  // the timed problem, sampled
  std::string error;
};

// One cuDNN operation: a convolution direction, an activation, or an RNN forward.
struct DnnResult {
  std::string op;      // "conv forward", "conv backward-data", "relu forward", "LSTM forward"
  std::string layout;  // "NCHW" / "NHWC" ("" for RNNs)
  DType type = DType::fp32;
  std::string shape;       // "N64 C256 H56 W56 K256 3x3", "T128 B64 H1024 x2 layers"
  std::string algo;        // the algorithm cuDNN ran (convolutions)
  std::string sublibrary;  // the cuDNN sub-library the op lives in
  int iterations = 0;
  double ms = 0;
  double tflops = 0;  // convolutions and RNNs
  double gbs = 0;     // activations (memory-bound)
  double peak = 0;    // the matching peak (TFLOP/s or GB/s); 0 when unknown
  CheckResult check;
  std::string error;
};

struct DeviceResult {
  int index = 0;
  std::string name;
  std::string pci_bus_id;  // cuDeviceGetPCIBusId; empty when unknown
  Version compute_capability;
  uint64_t memory_bytes = 0;
  double context_ms = 0;
  std::vector<BandwidthResult> bandwidth;
  std::vector<GemmResult> gemm;
  std::vector<DnnResult> dnn;
  std::optional<GpuHealth> health_before, health_after;
};

struct VerifyResult {
  std::string cuda_library;
  std::string cublas_library;
  std::string cublaslt_library;
  int cublas_version = 0;
  std::string cudnn_library;
  size_t cudnn_version = 0;  // cudnnGetVersion()
  int driver_cuda_version = 0;
  bool no_gpu = false;
  std::vector<DeviceResult> devices;
  double cpu_gemm_gflops = 0;
  int cpu_threads = 0;
  int cpu_gemm_n = 0;
  std::vector<VerifyProblem> problems;
  double wall_ms = 0;
  std::map<std::string, double> timing_ms;  // phases: cudnn_load_wait, gpuN_copies, ...
  // Every step announced through VerifyOptions::progress, in order, with the wall time until
  // the next step began (the last one until the run ended): where a quick run's time goes.
  std::vector<std::pair<std::string, double>> step_ms;
  // Set when the run did not finish (the isolated child crashed or was stopped): the step
  // it was in. The report then holds only the steps and the problem saying so.
  std::string stopped_during;
};

VerifyResult run_verify(const VerifyOptions& options);

// Peaks for a GPU name from the KB's gpu_peaks.json (dense, no sparsity).
struct GpuPeaks {
  double fp32 = 0, tf32 = 0, fp16 = 0, bf16 = 0, fp8 = 0;  // TFLOP/s
  double memory_gbs = 0;
  std::string source;
  bool confirmed = false;
};
std::optional<GpuPeaks> gpu_peaks(const Kb& kb, const std::string& gpu_name);

std::string render_verify_text(const VerifyResult& r);
std::string render_verify_json(const VerifyResult& r);

}  // namespace dlenv
