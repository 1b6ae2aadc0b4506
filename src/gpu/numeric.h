// Host-side numerics for `dlenv verify`: fp16/bf16 conversion, deterministic
// inputs, the CPU reference for GEMM (sampled), per-dtype tolerances, and a
// CPU GEMM benchmark for the GPU/CPU ratio. No GPU needed: unit-tested in CI.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace dlenv {

// fp8 is OCP E4M3 ("e4m3fn": bias 7, no infinities, max 448), as cuBLASLt's CUDA_R_8F_E4M3.
enum class DType { fp32, tf32, fp16, bf16, fp8 };
const char* dtype_name(DType t);
// Bytes per element of a device buffer of type `t`.
inline size_t elem_size(DType t) {
  return t == DType::fp8 ? 1 : t == DType::fp16 || t == DType::bf16 ? 2 : 4;
}

uint16_t float_to_half(float f);  // round to nearest even
float half_to_float(uint16_t h);
uint16_t float_to_bf16(float f);  // round to nearest even
float bf16_to_float(uint16_t b);
uint8_t float_to_e4m3(float f);  // round to nearest even, saturating at +-448; NaN -> 0x7f
float e4m3_to_float(uint8_t b);

// Calls fn(begin, end) on disjoint ranges covering [0, count), on up to the machine's
// hardware threads, each range at least `min_per_thread` long (inline when count is
// smaller); returns when every range is done.
void for_each_range(size_t count, const std::function<void(size_t, size_t)>& fn,
                    size_t min_per_thread = size_t{1} << 16);

// A well-mixed 64-bit value of (seed, i): deterministic inputs element by element, so a
// matrix can be filled on many threads and any element recomputed on its own.
uint64_t input_hash(uint64_t seed, uint64_t i);

// Deterministic inputs in [-1, 1] that are exact in `t` and every wider type
// (multiples of 1/64; multiples of 1/8 for fp8). Element i depends only on (seed, i), so
// the matrix is filled on all threads.
std::vector<float> gemm_input(size_t count, uint32_t seed, DType t = DType::fp16);

// Converts a float matrix to the bytes the GPU gets for `t` (fp32/tf32: 4 bytes each,
// fp16/bf16: 2, fp8: 1).
std::vector<uint8_t> to_device_bytes(const std::vector<float>& v, DType t);
// Reads element i of a device-format output buffer back as float.
float from_device_bytes(const std::vector<uint8_t>& bytes, size_t i, DType t);

// Column-major C = A(m x k) * B(k x n): one element, in double.
double reference_element(const std::vector<float>& a, const std::vector<float>& b, int m, int n,
                         int k, int row, int col);

// Allowed |got - want| = rel * |want| + abs for a k-long dot product of inputs in [-1, 1].
struct Tolerance {
  double rel = 0;
  double abs = 0;
  double allowed(double want) const;
};
// `t` is the output type, or the math type where that dominates (tf32, fp8).
Tolerance gemm_tolerance(DType t, int k);

struct CheckResult {
  size_t checked = 0;
  size_t bad = 0;
  double max_abs_err = 0;
  Tolerance tolerance;
  std::string first_bad;  // "C[12,40] = 3.5, expected 1.25"
  bool ok() const { return checked > 0 && bad == 0; }
};

// Compares `samples` pseudo-random elements of C (all of them when m*n <= samples).
CheckResult check_gemm(const std::vector<float>& a, const std::vector<float>& b,
                       const std::vector<uint8_t>& c_device, DType out_type, DType math, int m,
                       int n, int k, size_t samples);

// TFLOP/s of an m x n x k GEMM that took `ms`.
double gemm_tflops(int m, int n, int k, double ms);
// GB/s of moving `bytes` in `ms` (10^9 bytes).
double bandwidth_gbs(size_t bytes, double ms);

// A cache-blocked, multi-threaded fp32 GEMM on the CPU: GFLOP/s for n x n x n.
double cpu_gemm_gflops(int n, int threads);
// The same kernel, for tests: column-major C = A * B.
void cpu_sgemm(const float* a, const float* b, float* c, int m, int n, int k, int threads);

}  // namespace dlenv
