// The cuDNN part of `dlenv verify`: convolution forward / backward-data /
// backward-filter (NCHW and NHWC, fp16 and fp32), activations forward and backward,
// LSTM and GRU forward. Each touches a different cuDNN sub-library (cnn, ops, adv),
// so a missing or mismatched one fails here, by name. Every output is checked
// against the CPU reference in dnn_reference.cc.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "gpu/dnn_reference.h"
#include "gpu/verify_internal.h"
#include "util/strings.h"

namespace dlenv::verify_detail {
namespace {

constexpr int kDnnStatus = -2;  // StepError code: `what` is a cuDNN status text

#define DLENV_DNN(call, what)                                                                    \
  do {                                                                                           \
    cudnnStatus_t st_ = (call);                                                                  \
    if (st_ != 0) return StepError{kDnnStatus, std::string(what) + ": " + dnn.status_text(st_)}; \
  } while (0)

// RAII for one cuDNN descriptor.
template <class T>
struct Desc {
  T d = nullptr;
  cudnnStatus_t (*destroy)(T) = nullptr;
  Desc() = default;
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  ~Desc() {
    if (d && destroy) destroy(d);
  }
};

const char* fwd_algo_name(int a) {
  static const char* const kNames[] = {
      "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
      "WINOGRAD",      "WINOGRAD_NONFUSED"};
  return a >= 0 && a < 8 ? kNames[a] : "?";
}
const char* bwd_data_algo_name(int a) {
  static const char* const kNames[] = {"ALGO_0",     "ALGO_1",   "FFT",
                                       "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
  return a >= 0 && a < 6 ? kNames[a] : "?";
}
const char* bwd_filter_algo_name(int a) {
  static const char* const kNames[] = {
      "ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED", "FFT_TILING"};
  return a >= 0 && a < 7 ? kNames[a] : "?";
}

int dnn_type(DType t) {
  return t == DType::fp16 ? kCudnnDataHalf : kCudnnDataFloat;
}

std::string error_text(const CudaApi& api, const StepError& e) {
  return e.code == kDnnStatus ? e.what : e.what + ": " + api.error_text(e.code);
}

// The host inputs of a convolution shape: generated once, shared by every direction,
// layout and type tested on that shape.
struct ConvInputs {
  std::vector<float> x, w, dy;
};

struct Ctx {
  const CudaApi& api;
  const CudnnApi& dnn;
  cudnnHandle_t handle;
  const VerifyOptions& o;
  int major;                                       // cuDNN major, for sub-library names
  std::map<std::string, ConvInputs>* conv_inputs;  // by ConvShape::str()
  std::vector<uint8_t>* result;  // downloaded outputs: its memory reused by every test
};

const ConvInputs& conv_inputs(const Ctx& c, const ConvShape& sh) {
  auto [it, added] = c.conv_inputs->try_emplace(sh.str());
  if (added) {
    it->second.x = gemm_input(sh.x_count(), 31);
    it->second.w = gemm_input(sh.w_count(), 32);
    it->second.dy = gemm_input(sh.y_count(), 33);
  }
  return it->second;
}

// ---- convolutions --------------------------------------------------------------

struct ConvRun {
  double ms = 0;
  std::string algo;
  CheckResult check;
};

std::optional<StepError> conv_once(const Ctx& c, ConvDirection dir, Layout l, DType t,
                                   const ConvShape& sh, bool timed, size_t samples, ConvRun& out) {
  const CudnnApi& dnn = c.dnn;
  const int fmt = l == Layout::nchw ? kCudnnTensorNchw : kCudnnTensorNhwc;
  const int dt = dnn_type(t);
  Desc<cudnnTensorDescriptor_t> xd, yd;
  Desc<cudnnFilterDescriptor_t> wd;
  Desc<cudnnConvolutionDescriptor_t> cd;
  xd.destroy = yd.destroy = dnn.destroy_tensor;
  wd.destroy = dnn.destroy_filter;
  cd.destroy = dnn.destroy_conv;
  DLENV_DNN(dnn.create_tensor(&xd.d), "cudnnCreateTensorDescriptor");
  DLENV_DNN(dnn.create_tensor(&yd.d), "cudnnCreateTensorDescriptor");
  DLENV_DNN(dnn.create_filter(&wd.d), "cudnnCreateFilterDescriptor");
  DLENV_DNN(dnn.create_conv(&cd.d), "cudnnCreateConvolutionDescriptor");
  DLENV_DNN(dnn.set_tensor_4d(xd.d, fmt, dt, sh.n, sh.c, sh.h, sh.w),
            "cudnnSetTensor4dDescriptor x");
  DLENV_DNN(dnn.set_tensor_4d(yd.d, fmt, dt, sh.n, sh.k, sh.p(), sh.q()),
            "cudnnSetTensor4dDescriptor y");
  DLENV_DNN(dnn.set_filter_4d(wd.d, dt, fmt, sh.k, sh.c, sh.r, sh.s), "cudnnSetFilter4dDescriptor");
  // fp16 data accumulates in fp32 (what PyTorch does); fp32 leaves the math to
  // cuDNN's default, which allows TF32 on Ampere and newer, as PyTorch's default does.
  DLENV_DNN(dnn.set_conv_2d(cd.d, sh.pad, sh.pad, sh.stride, sh.stride, 1, 1,
                            kCudnnCrossCorrelation, kCudnnDataFloat),
            "cudnnSetConvolution2dDescriptor");
  DLENV_DNN(dnn.set_conv_math(cd.d, t == DType::fp16 ? kCudnnTensorOpMath : kCudnnDefaultMath),
            "cudnnSetConvolutionMathType");

  // Inputs: x and w for forward, w and dy for backward-data, x and dy for backward-filter.
  const ConvInputs& in = conv_inputs(c, sh);
  const std::vector<float>&x = in.x, &w = in.w, &dy = in.dy;
  const std::vector<float>& a = dir == ConvDirection::backward_data ? w : x;
  const std::vector<float>& b = dir == ConvDirection::forward ? w : dy;
  const size_t out_count = dir == ConvDirection::forward         ? sh.y_count()
                           : dir == ConvDirection::backward_data ? sh.x_count()
                                                                 : sh.w_count();
  DeviceBuffer da{&c.api}, db{&c.api}, dout{&c.api}, ws{&c.api};
  if (auto e = upload(c.api, da, a, t, "input")) return e;
  if (auto e = upload(c.api, db, b, t, "input")) return e;
  if (CUresult e = c.api.cuMemAlloc(&dout.ptr, out_count * elem_size(t)); e != kCudaSuccess)
    return StepError{e, "cuMemAlloc output"};

  // Algorithm: measured (--full, as torch.backends.cudnn.benchmark does) or heuristic.
  CudnnConvPerf perf[16];
  int returned = 0;
  const bool find = c.o.full && timed;
  const char* (*algo_name)(int) = fwd_algo_name;
  if (dir == ConvDirection::forward) {
    auto fn = find ? dnn.find_fwd_algo : dnn.get_fwd_algo;
    DLENV_DNN(
        fn(c.handle, xd.d, wd.d, cd.d, yd.d, 16, &returned, perf),
        find ? "cudnnFindConvolutionForwardAlgorithm" : "cudnnGetConvolutionForwardAlgorithm_v7");
  } else if (dir == ConvDirection::backward_data) {
    algo_name = bwd_data_algo_name;
    auto fn = find ? dnn.find_bwd_data_algo : dnn.get_bwd_data_algo;
    DLENV_DNN(fn(c.handle, wd.d, yd.d, cd.d, xd.d, 16, &returned, perf),
              find ? "cudnnFindConvolutionBackwardDataAlgorithm"
                   : "cudnnGetConvolutionBackwardDataAlgorithm_v7");
  } else {
    algo_name = bwd_filter_algo_name;
    auto fn = find ? dnn.find_bwd_filter_algo : dnn.get_bwd_filter_algo;
    DLENV_DNN(fn(c.handle, xd.d, yd.d, cd.d, wd.d, 16, &returned, perf),
              find ? "cudnnFindConvolutionBackwardFilterAlgorithm"
                   : "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
  }
  const CudnnConvPerf* chosen = nullptr;
  const size_t ws_limit = size_t{1} << 30;
  for (int i = 0; i < std::min(returned, 16); ++i) {
    if (perf[i].status == 0 && perf[i].memory <= ws_limit) {
      chosen = &perf[i];
      break;
    }
  }
  if (!chosen) {
    return StepError{kDnnStatus, std::string("no cuDNN algorithm supports this convolution (") +
                                     std::to_string(returned) + " candidates, first status " +
                                     (returned > 0 ? dnn.status_text(perf[0].status) : "none") +
                                     ")"};
  }
  out.algo = algo_name(chosen->algo);
  if (chosen->memory > 0) {
    if (CUresult e = c.api.cuMemAlloc(&ws.ptr, chosen->memory); e != kCudaSuccess)
      return StepError{e, "cuMemAlloc cuDNN workspace " + human_bytes(chosen->memory)};
  }
  const float one = 1.0f, zero = 0.0f;
  auto* wsp = reinterpret_cast<void*>(ws.ptr);
  auto* pa = reinterpret_cast<const void*>(da.ptr);
  auto* pb = reinterpret_cast<const void*>(db.ptr);
  auto* po = reinterpret_cast<void*>(dout.ptr);
  auto op = [&]() -> std::optional<StepError> {
    if (dir == ConvDirection::forward) {
      DLENV_DNN(dnn.conv_fwd(c.handle, &one, xd.d, pa, wd.d, pb, cd.d, chosen->algo, wsp,
                             chosen->memory, &zero, yd.d, po),
                "cudnnConvolutionForward");
    } else if (dir == ConvDirection::backward_data) {
      DLENV_DNN(dnn.conv_bwd_data(c.handle, &one, wd.d, pa, yd.d, pb, cd.d, chosen->algo, wsp,
                                  chosen->memory, &zero, xd.d, po),
                "cudnnConvolutionBackwardData");
    } else {
      DLENV_DNN(dnn.conv_bwd_filter(c.handle, &one, xd.d, pa, yd.d, pb, cd.d, chosen->algo, wsp,
                                    chosen->memory, &zero, wd.d, po),
                "cudnnConvolutionBackwardFilter");
    }
    return std::nullopt;
  };
  if (timed) {
    const int iters = c.o.full ? 20 : 5;
    if (auto e = time_op(c.api, c.o.full ? 3 : 1, iters, op, out.ms)) return e;
  } else {
    if (auto e = op()) return e;
    if (CUresult e = c.api.cuCtxSynchronize(); e != kCudaSuccess)
      return StepError{e, "cuCtxSynchronize"};
  }
  std::vector<uint8_t>& result = *c.result;
  if (auto e = download(c.api, dout, out_count * elem_size(t), result, "output")) return e;
  out.check = check_conv(dir, sh, l, t, a, b, result, samples);
  return std::nullopt;
}

DnnResult conv_test(const Ctx& c, ConvDirection dir, Layout l, DType t, const ConvShape& big,
                    const GpuPeaks* peaks) {
  DnnResult d;
  d.op = std::string("conv ") + conv_direction_name(dir);
  d.layout = layout_name(l);
  d.type = t;
  d.shape = big.str();
  d.sublibrary = cudnn_sublibrary("cnn", c.major, false);
  d.iterations = c.o.full ? 20 : 5;
  if (peaks) d.peak = t == DType::fp16 ? peaks->fp16 : peaks->tf32;
  // Small, odd-shaped, every element checked; then the timed problem, sampled.
  ConvShape small;
  small.n = 2, small.c = 5, small.h = 9, small.w = 7, small.k = 6, small.r = 3, small.s = 3;
  small.pad = 1;
  ConvRun s, b;
  if (auto e = conv_once(c, dir, l, t, small, false, 1u << 20, s)) {
    d.error = error_text(c.api, *e);
    return d;
  }
  if (auto e = conv_once(c, dir, l, t, big, true, c.o.full ? 256 : 64, b)) {
    d.error = error_text(c.api, *e);
    d.check = s.check;
    return d;
  }
  d.algo = b.algo;
  d.ms = b.ms;
  d.tflops = b.ms > 0 ? big.flops() / (b.ms * 1e-3) / 1e12 : 0;
  // Report the first failing check (small one first: it is the exhaustive one).
  d.check = !s.check.ok() ? s.check : b.check;
  if (s.check.ok()) d.check.checked += s.check.checked;
  return d;
}

// ---- activations ---------------------------------------------------------------

std::vector<DnnResult> activation_tests(const Ctx& c, DType t, size_t count,
                                        const GpuPeaks* peaks) {
  const CudnnApi& dnn = c.dnn;
  std::vector<DnnResult> rows;
  auto shape = "x" + std::to_string(count / (1 << 20)) + "M";
  if (count < (1 << 20)) shape = std::to_string(count);
  auto x = gemm_input(count, 41);
  for (auto& v : x) v *= 4;  // [-4, 4]: both tails of sigmoid/tanh
  auto dy = gemm_input(count, 42);
  std::vector<Activation> kinds = {Activation::relu, Activation::sigmoid, Activation::tanh};
  if (!c.o.full) kinds.resize(1);  // --quick: one activation touches libcudnn_ops
  for (Activation a : kinds) {
    DnnResult f, bw;
    f.op = std::string(activation_name(a)) + " forward";
    bw.op = std::string(activation_name(a)) + " backward";
    for (DnnResult* d : {&f, &bw}) {
      d->type = t;
      d->shape = shape + " elements";
      d->sublibrary = cudnn_sublibrary("ops", c.major, false);
      d->iterations = c.o.full ? 20 : 5;
      if (peaks) d->peak = peaks->memory_gbs;
    }
    auto run = [&]() -> std::optional<StepError> {
      Desc<cudnnTensorDescriptor_t> td;
      Desc<cudnnActivationDescriptor_t> ad;
      td.destroy = dnn.destroy_tensor;
      ad.destroy = dnn.destroy_activation;
      DLENV_DNN(dnn.create_tensor(&td.d), "cudnnCreateTensorDescriptor");
      const int w = 1024;
      const int h = static_cast<int>((count + w - 1) / w);
      if (static_cast<size_t>(h) * w != count)
        return StepError{kDnnStatus, "activation size must be a multiple of 1024"};
      DLENV_DNN(dnn.set_tensor_4d(td.d, kCudnnTensorNchw, dnn_type(t), 1, 1, h, w),
                "cudnnSetTensor4dDescriptor");
      DLENV_DNN(dnn.create_activation(&ad.d), "cudnnCreateActivationDescriptor");
      int mode = a == Activation::relu      ? kCudnnActivationRelu
                 : a == Activation::sigmoid ? kCudnnActivationSigmoid
                                            : kCudnnActivationTanh;
      DLENV_DNN(dnn.set_activation(ad.d, mode, kCudnnNotPropagateNan, 0.0),
                "cudnnSetActivationDescriptor");
      DeviceBuffer dx{&c.api}, ddy{&c.api}, y{&c.api}, dxo{&c.api};
      if (auto e = upload(c.api, dx, x, t, "x")) return e;
      if (auto e = upload(c.api, ddy, dy, t, "dy")) return e;
      const size_t bytes = count * elem_size(t);
      if (CUresult e = c.api.cuMemAlloc(&y.ptr, bytes); e != kCudaSuccess)
        return StepError{e, "cuMemAlloc y"};
      if (CUresult e = c.api.cuMemAlloc(&dxo.ptr, bytes); e != kCudaSuccess)
        return StepError{e, "cuMemAlloc dx"};
      const float one = 1.0f, zero = 0.0f;
      auto fwd = [&]() -> std::optional<StepError> {
        DLENV_DNN(dnn.activation_fwd(c.handle, ad.d, &one, td.d, reinterpret_cast<void*>(dx.ptr),
                                     &zero, td.d, reinterpret_cast<void*>(y.ptr)),
                  "cudnnActivationForward");
        return std::nullopt;
      };
      auto bwd = [&]() -> std::optional<StepError> {
        DLENV_DNN(dnn.activation_bwd(c.handle, ad.d, &one, td.d, reinterpret_cast<void*>(y.ptr),
                                     td.d, reinterpret_cast<void*>(ddy.ptr), td.d,
                                     reinterpret_cast<void*>(dx.ptr), &zero, td.d,
                                     reinterpret_cast<void*>(dxo.ptr)),
                  "cudnnActivationBackward");
        return std::nullopt;
      };
      if (auto e = time_op(c.api, 1, f.iterations, fwd, f.ms)) return e;
      std::vector<uint8_t> yh, dxh;
      if (auto e = download(c.api, y, bytes, yh, "y")) return e;
      f.gbs = bandwidth_gbs(2 * bytes, f.ms);
      f.check = check_activation_fwd(a, t, x, yh, 4096);
      if (auto e = time_op(c.api, 1, bw.iterations, bwd, bw.ms)) {
        bw.error = error_text(c.api, *e);
        return std::nullopt;
      }
      if (auto e = download(c.api, dxo, bytes, dxh, "dx")) return e;
      bw.gbs = bandwidth_gbs(4 * bytes, bw.ms);
      bw.check = check_activation_bwd(a, t, x, yh, dy, dxh, 4096);
      return std::nullopt;
    };
    if (auto e = run()) {
      f.error = error_text(c.api, *e);
      bw.error = "not run: the forward pass failed";
    }
    rows.push_back(f);
    rows.push_back(bw);
  }
  return rows;
}

// ---- RNNs ----------------------------------------------------------------------

struct RnnShape {
  int steps = 1, batch = 1, input = 1, hidden = 1, layers = 1;
  std::string str() const {
    return "T" + std::to_string(steps) + " B" + std::to_string(batch) + " I" +
           std::to_string(input) + " H" + std::to_string(hidden) + " x" + std::to_string(layers) +
           " layers";
  }
  double flops(RnnCell cell) const {
    double per_layer_step = 0;
    for (int l = 0; l < layers; ++l) {
      int in = l == 0 ? input : hidden;
      per_layer_step += 2.0 * rnn_gates(cell) * hidden * static_cast<double>(in + hidden) * batch;
    }
    return per_layer_step * steps;
  }
};

// Deterministic weights, exact in fp16: multiples of 1/1024, about +-1/sqrt(hidden).
float weight_value(uint64_t matrix, size_t i, int m) {
  const auto q = static_cast<int>(input_hash(matrix, i) % static_cast<uint64_t>(2 * m + 1)) - m;
  return static_cast<float>(q) / 1024.0f;
}

struct RnnRun {
  double ms = 0;
  CheckResult check;
};

std::optional<StepError> rnn_once(const Ctx& c, RnnCell cell, DType t, const RnnShape& sh,
                                  bool timed, int check_steps, const std::vector<int>& batches,
                                  RnnRun& out) {
  const CudnnApi& dnn = c.dnn;
  const int dt = dnn_type(t);
  Desc<cudnnDropoutDescriptor_t> dd;
  Desc<cudnnRNNDescriptor_t> rd;
  Desc<cudnnRNNDataDescriptor_t> xd, yd;
  Desc<cudnnTensorDescriptor_t> hd, md, bd;
  dd.destroy = dnn.destroy_dropout;
  rd.destroy = dnn.destroy_rnn;
  xd.destroy = yd.destroy = dnn.destroy_rnn_data;
  hd.destroy = md.destroy = bd.destroy = dnn.destroy_tensor;
  DLENV_DNN(dnn.create_dropout(&dd.d), "cudnnCreateDropoutDescriptor");
  DLENV_DNN(dnn.set_dropout(dd.d, c.handle, 0.0f, nullptr, 0, 0), "cudnnSetDropoutDescriptor");
  DLENV_DNN(dnn.create_rnn(&rd.d), "cudnnCreateRNNDescriptor");
  DLENV_DNN(
      dnn.set_rnn_v8(rd.d, kCudnnRnnAlgoStandard, cell == RnnCell::lstm ? kCudnnLstm : kCudnnGru,
                     kCudnnRnnDoubleBias, kCudnnUnidirectional, kCudnnLinearInput, dt,
                     kCudnnDataFloat, t == DType::fp16 ? kCudnnTensorOpMath : kCudnnDefaultMath,
                     sh.input, sh.hidden, sh.hidden, sh.layers, dd.d, 0),
      "cudnnSetRNNDescriptor_v8");
  std::vector<int> seq(static_cast<size_t>(sh.batch), sh.steps);
  DLENV_DNN(dnn.create_rnn_data(&xd.d), "cudnnCreateRNNDataDescriptor");
  DLENV_DNN(dnn.create_rnn_data(&yd.d), "cudnnCreateRNNDataDescriptor");
  DLENV_DNN(dnn.set_rnn_data(xd.d, dt, kCudnnRnnDataSeqMajorPacked, sh.steps, sh.batch, sh.input,
                             seq.data(), nullptr),
            "cudnnSetRNNDataDescriptor x");
  DLENV_DNN(dnn.set_rnn_data(yd.d, dt, kCudnnRnnDataSeqMajorPacked, sh.steps, sh.batch, sh.hidden,
                             seq.data(), nullptr),
            "cudnnSetRNNDataDescriptor y");
  DLENV_DNN(dnn.create_tensor(&hd.d), "cudnnCreateTensorDescriptor");
  const int hdims[3] = {sh.layers, sh.batch, sh.hidden};
  const int hstrides[3] = {sh.batch * sh.hidden, sh.hidden, 1};
  DLENV_DNN(dnn.set_tensor_nd(hd.d, dt, 3, hdims, hstrides), "cudnnSetTensorNdDescriptor h");

  size_t weight_bytes = 0, ws_bytes = 0, reserve_bytes = 0;
  DLENV_DNN(dnn.rnn_weight_space_size(c.handle, rd.d, &weight_bytes), "cudnnGetRNNWeightSpaceSize");
  DLENV_DNN(dnn.rnn_temp_space_sizes(c.handle, rd.d, kCudnnFwdModeInference, xd.d, &ws_bytes,
                                     &reserve_bytes),
            "cudnnGetRNNTempSpaceSizes");
  DeviceBuffer wbuf{&c.api}, ws{&c.api}, reserve{&c.api}, dx{&c.api}, dyb{&c.api}, dseq{&c.api};
  if (CUresult e = c.api.cuMemAlloc(&wbuf.ptr, weight_bytes); e != kCudaSuccess)
    return StepError{e, "cuMemAlloc RNN weights " + human_bytes(weight_bytes)};
  if (ws_bytes > 0) {
    if (CUresult e = c.api.cuMemAlloc(&ws.ptr, ws_bytes); e != kCudaSuccess)
      return StepError{e, "cuMemAlloc RNN workspace " + human_bytes(ws_bytes)};
  }
  if (reserve_bytes > 0) {
    if (CUresult e = c.api.cuMemAlloc(&reserve.ptr, reserve_bytes); e != kCudaSuccess)
      return StepError{e, "cuMemAlloc RNN reserve " + human_bytes(reserve_bytes)};
  }

  // Fill the weight space through cuDNN's own map of it, keeping a float copy per
  // matrix for the CPU reference.
  const size_t es = elem_size(t);
  std::vector<uint8_t> host_weights(weight_bytes, 0);
  std::vector<RnnLayerWeights> layers(static_cast<size_t>(sh.layers));
  DLENV_DNN(dnn.create_tensor(&md.d), "cudnnCreateTensorDescriptor");
  DLENV_DNN(dnn.create_tensor(&bd.d), "cudnnCreateTensorDescriptor");
  const int gates = rnn_gates(cell);
  const int m = std::max(1, static_cast<int>(1024.0 / std::sqrt(static_cast<double>(sh.hidden))));
  uint64_t matrices = 0x1234;  // each weight matrix and bias its own inputs
  for (int l = 0; l < sh.layers; ++l) {
    RnnLayerWeights& L = layers[static_cast<size_t>(l)];
    L.in = l == 0 ? sh.input : sh.hidden;
    L.hidden = sh.hidden;
    L.w.resize(static_cast<size_t>(gates));
    L.rw.resize(static_cast<size_t>(gates));
    L.bw.resize(static_cast<size_t>(gates));
    L.br.resize(static_cast<size_t>(gates));
    for (int id = 0; id < 2 * gates; ++id) {
      void* maddr = nullptr;
      void* baddr = nullptr;
      DLENV_DNN(
          dnn.rnn_weight_params(c.handle, rd.d, l, weight_bytes, reinterpret_cast<void*>(wbuf.ptr),
                                id, md.d, &maddr, bd.d, &baddr),
          "cudnnGetRNNWeightParams");
      const bool recurrent = id >= gates;
      const int cols_want = recurrent ? sh.hidden : L.in;
      auto fill = [&](void* addr, cudnnTensorDescriptor_t desc, int rows_want, int cols,
                      std::vector<float>& dst) -> std::optional<StepError> {
        int dtype = 0, nb = 0, dims[4] = {}, strides[4] = {};
        DLENV_DNN(dnn.get_tensor_nd(desc, 3, &dtype, &nb, dims, strides),
                  "cudnnGetTensorNdDescriptor");
        if (nb < 2 || dims[nb - 2] != rows_want || dims[nb - 1] != cols)
          return StepError{kDnnStatus, "cuDNN reports an unexpected RNN weight shape (layer " +
                                           std::to_string(l) + ", matrix " + std::to_string(id) +
                                           ")"};
        const auto base = static_cast<uintptr_t>(wbuf.ptr);
        const auto at = reinterpret_cast<uintptr_t>(addr);
        const size_t rs = static_cast<size_t>(strides[nb - 2]);
        const size_t cs = static_cast<size_t>(strides[nb - 1]);
        const size_t last =
            ((static_cast<size_t>(rows_want) - 1) * rs + (static_cast<size_t>(cols) - 1) * cs + 1) *
            es;
        if (at < base || at - base + last > weight_bytes)
          return StepError{kDnnStatus, "cuDNN reports an RNN weight outside the weight space"};
        dst.assign(static_cast<size_t>(rows_want) * cols, 0.0f);
        const uint64_t matrix = ++matrices;
        for_each_range(
            static_cast<size_t>(rows_want),
            [&](size_t row_begin, size_t row_end) {
              for (size_t rr = row_begin; rr < row_end; ++rr) {
                for (size_t cc = 0; cc < static_cast<size_t>(cols); ++cc) {
                  const size_t i = rr * static_cast<size_t>(cols) + cc;
                  const float v = weight_value(matrix, i, m);
                  dst[i] = v;
                  const size_t off = at - base + (rr * rs + cc * cs) * es;
                  if (t == DType::fp16) {
                    const uint16_t hv = float_to_half(v);
                    std::memcpy(&host_weights[off], &hv, 2);
                  } else {
                    std::memcpy(&host_weights[off], &v, 4);
                  }
                }
              }
            },
            64);
        return std::nullopt;
      };
      const size_t g = static_cast<size_t>(id % gates);
      if (auto e = fill(maddr, md.d, sh.hidden, cols_want, recurrent ? L.rw[g] : L.w[g])) return e;
      if (auto e = fill(baddr, bd.d, sh.hidden, 1, recurrent ? L.br[g] : L.bw[g])) return e;
    }
  }
  if (CUresult e = c.api.cuMemcpyHtoD(wbuf.ptr, host_weights.data(), weight_bytes);
      e != kCudaSuccess)
    return StepError{e, "cuMemcpyHtoD RNN weights"};

  auto x = gemm_input(static_cast<size_t>(sh.steps) * sh.batch * sh.input, 51);
  if (auto e = upload(c.api, dx, x, t, "x")) return e;
  const size_t y_bytes = static_cast<size_t>(sh.steps) * sh.batch * sh.hidden * es;
  if (CUresult e = c.api.cuMemAlloc(&dyb.ptr, y_bytes); e != kCudaSuccess)
    return StepError{e, "cuMemAlloc y"};
  if (CUresult e = c.api.cuMemAlloc(&dseq.ptr, seq.size() * sizeof(int)); e != kCudaSuccess)
    return StepError{e, "cuMemAlloc sequence lengths"};
  if (CUresult e = c.api.cuMemcpyHtoD(dseq.ptr, seq.data(), seq.size() * sizeof(int));
      e != kCudaSuccess)
    return StepError{e, "cuMemcpyHtoD sequence lengths"};
  auto op = [&]() -> std::optional<StepError> {
    DLENV_DNN(dnn.rnn_forward(c.handle, rd.d, kCudnnFwdModeInference,
                              reinterpret_cast<const int32_t*>(dseq.ptr), xd.d,
                              reinterpret_cast<void*>(dx.ptr), yd.d,
                              reinterpret_cast<void*>(dyb.ptr), hd.d, nullptr, nullptr, hd.d,
                              nullptr, nullptr, weight_bytes, reinterpret_cast<void*>(wbuf.ptr),
                              ws_bytes, reinterpret_cast<void*>(ws.ptr), reserve_bytes,
                              reinterpret_cast<void*>(reserve.ptr)),
              "cudnnRNNForward");
    return std::nullopt;
  };
  if (timed) {
    if (auto e = time_op(c.api, c.o.full ? 3 : 1, c.o.full ? 20 : 5, op, out.ms)) return e;
  } else {
    if (auto e = op()) return e;
    if (CUresult e = c.api.cuCtxSynchronize(); e != kCudaSuccess)
      return StepError{e, "cuCtxSynchronize"};
  }
  std::vector<uint8_t>& y = *c.result;
  if (auto e = download(c.api, dyb, y_bytes, y, "y")) return e;
  out.check = check_rnn(cell, t, layers, x, sh.batch, std::min(check_steps, sh.steps), batches, y);
  return std::nullopt;
}

DnnResult rnn_test(const Ctx& c, RnnCell cell, DType t, const RnnShape& big,
                   const GpuPeaks* peaks) {
  DnnResult d;
  d.op = std::string(rnn_cell_name(cell)) + " forward";
  d.type = t;
  d.shape = big.str();
  d.sublibrary = cudnn_sublibrary("adv", c.major, false);
  d.iterations = c.o.full ? 20 : 5;
  if (peaks) d.peak = t == DType::fp16 ? peaks->fp16 : peaks->tf32;
  RnnShape small;
  small.steps = 6, small.batch = 3, small.input = 24, small.hidden = 32, small.layers = 2;
  RnnRun s, b;
  if (auto e = rnn_once(c, cell, t, small, false, small.steps, {0, 1, 2}, s)) {
    d.error = error_text(c.api, *e);
    return d;
  }
  // The large problem: the first steps of two batch entries against the CPU
  // (an RNN output depends only on earlier steps, so a prefix is a full check of it).
  if (auto e = rnn_once(c, cell, t, big, true, c.o.full ? 3 : 2, {0, big.batch - 1}, b)) {
    d.error = error_text(c.api, *e);
    d.check = s.check;
    return d;
  }
  d.ms = b.ms;
  d.tflops = b.ms > 0 ? big.flops(cell) / (b.ms * 1e-3) / 1e12 : 0;
  d.check = !s.check.ok() ? s.check : b.check;
  if (s.check.ok()) d.check.checked += s.check.checked;
  return d;
}

// Names the finding for a failed cuDNN step.
FindingId dnn_problem_id(const std::string& error) {
  if (contains(error, "SUBLIBRARY_LOADING_FAILED") || contains(error, "SUBLIBRARY_VERSION") ||
      contains(error, "VERSION_MISMATCH"))
    return FindingId::cudnn_sublibrary_missing;
  if (contains(error, "ARCH_MISMATCH") || contains(error, "INCOMPATIBLE"))
    return FindingId::cudnn_execution_failed_old_cuda_on_new_gpu;
  if (contains(error, "NOT_INITIALIZED")) return FindingId::cudnn_status_not_initialized;
  if (contains(error, "CUDA_ERROR_OUT_OF_MEMORY") || contains(error, "ALLOCATION_FAILED"))
    return FindingId::verify_out_of_memory;
  return FindingId::verify_cudnn_error;
}

}  // namespace

void dnn_tests(const CudaApi& api, const CudnnApi& dnn, const VerifyOptions& o,
               const GpuPeaks* peaks, DeviceResult& dev, VerifyResult& r) {
  const int major =
      static_cast<int>(dnn.version >= 10000 ? dnn.version / 10000 : dnn.version / 1000);
  const std::string gpu = "GPU " + std::to_string(dev.index);
  cudnnHandle_t h = nullptr;
  if (o.progress) o.progress(gpu + ": cuDNN handle");
  if (cudnnStatus_t s = dnn.create(&h); s != 0) {
    std::string text = dnn.status_text(s);
    problem(r,
            dnn_problem_id(text) == FindingId::verify_cudnn_error
                ? FindingId::cudnn_status_not_initialized
                : dnn_problem_id(text),
            Severity::error, gpu + ": cudnnCreate failed: " + text + " (" + dnn.path + ")",
            "see `dlenv explain cudnn-status-not-initialized`; `dlenv doctor` checks which cuDNN "
            "copy this is and whether it matches the driver and CUDA runtime");
    return;
  }
  std::map<std::string, ConvInputs> inputs;
  std::vector<uint8_t> result;
  Ctx c{api, dnn, h, o, major, &inputs, &result};
  ConvShape big;
  if (o.small_dnn) {
    big.n = 3, big.c = 16, big.h = 12, big.w = 10, big.k = 8, big.r = 3, big.s = 3;
  } else {
    big.n = o.full ? 64 : 16, big.c = 256, big.h = 56, big.w = 56, big.k = 256, big.r = 3,
    big.s = 3;
  }
  big.pad = 1;
  struct ConvCase {
    ConvDirection dir;
    Layout layout;
    DType type;
  };
  std::vector<ConvCase> cases;
  for (DType t : {DType::fp16, DType::fp32}) {
    for (Layout l : {Layout::nhwc, Layout::nchw}) {
      if (!o.full && !(t == DType::fp16 && l == Layout::nhwc)) continue;
      for (ConvDirection d :
           {ConvDirection::forward, ConvDirection::backward_data, ConvDirection::backward_filter}) {
        cases.push_back({d, l, t});
      }
    }
  }
  if (!o.full) cases.push_back({ConvDirection::forward, Layout::nchw, DType::fp32});
  auto say = [&](const std::string& what) {
    if (o.progress) o.progress(gpu + ": " + what);
  };
  for (const auto& cc : cases) {
    say(std::string("conv ") + conv_direction_name(cc.dir) + " " + layout_name(cc.layout) + " " +
        dtype_name(cc.type));
    dev.dnn.push_back(conv_test(c, cc.dir, cc.layout, cc.type, big, peaks));
  }

  const size_t act_count = o.small_dnn ? 8192 : o.full ? (size_t{64} << 20) : (size_t{8} << 20);
  for (DType t : {DType::fp16, DType::fp32}) {
    if (!o.full && t == DType::fp32) continue;
    say(std::string("activations ") + dtype_name(t));
    for (auto& row : activation_tests(c, t, act_count, peaks)) dev.dnn.push_back(row);
  }

  RnnShape rnn;
  if (o.small_dnn) {
    rnn.steps = 5, rnn.batch = 4, rnn.input = 16, rnn.hidden = 16, rnn.layers = 2;
  } else {
    rnn.steps = o.full ? 128 : 16, rnn.batch = 64, rnn.input = 1024, rnn.hidden = 1024,
    rnn.layers = 2;
  }
  for (RnnCell cell : {RnnCell::lstm, RnnCell::gru}) {
    for (DType t : {DType::fp16, DType::fp32}) {
      if (!o.full && (t == DType::fp32 || cell == RnnCell::gru)) continue;
      say(std::string(rnn_cell_name(cell)) + " " + dtype_name(t));
      dev.dnn.push_back(rnn_test(c, cell, t, rnn, peaks));
    }
  }
  dnn.destroy(h);

  for (const auto& d : dev.dnn) {
    std::string label =
        gpu + " " + d.op + (d.layout.empty() ? "" : " " + d.layout) + " " + dtype_name(d.type);
    if (!d.error.empty()) {
      problem(r, dnn_problem_id(d.error), Severity::error,
              label + ": " + d.error + " (" + d.sublibrary + ")",
              "`dlenv load " + d.sublibrary +
                  "` shows whether that cuDNN sub-library loads and "
                  "which copy the loader takes; `dlenv doctor` checks the cuDNN copies");
    } else if (!d.check.ok()) {
      problem(r, FindingId::verify_wrong_result, Severity::error,
              label + ": wrong result: " + std::to_string(d.check.bad) + " of " +
                  std::to_string(d.check.checked) +
                  " checked elements differ from the CPU reference (" + d.check.first_bad + ")",
              "a GPU or library that computes wrong results needs attention: check "
              "`nvidia-smi -q -d ECC`, clocks and the driver; rerun `dlenv verify --full`");
    }
  }
}

}  // namespace dlenv::verify_detail
