#include "gpu/numeric.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>

namespace dlenv {
namespace {

TEST(Half, RoundTripsExactValuesAndRoundsToNearestEven) {
  for (float f : {0.0f, 1.0f, -1.0f, 0.5f, 65504.0f, -2.0f, 0.015625f, 6.1035156e-05f}) {
    EXPECT_EQ(half_to_float(float_to_half(f)), f) << f;
  }
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(1e6f), 0x7c00);                   // overflow -> inf
  EXPECT_EQ(half_to_float(0x0001), 5.9604645e-08f);         // smallest subnormal
  EXPECT_EQ(float_to_half(1.0f + 1.0f / 2048.0f), 0x3c00);  // tie -> even
  EXPECT_EQ(float_to_half(1.0f + 3.0f / 2048.0f), 0x3c02);  // tie -> even (up)
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(NAN))));
}

TEST(Bf16, RoundTripsAndRounds) {
  for (float f : {0.0f, 1.0f, -1.0f, 0.5f, 3.0e38f, 0.015625f}) {
    EXPECT_NEAR(bf16_to_float(float_to_bf16(f)), f, std::fabs(f) / 128.0f) << f;
  }
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16(1.0f + 1.0f / 256.0f), 0x3f80);  // tie -> even
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(NAN))));
}

TEST(GemmInput, IsExactInEveryType) {
  auto v = gemm_input(1000, 7);
  for (float f : v) {
    EXPECT_LE(std::fabs(f), 1.0f);
    EXPECT_EQ(half_to_float(float_to_half(f)), f);
    EXPECT_EQ(bf16_to_float(float_to_bf16(f)), f);
  }
  EXPECT_NE(gemm_input(10, 1), gemm_input(10, 2));
}

TEST(GemmInput, ElementsDependOnlyOnSeedAndIndexWhateverTheThreadSplit) {
  // Large enough to be filled on several threads; the small one is filled inline.
  const size_t big = size_t{1} << 20;
  auto whole = gemm_input(big, 3), prefix = gemm_input(1000, 3);
  ASSERT_EQ(whole.size(), big);
  EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), whole.begin()));
  // Every value of the 129 multiples of 1/64 shows up, none other.
  std::vector<int> seen(129);
  for (float f : whole) {
    const float q = f * 64.0f;
    ASSERT_EQ(q, std::round(q)) << f;
    ++seen.at(static_cast<size_t>(q + 64.0f));
  }
  for (int count : seen) EXPECT_GT(count, 0);
  auto fp8 = gemm_input(big, 3, DType::fp8);
  for (float f : fp8) ASSERT_EQ(e4m3_to_float(float_to_e4m3(f)), f) << f;
}

TEST(ForEachRange, CoversEveryIndexOnce) {
  for (size_t count : {size_t{0}, size_t{1}, size_t{1000}, (size_t{1} << 20) + 7}) {
    std::vector<std::atomic<int>> hits(count);
    for_each_range(count, [&hits](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) ++hits[i];
    });
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(hits[i].load(), 1) << i << " of " << count;
  }
}

TEST(ToDeviceBytes, ConvertsEveryElementOnEveryThread) {
  auto v = gemm_input((size_t{1} << 18) + 3, 9);
  for (DType t : {DType::fp32, DType::fp16, DType::bf16, DType::fp8}) {
    auto bytes = to_device_bytes(v, t);
    ASSERT_EQ(bytes.size(), v.size() * elem_size(t));
    for (size_t i = 0; i < v.size(); i += 997) {
      const float want = t == DType::fp8 ? e4m3_to_float(float_to_e4m3(v[i])) : v[i];
      ASSERT_EQ(from_device_bytes(bytes, i, t), want) << dtype_name(t) << " " << i;
    }
    EXPECT_EQ(from_device_bytes(bytes, v.size() - 1, t),
              t == DType::fp8 ? e4m3_to_float(float_to_e4m3(v.back())) : v.back());
  }
}

TEST(CheckGemm, AcceptsACorrectProductAndCatchesAWrongElement) {
  const int m = 37, n = 29, k = 41;
  auto a = gemm_input(m * k, 1), b = gemm_input(k * n, 2);
  std::vector<float> c(m * n);
  cpu_sgemm(a.data(), b.data(), c.data(), m, n, k, 3);
  auto bytes = to_device_bytes(c, DType::fp32);
  auto ok = check_gemm(a, b, bytes, DType::fp32, DType::fp32, m, n, k, 10000);
  EXPECT_TRUE(ok.ok()) << ok.first_bad;
  EXPECT_EQ(ok.checked, size_t(m * n));
  c[5 * m + 3] += 0.01f;
  auto bad =
      check_gemm(a, b, to_device_bytes(c, DType::fp32), DType::fp32, DType::fp32, m, n, k, 10000);
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.bad, 1u);
  EXPECT_NE(bad.first_bad.find("C[3,5]"), std::string::npos) << bad.first_bad;
}

TEST(CheckGemm, TransposedOutputIsCaught) {
  const int m = 16, n = 16, k = 16;
  auto a = gemm_input(m * k, 3), b = gemm_input(k * n, 4);
  std::vector<float> c(m * n), t(m * n);
  cpu_sgemm(a.data(), b.data(), c.data(), m, n, k, 1);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) t[j * m + i] = c[i * m + j];
  EXPECT_FALSE(
      check_gemm(a, b, to_device_bytes(t, DType::fp32), DType::fp32, DType::fp32, m, n, k, 1000)
          .ok());
}

TEST(CheckGemm, Fp16OutputWithinItsToleranceAndNanIsBad) {
  const int m = 8, n = 8, k = 512;
  auto a = gemm_input(m * k, 5), b = gemm_input(k * n, 6);
  std::vector<float> c(m * n);
  cpu_sgemm(a.data(), b.data(), c.data(), m, n, k, 1);
  auto h = to_device_bytes(c, DType::fp16);  // output rounded to fp16
  EXPECT_TRUE(check_gemm(a, b, h, DType::fp16, DType::fp16, m, n, k, 1000).ok());
  c[0] = NAN;
  EXPECT_FALSE(
      check_gemm(a, b, to_device_bytes(c, DType::fp16), DType::fp16, DType::fp16, m, n, k, 1000)
          .ok());
}

TEST(CheckGemm, SamplesLargeProblems) {
  const int m = 300, n = 300, k = 8;
  auto a = gemm_input(m * k, 8), b = gemm_input(k * n, 9);
  std::vector<float> c(m * n);
  cpu_sgemm(a.data(), b.data(), c.data(), m, n, k, 2);
  auto r =
      check_gemm(a, b, to_device_bytes(c, DType::fp32), DType::fp32, DType::fp32, m, n, k, 100);
  EXPECT_EQ(r.checked, 100u);
  EXPECT_TRUE(r.ok());
}

TEST(Math, ThroughputFormulas) {
  EXPECT_DOUBLE_EQ(gemm_tflops(1000, 1000, 1000, 1.0), 2.0);
  EXPECT_DOUBLE_EQ(bandwidth_gbs(1000000000, 1000.0), 1.0);
  EXPECT_EQ(gemm_tflops(1, 1, 1, 0), 0);
  EXPECT_GT(cpu_gemm_gflops(64, 2), 0.0);
}

}  // namespace
}  // namespace dlenv

namespace dlenv {
namespace {

TEST(Fp8E4M3, EveryCodeRoundTripsAndTiesGoToEven) {
  int finite = 0;
  for (int b = 0; b < 256; ++b) {
    float f = e4m3_to_float(static_cast<uint8_t>(b));
    if (std::isnan(f)) {
      EXPECT_EQ(b & 0x7f, 0x7f) << b;  // only S.1111.111 is NaN: no infinities
      continue;
    }
    ++finite;
    if (b == 0x80) continue;  // -0 encodes as -0
    EXPECT_EQ(float_to_e4m3(f), b) << "code " << b << " value " << f;
  }
  EXPECT_EQ(finite, 254);
  EXPECT_EQ(e4m3_to_float(0x7e), 448.0f);
  EXPECT_EQ(e4m3_to_float(0x01), std::ldexp(1.0f, -9));  // smallest subnormal
  EXPECT_EQ(float_to_e4m3(1000.0f), 0x7e);               // saturates
  EXPECT_EQ(float_to_e4m3(-1000.0f), 0xfe);
  EXPECT_EQ(e4m3_to_float(float_to_e4m3(0.3f)), 0.3125f);
  EXPECT_EQ(e4m3_to_float(float_to_e4m3(1.0625f)), 1.0f);       // tie -> even mantissa 000
  EXPECT_EQ(e4m3_to_float(float_to_e4m3(1.1875f)), 1.25f);      // tie -> even mantissa 010
  EXPECT_EQ(e4m3_to_float(float_to_e4m3(15.5f / 8.0f)), 2.0f);  // carries into the exponent
}

TEST(Fp8E4M3, Fp8InputsAreExactAndTheDeviceBytesHoldThem) {
  std::vector<float> v = gemm_input(1000, 5, DType::fp8);
  auto bytes = to_device_bytes(v, DType::fp8);
  ASSERT_EQ(bytes.size(), v.size());
  int distinct_nonzero = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(from_device_bytes(bytes, i, DType::fp8), v[i]) << i;
    EXPECT_LE(std::fabs(v[i]), 1.0f);
    distinct_nonzero += v[i] != 0 && v[i] * 8 != std::nearbyint(v[i] * 8) ? 100 : 0;
  }
  EXPECT_EQ(distinct_nonzero, 0);  // multiples of 1/8
  // The wider types' inputs are not all exact in E4M3: rounding them would change them.
  std::vector<float> w = gemm_input(1000, 5);
  size_t inexact = 0;
  for (float x : w) inexact += e4m3_to_float(float_to_e4m3(x)) != x;
  EXPECT_GT(inexact, 0u);
}

}  // namespace
}  // namespace dlenv
