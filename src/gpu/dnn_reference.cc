#include "gpu/dnn_reference.h"

#include <cmath>
#include <functional>
#include <vector>

#include "util/strings.h"

namespace dlenv {
namespace {

// xorshift sample indices, or every index when the output is small.
template <class Fn>
void for_samples(size_t total, size_t samples, Fn fn) {
  if (total <= samples) {
    for (size_t i = 0; i < total; ++i) fn(i);
    return;
  }
  uint32_t s = 0x2545f491u;
  for (size_t i = 0; i < samples; ++i) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    fn(s % total);
  }
}

double output_rel(DType t) {
  switch (t) {
    case DType::fp16: return 2.0 / 1024.0;
    case DType::bf16: return 2.0 / 128.0;
    case DType::tf32: return 1e-3;
    case DType::fp32: return 1e-5;
    case DType::fp8: return 2.0 / 16.0;  // not used by cuDNN tests: 2 ulp of E4M3
  }
  return 0;
}

void record(CheckResult& r, double got, double want, double allowed, const std::string& where) {
  double err = std::fabs(got - want);
  if (!(err <= allowed)) {  // NaN counts as bad
    if (r.bad == 0) {
      r.first_bad = where + " = " + std::to_string(got) + ", expected " + std::to_string(want);
    }
    ++r.bad;
  }
  if (err > r.max_abs_err || std::isnan(err)) r.max_abs_err = err;
  ++r.checked;
}

double sigmoid(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}

}  // namespace

const char* layout_name(Layout l) {
  return l == Layout::nchw ? "NCHW" : "NHWC";
}

double ConvShape::flops() const {
  return 2.0 * static_cast<double>(y_count()) * c * r * s;
}

std::string ConvShape::str() const {
  std::string out = "N" + std::to_string(n) + " C" + std::to_string(c) + " H" + std::to_string(h) +
                    " W" + std::to_string(w) + " K" + std::to_string(k) + " " + std::to_string(r) +
                    "x" + std::to_string(s);
  if (stride != 1) out += " stride " + std::to_string(stride);
  return out;
}

size_t x_offset(const ConvShape& sh, Layout l, int n, int c, int h, int w) {
  auto N = static_cast<size_t>(n), C = static_cast<size_t>(c), H = static_cast<size_t>(h),
       W = static_cast<size_t>(w);
  if (l == Layout::nchw) return ((N * sh.c + C) * sh.h + H) * sh.w + W;
  return ((N * sh.h + H) * sh.w + W) * sh.c + C;
}

size_t y_offset(const ConvShape& sh, Layout l, int n, int k, int p, int q) {
  auto N = static_cast<size_t>(n), K = static_cast<size_t>(k), P = static_cast<size_t>(p),
       Q = static_cast<size_t>(q);
  auto hp = static_cast<size_t>(sh.p()), wq = static_cast<size_t>(sh.q());
  if (l == Layout::nchw) return ((N * sh.k + K) * hp + P) * wq + Q;
  return ((N * hp + P) * wq + Q) * sh.k + K;
}

size_t w_offset(const ConvShape& sh, Layout l, int k, int c, int r, int s) {
  auto K = static_cast<size_t>(k), C = static_cast<size_t>(c), R = static_cast<size_t>(r),
       S = static_cast<size_t>(s);
  if (l == Layout::nchw) return ((K * sh.c + C) * sh.r + R) * sh.s + S;
  return ((K * sh.r + R) * sh.s + S) * sh.c + C;
}

RefValue conv_fwd_ref(const ConvShape& sh, Layout l, const std::vector<float>& x,
                      const std::vector<float>& w, int n, int k, int p, int q) {
  RefValue v;
  for (int c = 0; c < sh.c; ++c) {
    for (int r = 0; r < sh.r; ++r) {
      int h = p * sh.stride - sh.pad + r;
      if (h < 0 || h >= sh.h) continue;
      for (int s = 0; s < sh.s; ++s) {
        int ww = q * sh.stride - sh.pad + s;
        if (ww < 0 || ww >= sh.w) continue;
        double t = static_cast<double>(x[x_offset(sh, l, n, c, h, ww)]) *
                   static_cast<double>(w[w_offset(sh, l, k, c, r, s)]);
        v.value += t;
        v.magnitude += std::fabs(t);
      }
    }
  }
  return v;
}

RefValue conv_bwd_data_ref(const ConvShape& sh, Layout l, const std::vector<float>& w,
                           const std::vector<float>& dy, int n, int c, int h, int x) {
  RefValue v;
  for (int k = 0; k < sh.k; ++k) {
    for (int r = 0; r < sh.r; ++r) {
      int ph = h + sh.pad - r;
      if (ph < 0 || ph % sh.stride != 0) continue;
      int p = ph / sh.stride;
      if (p >= sh.p()) continue;
      for (int s = 0; s < sh.s; ++s) {
        int qw = x + sh.pad - s;
        if (qw < 0 || qw % sh.stride != 0) continue;
        int q = qw / sh.stride;
        if (q >= sh.q()) continue;
        double t = static_cast<double>(w[w_offset(sh, l, k, c, r, s)]) *
                   static_cast<double>(dy[y_offset(sh, l, n, k, p, q)]);
        v.value += t;
        v.magnitude += std::fabs(t);
      }
    }
  }
  return v;
}

RefValue conv_bwd_filter_ref(const ConvShape& sh, Layout l, const std::vector<float>& x,
                             const std::vector<float>& dy, int k, int c, int r, int s) {
  RefValue v;
  for (int n = 0; n < sh.n; ++n) {
    for (int p = 0; p < sh.p(); ++p) {
      int h = p * sh.stride - sh.pad + r;
      if (h < 0 || h >= sh.h) continue;
      for (int q = 0; q < sh.q(); ++q) {
        int ww = q * sh.stride - sh.pad + s;
        if (ww < 0 || ww >= sh.w) continue;
        double t = static_cast<double>(x[x_offset(sh, l, n, c, h, ww)]) *
                   static_cast<double>(dy[y_offset(sh, l, n, k, p, q)]);
        v.value += t;
        v.magnitude += std::fabs(t);
      }
    }
  }
  return v;
}

const char* conv_direction_name(ConvDirection d) {
  switch (d) {
    case ConvDirection::forward: return "forward";
    case ConvDirection::backward_data: return "backward-data";
    case ConvDirection::backward_filter: return "backward-filter";
  }
  return "?";
}

CheckResult check_conv(ConvDirection dir, const ConvShape& sh, Layout l, DType t,
                       const std::vector<float>& a, const std::vector<float>& b,
                       const std::vector<uint8_t>& out, size_t samples) {
  CheckResult r;
  // Inputs are exact in every type and their products exact in fp32, so what is left
  // is the accumulation (order, Winograd/FFT transforms) and the output rounding:
  // bounded by a small fraction of the terms' magnitudes, plus the output type's ulp.
  const double rel = output_rel(t);
  const double mag = 2.5e-4;
  r.tolerance = {rel, mag};
  // Each sampled element's reference is a long sum: gathered first, computed on every
  // thread, then recorded in sample order (the first bad element named is always the same).
  struct Pending {
    size_t offset;
    std::string where;
    std::function<RefValue()> reference;
    RefValue want;
  };
  std::vector<Pending> pending;
  auto check_at = [&pending](size_t offset, std::function<RefValue()> reference,
                             std::string where) {
    pending.push_back({offset, std::move(where), std::move(reference), {}});
  };
  // Enumerate logical elements (layout-independent order), then map to offsets.
  if (dir == ConvDirection::forward) {
    const size_t total = sh.y_count();
    const int P = sh.p(), Q = sh.q();
    for_samples(total, samples, [&](size_t i) {
      int q = static_cast<int>(i % Q), p = static_cast<int>(i / Q % P);
      int k = static_cast<int>(i / Q / P % sh.k), n = static_cast<int>(i / Q / P / sh.k);
      check_at(
          y_offset(sh, l, n, k, p, q),
          [=, &sh, &a, &b] { return conv_fwd_ref(sh, l, a, b, n, k, p, q); },
          "y[" + std::to_string(n) + "," + std::to_string(k) + "," + std::to_string(p) + "," +
              std::to_string(q) + "]");
    });
  } else if (dir == ConvDirection::backward_data) {
    const size_t total = sh.x_count();
    for_samples(total, samples, [&](size_t i) {
      int x = static_cast<int>(i % sh.w), h = static_cast<int>(i / sh.w % sh.h);
      int c = static_cast<int>(i / sh.w / sh.h % sh.c),
          n = static_cast<int>(i / sh.w / sh.h / sh.c);
      check_at(
          x_offset(sh, l, n, c, h, x),
          [=, &sh, &a, &b] { return conv_bwd_data_ref(sh, l, a, b, n, c, h, x); },
          "dx[" + std::to_string(n) + "," + std::to_string(c) + "," + std::to_string(h) + "," +
              std::to_string(x) + "]");
    });
  } else {
    const size_t total = sh.w_count();
    for_samples(total, samples, [&](size_t i) {
      int s = static_cast<int>(i % sh.s), rr = static_cast<int>(i / sh.s % sh.r);
      int c = static_cast<int>(i / sh.s / sh.r % sh.c),
          k = static_cast<int>(i / sh.s / sh.r / sh.c);
      check_at(
          w_offset(sh, l, k, c, rr, s),
          [=, &sh, &a, &b] { return conv_bwd_filter_ref(sh, l, a, b, k, c, rr, s); },
          "dw[" + std::to_string(k) + "," + std::to_string(c) + "," + std::to_string(rr) + "," +
              std::to_string(s) + "]");
    });
  }
  for_each_range(
      pending.size(),
      [&pending](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) pending[i].want = pending[i].reference();
      },
      8);
  for (const Pending& p : pending) {
    const double got = from_device_bytes(out, p.offset, t);
    record(r, got, p.want.value, rel * std::fabs(p.want.value) + mag * p.want.magnitude + 1e-6,
           p.where);
  }
  return r;
}

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::relu: return "relu";
    case Activation::sigmoid: return "sigmoid";
    case Activation::tanh: return "tanh";
  }
  return "?";
}

double activation_fwd_ref(Activation a, double x) {
  switch (a) {
    case Activation::relu: return x > 0 ? x : 0;
    case Activation::sigmoid: return sigmoid(x);
    case Activation::tanh: return std::tanh(x);
  }
  return 0;
}

double activation_bwd_ref(Activation a, double x, double y, double dy) {
  switch (a) {
    case Activation::relu: return x > 0 ? dy : 0;
    case Activation::sigmoid: return dy * y * (1 - y);
    case Activation::tanh: return dy * (1 - y * y);
  }
  return 0;
}

CheckResult check_activation_fwd(Activation a, DType t, const std::vector<float>& x,
                                 const std::vector<uint8_t>& y, size_t samples) {
  CheckResult r;
  const double rel = output_rel(t) + 1e-6, abs = t == DType::fp16 ? 1e-4 : 1e-6;
  r.tolerance = {rel, abs};
  for_samples(x.size(), samples, [&](size_t i) {
    double want = activation_fwd_ref(a, x[i]);
    record(r, from_device_bytes(y, i, t), want, rel * std::fabs(want) + abs,
           "y[" + std::to_string(i) + "]");
  });
  return r;
}

CheckResult check_activation_bwd(Activation a, DType t, const std::vector<float>& x,
                                 const std::vector<uint8_t>& y, const std::vector<float>& dy,
                                 const std::vector<uint8_t>& dx, size_t samples) {
  CheckResult r;
  const double rel = 2 * output_rel(t) + 1e-6, abs = t == DType::fp16 ? 2e-4 : 1e-6;
  r.tolerance = {rel, abs};
  for_samples(x.size(), samples, [&](size_t i) {
    // From the y the GPU produced (and cuDNN differentiates through).
    double want = activation_bwd_ref(a, x[i], from_device_bytes(y, i, t), dy[i]);
    record(r, from_device_bytes(dx, i, t), want, rel * std::fabs(want) + abs,
           "dx[" + std::to_string(i) + "]");
  });
  return r;
}

const char* rnn_cell_name(RnnCell c) {
  return c == RnnCell::lstm ? "LSTM" : "GRU";
}

int rnn_gates(RnnCell c) {
  return c == RnnCell::lstm ? 4 : 3;
}

std::vector<float> rnn_forward_ref(RnnCell cell, const std::vector<RnnLayerWeights>& layers,
                                   const std::vector<float>& x, int batch, int steps,
                                   const std::vector<int>& batches) {
  const size_t nb = batches.size();
  // Per layer input for the selected batch entries: [t][j][in].
  int in0 = layers.empty() ? 0 : layers[0].in;
  std::vector<double> input(static_cast<size_t>(steps) * nb * in0);
  for (int t = 0; t < steps; ++t) {
    for (size_t j = 0; j < nb; ++j) {
      for (int i = 0; i < in0; ++i) {
        input[(t * nb + j) * in0 + i] =
            x[(static_cast<size_t>(t) * batch + batches[j]) * in0 + static_cast<size_t>(i)];
      }
    }
  }
  int in = in0;
  for (const auto& L : layers) {
    const int H = L.hidden;
    std::vector<double> out(static_cast<size_t>(steps) * nb * H);
    std::vector<double> h(nb * H, 0.0), c(nb * H, 0.0);
    auto affine = [&](const std::vector<float>& m, const std::vector<float>& b, const double* v,
                      int cols, int row) {
      double s = b[static_cast<size_t>(row)];
      const float* mr = m.data() + static_cast<size_t>(row) * cols;
      for (int i = 0; i < cols; ++i) s += static_cast<double>(mr[i]) * v[i];
      return s;
    };
    for (int t = 0; t < steps; ++t) {
      std::vector<double> hn(nb * H), cn(nb * H);
      for (size_t j = 0; j < nb; ++j) {
        const double* xv = &input[(t * nb + j) * in];
        const double* hv = &h[j * H];
        // Every unit on its own: the units of one step are computed on all threads.
        for_each_range(
            static_cast<size_t>(H),
            [&](size_t unit_begin, size_t unit_end) {
              for (int u = static_cast<int>(unit_begin); u < static_cast<int>(unit_end); ++u) {
                if (cell == RnnCell::lstm) {
                  double g[4];
                  for (int k = 0; k < 4; ++k) {
                    g[k] = affine(L.w[k], L.bw[k], xv, in, u) + affine(L.rw[k], L.br[k], hv, H, u);
                  }
                  double ig = sigmoid(g[0]), fg = sigmoid(g[1]), cg = std::tanh(g[2]),
                         og = sigmoid(g[3]);
                  double cc = fg * c[j * H + u] + ig * cg;
                  cn[j * H + u] = cc;
                  hn[j * H + u] = og * std::tanh(cc);
                } else {
                  double rg = sigmoid(affine(L.w[0], L.bw[0], xv, in, u) +
                                      affine(L.rw[0], L.br[0], hv, H, u));
                  double zg = sigmoid(affine(L.w[1], L.bw[1], xv, in, u) +
                                      affine(L.rw[1], L.br[1], hv, H, u));
                  double ng = std::tanh(affine(L.w[2], L.bw[2], xv, in, u) +
                                        rg * affine(L.rw[2], L.br[2], hv, H, u));
                  hn[j * H + u] = (1 - zg) * ng + zg * hv[u];
                }
              }
            },
            64);
      }
      h.swap(hn);
      c.swap(cn);
      for (size_t j = 0; j < nb; ++j) {
        for (int u = 0; u < H; ++u) out[(t * nb + j) * H + u] = h[j * H + u];
      }
    }
    input.swap(out);
    in = H;
  }
  return std::vector<float>(input.begin(), input.end());
}

CheckResult check_rnn(RnnCell cell, DType t, const std::vector<RnnLayerWeights>& layers,
                      const std::vector<float>& x, int batch, int steps,
                      const std::vector<int>& batches, const std::vector<uint8_t>& y) {
  CheckResult r;
  if (layers.empty()) return r;
  const int H = layers.back().hidden;
  // Outputs are bounded by 1; the error is the accumulated rounding of the hidden
  // state (fp16 storage between layers and steps, or TF32 GEMMs for fp32).
  const double abs = t == DType::fp16 ? 1.5e-2 : 2e-3;
  r.tolerance = {0, abs};
  auto ref = rnn_forward_ref(cell, layers, x, batch, steps, batches);
  const size_t nb = batches.size();
  for (int s = 0; s < steps; ++s) {
    for (size_t j = 0; j < nb; ++j) {
      for (int u = 0; u < H; ++u) {
        size_t idx = (static_cast<size_t>(s) * batch + batches[j]) * H + static_cast<size_t>(u);
        record(r, from_device_bytes(y, idx, t), ref[(s * nb + j) * H + u], abs,
               "y[t=" + std::to_string(s) + ",b=" + std::to_string(batches[j]) +
                   ",h=" + std::to_string(u) + "]");
      }
    }
  }
  return r;
}

}  // namespace dlenv
