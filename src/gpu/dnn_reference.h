// CPU references for the cuDNN work `dlenv verify` runs: 2-D convolution forward,
// backward-data and backward-filter in NCHW and NHWC, activations forward and
// backward, and LSTM / GRU forward with cuDNN's gate formulas. Elements are
// computed one at a time in double so large problems can be checked by sampling.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/numeric.h"

namespace dlenv {

enum class Layout { nchw, nhwc };
const char* layout_name(Layout l);

// A stride-`stride`, zero-padded cross-correlation (what every framework calls conv).
struct ConvShape {
  int n = 1, c = 1, h = 1, w = 1;  // input
  int k = 1, r = 1, s = 1;         // filters
  int pad = 0, stride = 1;
  int p() const { return (h + 2 * pad - r) / stride + 1; }  // output height
  int q() const { return (w + 2 * pad - s) / stride + 1; }  // output width
  size_t x_count() const { return static_cast<size_t>(n) * c * h * w; }
  size_t w_count() const { return static_cast<size_t>(k) * c * r * s; }
  size_t y_count() const { return static_cast<size_t>(n) * k * p() * q(); }
  double flops() const;     // 2 * N*K*P*Q * C*R*S: the same for all three directions
  std::string str() const;  // "N64 C256 H56 W56 K256 3x3"
};

// Element offsets in the layout (filters: KCRS for NCHW, KRSC for NHWC).
size_t x_offset(const ConvShape& sh, Layout l, int n, int c, int h, int w);
size_t y_offset(const ConvShape& sh, Layout l, int n, int k, int p, int q);
size_t w_offset(const ConvShape& sh, Layout l, int k, int c, int r, int s);

// A reference value and the sum of the magnitudes of its terms (for the tolerance).
struct RefValue {
  double value = 0;
  double magnitude = 0;
};
RefValue conv_fwd_ref(const ConvShape& sh, Layout l, const std::vector<float>& x,
                      const std::vector<float>& w, int n, int k, int p, int q);
RefValue conv_bwd_data_ref(const ConvShape& sh, Layout l, const std::vector<float>& w,
                           const std::vector<float>& dy, int n, int c, int h, int x);
RefValue conv_bwd_filter_ref(const ConvShape& sh, Layout l, const std::vector<float>& x,
                             const std::vector<float>& dy, int k, int c, int r, int s);

enum class ConvDirection { forward, backward_data, backward_filter };
const char* conv_direction_name(ConvDirection d);  // "forward", "backward-data", ...

// Checks `samples` elements of the output of `dir` (all when the output is smaller).
// `out` is the device-format output; `a`/`b` are the two inputs in float
// (forward: x, w; backward-data: w, dy; backward-filter: x, dy).
CheckResult check_conv(ConvDirection dir, const ConvShape& sh, Layout l, DType t,
                       const std::vector<float>& a, const std::vector<float>& b,
                       const std::vector<uint8_t>& out, size_t samples);

enum class Activation { relu, sigmoid, tanh };
const char* activation_name(Activation a);
double activation_fwd_ref(Activation a, double x);
// dx from y = f(x) and dy (the form cuDNN computes it in).
double activation_bwd_ref(Activation a, double x, double y, double dy);
// Checks y = f(x) and dx = f'(x) dy on `samples` elements (device-format y and dx).
CheckResult check_activation_fwd(Activation a, DType t, const std::vector<float>& x,
                                 const std::vector<uint8_t>& y, size_t samples);
CheckResult check_activation_bwd(Activation a, DType t, const std::vector<float>& x,
                                 const std::vector<uint8_t>& y, const std::vector<float>& dy,
                                 const std::vector<uint8_t>& dx, size_t samples);

// One layer's parameters in cuDNN's order: input matrices then recurrent ones
// (LSTM: gates i, f, g, o; GRU: r, z, n), each [hidden x in] row-major, and the
// matching bias vectors.
enum class RnnCell { lstm, gru };
const char* rnn_cell_name(RnnCell c);
int rnn_gates(RnnCell c);  // 4 for LSTM, 3 for GRU

struct RnnLayerWeights {
  int in = 0, hidden = 0;
  std::vector<std::vector<float>> w;   // gates() matrices, hidden x in
  std::vector<std::vector<float>> rw;  // gates() matrices, hidden x hidden
  std::vector<std::vector<float>> bw;  // gates() vectors
  std::vector<std::vector<float>> br;  // gates() vectors
};

// The top layer's output y[t][b][h] for sequences x[t][b][in] (zero initial state),
// for the batch entries in `batches` only and the first `steps` time steps.
// Returned as [t][j][h] with j the index into `batches`.
std::vector<float> rnn_forward_ref(RnnCell cell, const std::vector<RnnLayerWeights>& layers,
                                   const std::vector<float>& x, int batch, int steps,
                                   const std::vector<int>& batches);

// Compares device-format y ([T][B][H]) with the reference for the given batch entries.
CheckResult check_rnn(RnnCell cell, DType t, const std::vector<RnnLayerWeights>& layers,
                      const std::vector<float>& x, int batch, int steps,
                      const std::vector<int>& batches, const std::vector<uint8_t>& y);

}  // namespace dlenv
