#include "gpu/numeric.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

namespace dlenv {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::fp32: return "fp32";
    case DType::tf32: return "tf32";
    case DType::fp16: return "fp16";
    case DType::bf16: return "bf16";
    case DType::fp8: return "fp8";
  }
  return "?";
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mant = x & 0x7fffffu;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff);
  if (exp == 255) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));  // inf/nan
  int32_t e = exp - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (e <= 0) {                                               // subnormal or zero
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half;  // may carry into exponent: fine
  return static_cast<uint16_t>(sign | half);
}

float half_to_float(uint16_t h) {
  uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while (!(mant & 0x400u));
      x = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t float_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu))
    return static_cast<uint16_t>((x >> 16) | 0x40);
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

float bf16_to_float(uint16_t b) {
  uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint8_t float_to_e4m3(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint8_t sign = static_cast<uint8_t>((x >> 24) & 0x80u);
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) return 0x7f;                   // NaN
  if (x >= 0x43e80000u) return sign | 0x7e;           // >= 464, past the midpoint of 448 and 480
  if (x < 0x3c800000u) {                              // below 2^-6: subnormal, multiples of 2^-9
    float q = std::nearbyint(std::fabs(f) * 512.0f);  // ties to even (default rounding mode)
    return sign | static_cast<uint8_t>(q);            // q == 8 is the smallest normal: same bits
  }
  const uint32_t e = (x >> 23) - 127 + 7;  // 1..15
  const uint32_t mant = x & 0x7fffffu;
  uint32_t q = (e << 3) | (mant >> 20);
  const uint32_t rem = mant & 0xfffffu;
  if (rem > 0x80000u || (rem == 0x80000u && (q & 1))) ++q;  // may carry into the exponent
  if (q > 0x7e) q = 0x7e;
  return sign | static_cast<uint8_t>(q);
}

float e4m3_to_float(uint8_t b) {
  const int exp = (b >> 3) & 0xf, man = b & 7;
  if (exp == 15 && man == 7) return std::numeric_limits<float>::quiet_NaN();
  double v =
      exp == 0 ? std::ldexp(static_cast<double>(man), -9) : std::ldexp(1.0 + man / 8.0, exp - 7);
  return static_cast<float>((b & 0x80) ? -v : v);
}

void for_each_range(size_t count, const std::function<void(size_t, size_t)>& fn,
                    size_t min_per_thread) {
  const size_t threads = std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()),
                                          count / std::max<size_t>(1, min_per_thread));
  if (threads <= 1) {
    if (count) fn(0, count);
    return;
  }
  const size_t per = (count + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (size_t b = per; b < count; b += per) pool.emplace_back(fn, b, std::min(count, b + per));
  fn(0, std::min(count, per));
  for (auto& th : pool) th.join();
}

uint64_t input_hash(uint64_t seed, uint64_t i) {
  // The splitmix64 finaliser over the seed in the high bits and the index in the low.
  uint64_t z = (seed << 40) ^ i ^ 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

namespace {

// Multiples of 1/Steps in [-1, 1]; Steps a constant so the modulo is a multiplication.
template <uint32_t Steps>
void fill_input(std::vector<float>& v, uint32_t seed) {
  for_each_range(v.size(), [&v, seed](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const auto q =
          static_cast<int>(input_hash(seed, i) % (2 * Steps + 1)) - static_cast<int>(Steps);
      v[i] = static_cast<float>(q) / static_cast<float>(Steps);
    }
  });
}

}  // namespace

std::vector<float> gemm_input(size_t count, uint32_t seed, DType t) {
  // Multiples of 1/64 are exact in fp16/bf16/tf32; E4M3 (3 mantissa bits) holds the
  // multiples of 1/8 in [-1, 1] exactly.
  std::vector<float> v(count);
  if (t == DType::fp8) {
    fill_input<8>(v, seed);
  } else {
    fill_input<64>(v, seed);
  }
  return v;
}

std::vector<uint8_t> to_device_bytes(const std::vector<float>& v, DType t) {
  std::vector<uint8_t> out(v.size() * elem_size(t));
  for_each_range(v.size(), [&v, &out, t](size_t begin, size_t end) {
    uint8_t* o = out.data();
    switch (t) {
      case DType::fp32:
      case DType::tf32: std::memcpy(o + 4 * begin, v.data() + begin, 4 * (end - begin)); break;
      case DType::fp8:
        for (size_t i = begin; i < end; ++i) o[i] = float_to_e4m3(v[i]);
        break;
      case DType::fp16:
        for (size_t i = begin; i < end; ++i) {
          const uint16_t h = float_to_half(v[i]);
          std::memcpy(o + 2 * i, &h, 2);
        }
        break;
      case DType::bf16:
        for (size_t i = begin; i < end; ++i) {
          const uint16_t h = float_to_bf16(v[i]);
          std::memcpy(o + 2 * i, &h, 2);
        }
        break;
    }
  });
  return out;
}

float from_device_bytes(const std::vector<uint8_t>& bytes, size_t i, DType t) {
  if (t == DType::fp32 || t == DType::tf32) {
    float f;
    std::memcpy(&f, bytes.data() + 4 * i, 4);
    return f;
  }
  if (t == DType::fp8) return e4m3_to_float(bytes[i]);
  uint16_t h;
  std::memcpy(&h, bytes.data() + 2 * i, 2);
  return t == DType::fp16 ? half_to_float(h) : bf16_to_float(h);
}

double reference_element(const std::vector<float>& a, const std::vector<float>& b, int m, int n,
                         int k, int row, int col) {
  (void)n;
  double sum = 0;
  for (int p = 0; p < k; ++p) {
    sum += static_cast<double>(a[static_cast<size_t>(p) * m + row]) *
           static_cast<double>(b[static_cast<size_t>(col) * k + p]);
  }
  return sum;
}

double Tolerance::allowed(double want) const {
  return rel * std::fabs(want) + abs;
}

Tolerance gemm_tolerance(DType t, int k) {
  // The inputs are multiples of 1/64 in [-1, 1]: exact in every type, and their
  // products are exact in fp32. What remains is fp32 accumulation (order-dependent)
  // and the rounding of the output to its type.
  double kk = static_cast<double>(k);
  switch (t) {
    case DType::fp32: return {1e-5, 1e-6 * kk};
    case DType::tf32: return {1e-3, 1e-5 * kk};
    case DType::fp16: return {2.0 / 1024.0, 1e-5 * kk};  // 2 ulp of a 10-bit mantissa
    case DType::bf16:
      return {2.0 / 128.0, 1e-5 * kk};  // 2 ulp of a 7-bit mantissa
    // E4M3 inputs (the reference uses the same rounded values), fp32 accumulation that
    // Hopper's FP8 tensor cores do in stages, output in bf16.
    case DType::fp8: return {2.0 / 128.0, 4e-5 * kk};
  }
  return {};
}

CheckResult check_gemm(const std::vector<float>& a, const std::vector<float>& b,
                       const std::vector<uint8_t>& c_device, DType out_type, DType math, int m,
                       int n, int k, size_t samples) {
  CheckResult r;
  r.tolerance = gemm_tolerance(math == DType::tf32 || math == DType::fp8 ? math : out_type, k);
  size_t total = static_cast<size_t>(m) * static_cast<size_t>(n);
  bool all = total <= samples;
  size_t count = all ? total : samples;
  uint32_t s = 0x9e3779b9u;
  for (size_t i = 0; i < count; ++i) {
    size_t idx;
    if (all) {
      idx = i;
    } else {
      s ^= s << 13;
      s ^= s >> 17;
      s ^= s << 5;
      idx = s % total;
    }
    int row = static_cast<int>(idx % static_cast<size_t>(m));
    int col = static_cast<int>(idx / static_cast<size_t>(m));
    double want = reference_element(a, b, m, n, k, row, col);
    double got = from_device_bytes(c_device, idx, out_type);
    double err = std::fabs(got - want);
    if (!(err <= r.tolerance.allowed(want))) {  // NaN counts as bad
      if (r.bad == 0) {
        r.first_bad = "C[" + std::to_string(row) + "," + std::to_string(col) +
                      "] = " + std::to_string(got) + ", expected " + std::to_string(want);
      }
      ++r.bad;
    }
    if (err > r.max_abs_err || std::isnan(err)) r.max_abs_err = err;
    ++r.checked;
  }
  return r;
}

double gemm_tflops(int m, int n, int k, double ms) {
  if (ms <= 0) return 0;
  return 2.0 * m * n * static_cast<double>(k) / (ms * 1e-3) / 1e12;
}

double bandwidth_gbs(size_t bytes, double ms) {
  if (ms <= 0) return 0;
  return static_cast<double>(bytes) / (ms * 1e-3) / 1e9;
}

void cpu_sgemm(const float* a, const float* b, float* c, int m, int n, int k, int threads) {
  // Column-major. Each thread owns a range of columns of C; blocked over k for cache reuse.
  threads = std::max(1, threads);
  auto work = [&](int col_begin, int col_end) {
    constexpr int kb = 256;
    for (int j = col_begin; j < col_end; ++j) {
      float* cj = c + static_cast<size_t>(j) * m;
      std::fill(cj, cj + m, 0.0f);
    }
    for (int p0 = 0; p0 < k; p0 += kb) {
      int p1 = std::min(k, p0 + kb);
      for (int j = col_begin; j < col_end; ++j) {
        float* cj = c + static_cast<size_t>(j) * m;
        const float* bj = b + static_cast<size_t>(j) * k;
        for (int p = p0; p < p1; ++p) {
          const float bv = bj[p];
          const float* ap = a + static_cast<size_t>(p) * m;
          for (int i = 0; i < m; ++i) cj[i] += ap[i] * bv;
        }
      }
    }
  };
  std::vector<std::thread> pool;
  int per = (n + threads - 1) / threads;
  for (int t = 0; t < threads; ++t) {
    int b0 = t * per, b1 = std::min(n, b0 + per);
    if (b0 >= b1) break;
    pool.emplace_back(work, b0, b1);
  }
  for (auto& th : pool) th.join();
}

double cpu_gemm_gflops(int n, int threads) {
  std::vector<float> a = gemm_input(static_cast<size_t>(n) * n, 1);
  std::vector<float> b = gemm_input(static_cast<size_t>(n) * n, 2);
  std::vector<float> c(static_cast<size_t>(n) * n);
  cpu_sgemm(a.data(), b.data(), c.data(), n, n, n, threads);  // warm-up
  auto t0 = std::chrono::steady_clock::now();
  cpu_sgemm(a.data(), b.data(), c.data(), n, n, n, threads);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return gemm_tflops(n, n, n, ms) * 1000.0;
}

}  // namespace dlenv
