#include "gpu/dnn_reference.h"

#include <gtest/gtest.h>

#include <cmath>

namespace dlenv {
namespace {

ConvShape odd_shape() {
  ConvShape sh;
  sh.n = 2, sh.c = 3, sh.h = 7, sh.w = 5, sh.k = 4, sh.r = 3, sh.s = 2, sh.pad = 1;
  return sh;
}

// The three directions are adjoints of each other, whatever the layout:
// <conv(x, w), dy> == <x, bwd_data(w, dy)> == <w, bwd_filter(x, dy)>.
TEST(DnnReference, ConvolutionDirectionsAreAdjoint) {
  for (Layout l : {Layout::nchw, Layout::nhwc}) {
    for (int stride : {1, 2}) {
      ConvShape sh = odd_shape();
      sh.stride = stride;
      auto x = gemm_input(sh.x_count(), 1), w = gemm_input(sh.w_count(), 2),
           dy = gemm_input(sh.y_count(), 3);
      double fwd = 0, data = 0, filter = 0;
      for (int n = 0; n < sh.n; ++n)
        for (int k = 0; k < sh.k; ++k)
          for (int p = 0; p < sh.p(); ++p)
            for (int q = 0; q < sh.q(); ++q)
              fwd += conv_fwd_ref(sh, l, x, w, n, k, p, q).value * dy[y_offset(sh, l, n, k, p, q)];
      for (int n = 0; n < sh.n; ++n)
        for (int c = 0; c < sh.c; ++c)
          for (int h = 0; h < sh.h; ++h)
            for (int ww = 0; ww < sh.w; ++ww)
              data += conv_bwd_data_ref(sh, l, w, dy, n, c, h, ww).value *
                      x[x_offset(sh, l, n, c, h, ww)];
      for (int k = 0; k < sh.k; ++k)
        for (int c = 0; c < sh.c; ++c)
          for (int r = 0; r < sh.r; ++r)
            for (int s = 0; s < sh.s; ++s)
              filter += conv_bwd_filter_ref(sh, l, x, dy, k, c, r, s).value *
                        w[w_offset(sh, l, k, c, r, s)];
      EXPECT_NEAR(fwd, data, 1e-9) << layout_name(l) << " stride " << stride;
      EXPECT_NEAR(fwd, filter, 1e-9) << layout_name(l) << " stride " << stride;
      EXPECT_GT(std::fabs(fwd), 0.01);  // a non-trivial identity
    }
  }
}

TEST(DnnReference, LayoutsAddressTheSameLogicalElements) {
  ConvShape sh = odd_shape();
  // Same logical x and w stored in both layouts give the same outputs.
  auto xn = gemm_input(sh.x_count(), 5), wn = gemm_input(sh.w_count(), 6);
  std::vector<float> xh(xn.size()), wh(wn.size());
  for (int n = 0; n < sh.n; ++n)
    for (int c = 0; c < sh.c; ++c)
      for (int h = 0; h < sh.h; ++h)
        for (int w = 0; w < sh.w; ++w)
          xh[x_offset(sh, Layout::nhwc, n, c, h, w)] = xn[x_offset(sh, Layout::nchw, n, c, h, w)];
  for (int k = 0; k < sh.k; ++k)
    for (int c = 0; c < sh.c; ++c)
      for (int r = 0; r < sh.r; ++r)
        for (int s = 0; s < sh.s; ++s)
          wh[w_offset(sh, Layout::nhwc, k, c, r, s)] = wn[w_offset(sh, Layout::nchw, k, c, r, s)];
  EXPECT_EQ(x_offset(sh, Layout::nhwc, 0, 1, 0, 0), 1u);  // channels interleaved
  EXPECT_EQ(x_offset(sh, Layout::nchw, 0, 0, 0, 1), 1u);
  for (int p = 0; p < sh.p(); ++p) {
    EXPECT_DOUBLE_EQ(conv_fwd_ref(sh, Layout::nchw, xn, wn, 1, 2, p, 1).value,
                     conv_fwd_ref(sh, Layout::nhwc, xh, wh, 1, 2, p, 1).value);
  }
}

TEST(DnnReference, OneByOneConvolutionIsAGemm) {
  ConvShape sh;
  sh.n = 1, sh.c = 6, sh.h = 1, sh.w = 4, sh.k = 3, sh.r = 1, sh.s = 1;
  auto x = gemm_input(sh.x_count(), 7), w = gemm_input(sh.w_count(), 8);
  for (int k = 0; k < 3; ++k) {
    for (int q = 0; q < 4; ++q) {
      double want = 0;
      for (int c = 0; c < 6; ++c) want += double(w[k * 6 + c]) * x[c * 4 + q];
      EXPECT_NEAR(conv_fwd_ref(sh, Layout::nchw, x, w, 0, k, 0, q).value, want, 1e-12);
    }
  }
  EXPECT_DOUBLE_EQ(sh.flops(), 2.0 * 3 * 4 * 6);
  EXPECT_EQ(sh.str(), "N1 C6 H1 W4 K3 1x1");
}

TEST(DnnReference, CheckConvFindsAWrongElementAndAcceptsRounding) {
  ConvShape sh = odd_shape();
  auto x = gemm_input(sh.x_count(), 11), w = gemm_input(sh.w_count(), 12);
  std::vector<float> y(sh.y_count());
  for (int n = 0; n < sh.n; ++n)
    for (int k = 0; k < sh.k; ++k)
      for (int p = 0; p < sh.p(); ++p)
        for (int q = 0; q < sh.q(); ++q)
          y[y_offset(sh, Layout::nhwc, n, k, p, q)] =
              static_cast<float>(conv_fwd_ref(sh, Layout::nhwc, x, w, n, k, p, q).value);
  auto half = to_device_bytes(y, DType::fp16);  // rounded to fp16: still correct
  auto ok = check_conv(ConvDirection::forward, sh, Layout::nhwc, DType::fp16, x, w, half, 1 << 20);
  EXPECT_TRUE(ok.ok()) << ok.first_bad;
  EXPECT_EQ(ok.checked, sh.y_count());
  y[y_offset(sh, Layout::nhwc, 1, 3, 2, 1)] += 0.5f;
  auto bad = check_conv(ConvDirection::forward, sh, Layout::nhwc, DType::fp32, x, w,
                        to_device_bytes(y, DType::fp32), 1 << 20);
  EXPECT_EQ(bad.bad, 1u);
  EXPECT_NE(bad.first_bad.find("y[1,3,2,1]"), std::string::npos) << bad.first_bad;
}

TEST(DnnReference, Activations) {
  EXPECT_EQ(activation_fwd_ref(Activation::relu, -2), 0);
  EXPECT_EQ(activation_fwd_ref(Activation::relu, 1.5), 1.5);
  EXPECT_NEAR(activation_fwd_ref(Activation::sigmoid, 0), 0.5, 1e-15);
  EXPECT_NEAR(activation_fwd_ref(Activation::tanh, 1), 0.7615941559557649, 1e-15);
  EXPECT_EQ(activation_bwd_ref(Activation::relu, -1, 0, 3), 0);
  EXPECT_EQ(activation_bwd_ref(Activation::relu, 1, 1, 3), 3);
  EXPECT_NEAR(activation_bwd_ref(Activation::sigmoid, 0, 0.5, 2), 0.5, 1e-15);
  EXPECT_NEAR(activation_bwd_ref(Activation::tanh, 0, 0, 2), 2, 1e-15);
  std::vector<float> x = {-1, 0.5f, 2}, y = {0, 0.5f, 2};
  auto yb = to_device_bytes(y, DType::fp32);
  EXPECT_TRUE(check_activation_fwd(Activation::relu, DType::fp32, x, yb, 10).ok());
  y[1] = 0.25f;
  EXPECT_FALSE(
      check_activation_fwd(Activation::relu, DType::fp32, x, to_device_bytes(y, DType::fp32), 10)
          .ok());
}

// One unit, one step, hand-computed: cuDNN's LSTM and GRU formulas.
TEST(DnnReference, RnnCellsFollowCudnnFormulas) {
  RnnLayerWeights L;
  L.in = 1, L.hidden = 1;
  auto set = [&](int gates, std::vector<float> w, std::vector<float> bw) {
    L.w.assign(gates, {0.f});
    L.rw.assign(gates, {0.f});
    L.bw.assign(gates, {0.f});
    L.br.assign(gates, {0.f});
    for (int g = 0; g < gates; ++g) {
      L.w[g] = {w[g]};
      L.bw[g] = {bw[g]};
    }
  };
  // LSTM: i = s(1), f = s(0) (no effect: c0 = 0), g = tanh(0.5), o = s(-1).
  set(4, {1, 0, 0.5f, -1}, {0, 0, 0, 0});
  auto y = rnn_forward_ref(RnnCell::lstm, {L}, {1.0f}, 1, 1, {0});
  auto s = [](double v) { return 1 / (1 + std::exp(-v)); };
  double c = s(1) * std::tanh(0.5);
  ASSERT_EQ(y.size(), 1u);
  EXPECT_NEAR(y[0], s(-1) * std::tanh(c), 1e-7);
  // GRU: r = s(0.3), z = s(-0.2), n = tanh(0.7 + bias 0.1 + r * (0 + 0)), h = (1-z) n.
  set(3, {0.3f, -0.2f, 0.7f}, {0, 0, 0.1f});
  y = rnn_forward_ref(RnnCell::gru, {L}, {1.0f}, 1, 1, {0});
  EXPECT_NEAR(y[0], (1 - s(-0.2)) * std::tanh(0.8), 1e-6);
  // Two steps: the second depends on the first's h through the recurrent weight.
  L.rw[2] = {0.5f};
  L.br[2] = {0.25f};
  y = rnn_forward_ref(RnnCell::gru, {L}, {1.0f, 0.0f}, 1, 2, {0});
  ASSERT_EQ(y.size(), 2u);
  double h1 = (1 - s(-0.2)) * std::tanh(0.8 + s(0.3) * 0.25);
  double r2 = s(0.0), z2 = s(0.0), n2 = std::tanh(0.1 + r2 * (0.5 * h1 + 0.25));
  EXPECT_NEAR(y[1], (1 - z2) * n2 + z2 * h1, 1e-6);
  EXPECT_EQ(rnn_gates(RnnCell::lstm), 4);
  EXPECT_STREQ(rnn_cell_name(RnnCell::gru), "GRU");
}

}  // namespace
}  // namespace dlenv
