// cuDNN loaded at run time (nothing CUDA at build time): the legacy convolution,
// activation and v8 RNN entry points `dlenv verify` drives. In cuDNN 8 and 9,
// libcudnn.so.N is a shim that loads its sub-libraries (ops, cnn, adv, engines)
// on first use, so a missing sub-library shows up as a status from the first call
// that needs it; the status text and the sub-library are reported together.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "platform/dynamic_library.h"
#include "util/result.h"

namespace dlenv {

using cudnnStatus_t = int;
using cudnnHandle_t = struct cudnnContext*;
using cudnnTensorDescriptor_t = struct cudnnTensorStruct*;
using cudnnFilterDescriptor_t = struct cudnnFilterStruct*;
using cudnnConvolutionDescriptor_t = struct cudnnConvolutionStruct*;
using cudnnActivationDescriptor_t = struct cudnnActivationStruct*;
using cudnnDropoutDescriptor_t = struct cudnnDropoutStruct*;
using cudnnRNNDescriptor_t = struct cudnnRNNStruct*;
using cudnnRNNDataDescriptor_t = struct cudnnRNNDataStruct*;

// Values from the cuDNN 8/9 headers (stable across both).
constexpr int kCudnnDataFloat = 0;
constexpr int kCudnnDataHalf = 2;
constexpr int kCudnnTensorNchw = 0;
constexpr int kCudnnTensorNhwc = 1;
constexpr int kCudnnDefaultMath = 0;
constexpr int kCudnnTensorOpMath = 1;
constexpr int kCudnnCrossCorrelation = 1;
constexpr int kCudnnActivationSigmoid = 0;
constexpr int kCudnnActivationRelu = 1;
constexpr int kCudnnActivationTanh = 2;
constexpr int kCudnnNotPropagateNan = 0;
constexpr int kCudnnRnnAlgoStandard = 0;
constexpr int kCudnnFwdModeInference = 0;
constexpr int kCudnnLstm = 2;
constexpr int kCudnnGru = 3;
constexpr int kCudnnRnnDoubleBias = 2;
constexpr int kCudnnUnidirectional = 0;
constexpr int kCudnnLinearInput = 0;
constexpr int kCudnnRnnDataSeqMajorPacked = 1;

// cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t share this layout.
struct CudnnConvPerf {
  int algo = 0;
  cudnnStatus_t status = 0;
  float time = 0;
  size_t memory = 0;
  int determinism = 0;
  int math_type = 0;
  int reserved[3] = {};
};

struct CudnnApi {
  DynamicLibrary lib;
  std::string path;
  size_t version = 0;  // cudnnGetVersion(): 91900 / 8907

  size_t (*get_version)() = nullptr;
  const char* (*get_error_string)(cudnnStatus_t) = nullptr;
  cudnnStatus_t (*create)(cudnnHandle_t*) = nullptr;
  cudnnStatus_t (*destroy)(cudnnHandle_t) = nullptr;
  cudnnStatus_t (*create_tensor)(cudnnTensorDescriptor_t*) = nullptr;
  cudnnStatus_t (*destroy_tensor)(cudnnTensorDescriptor_t) = nullptr;
  cudnnStatus_t (*set_tensor_4d)(cudnnTensorDescriptor_t, int format, int dtype, int n, int c,
                                 int h, int w) = nullptr;
  cudnnStatus_t (*set_tensor_nd)(cudnnTensorDescriptor_t, int dtype, int nb, const int* dims,
                                 const int* strides) = nullptr;
  cudnnStatus_t (*get_tensor_nd)(cudnnTensorDescriptor_t, int requested, int* dtype, int* nb,
                                 int* dims, int* strides) = nullptr;
  cudnnStatus_t (*create_filter)(cudnnFilterDescriptor_t*) = nullptr;
  cudnnStatus_t (*destroy_filter)(cudnnFilterDescriptor_t) = nullptr;
  cudnnStatus_t (*set_filter_4d)(cudnnFilterDescriptor_t, int dtype, int format, int k, int c,
                                 int h, int w) = nullptr;
  cudnnStatus_t (*create_conv)(cudnnConvolutionDescriptor_t*) = nullptr;
  cudnnStatus_t (*destroy_conv)(cudnnConvolutionDescriptor_t) = nullptr;
  cudnnStatus_t (*set_conv_2d)(cudnnConvolutionDescriptor_t, int pad_h, int pad_w, int u, int v,
                               int dil_h, int dil_w, int mode, int compute_type) = nullptr;
  cudnnStatus_t (*set_conv_math)(cudnnConvolutionDescriptor_t, int math) = nullptr;
  // Heuristic choices (cheap) and measured choices (runs every algorithm).
  cudnnStatus_t (*get_fwd_algo)(cudnnHandle_t, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t,
                                cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, int, int*,
                                CudnnConvPerf*) = nullptr;
  cudnnStatus_t (*find_fwd_algo)(cudnnHandle_t, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t,
                                 cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, int, int*,
                                 CudnnConvPerf*) = nullptr;
  cudnnStatus_t (*get_bwd_data_algo)(cudnnHandle_t, cudnnFilterDescriptor_t,
                                     cudnnTensorDescriptor_t, cudnnConvolutionDescriptor_t,
                                     cudnnTensorDescriptor_t, int, int*, CudnnConvPerf*) = nullptr;
  cudnnStatus_t (*find_bwd_data_algo)(cudnnHandle_t, cudnnFilterDescriptor_t,
                                      cudnnTensorDescriptor_t, cudnnConvolutionDescriptor_t,
                                      cudnnTensorDescriptor_t, int, int*, CudnnConvPerf*) = nullptr;
  cudnnStatus_t (*get_bwd_filter_algo)(cudnnHandle_t, cudnnTensorDescriptor_t,
                                       cudnnTensorDescriptor_t, cudnnConvolutionDescriptor_t,
                                       cudnnFilterDescriptor_t, int, int*,
                                       CudnnConvPerf*) = nullptr;
  cudnnStatus_t (*find_bwd_filter_algo)(cudnnHandle_t, cudnnTensorDescriptor_t,
                                        cudnnTensorDescriptor_t, cudnnConvolutionDescriptor_t,
                                        cudnnFilterDescriptor_t, int, int*,
                                        CudnnConvPerf*) = nullptr;
  cudnnStatus_t (*conv_fwd)(cudnnHandle_t, const void* alpha, cudnnTensorDescriptor_t, const void*,
                            cudnnFilterDescriptor_t, const void*, cudnnConvolutionDescriptor_t,
                            int algo, void* ws, size_t ws_bytes, const void* beta,
                            cudnnTensorDescriptor_t, void*) = nullptr;
  cudnnStatus_t (*conv_bwd_data)(cudnnHandle_t, const void* alpha, cudnnFilterDescriptor_t,
                                 const void*, cudnnTensorDescriptor_t, const void*,
                                 cudnnConvolutionDescriptor_t, int algo, void* ws, size_t ws_bytes,
                                 const void* beta, cudnnTensorDescriptor_t, void*) = nullptr;
  cudnnStatus_t (*conv_bwd_filter)(cudnnHandle_t, const void* alpha, cudnnTensorDescriptor_t,
                                   const void*, cudnnTensorDescriptor_t, const void*,
                                   cudnnConvolutionDescriptor_t, int algo, void* ws,
                                   size_t ws_bytes, const void* beta, cudnnFilterDescriptor_t,
                                   void*) = nullptr;
  cudnnStatus_t (*create_activation)(cudnnActivationDescriptor_t*) = nullptr;
  cudnnStatus_t (*destroy_activation)(cudnnActivationDescriptor_t) = nullptr;
  cudnnStatus_t (*set_activation)(cudnnActivationDescriptor_t, int mode, int nan,
                                  double coef) = nullptr;
  cudnnStatus_t (*activation_fwd)(cudnnHandle_t, cudnnActivationDescriptor_t, const void* alpha,
                                  cudnnTensorDescriptor_t, const void*, const void* beta,
                                  cudnnTensorDescriptor_t, void*) = nullptr;
  cudnnStatus_t (*activation_bwd)(cudnnHandle_t, cudnnActivationDescriptor_t, const void* alpha,
                                  cudnnTensorDescriptor_t y_desc, const void* y,
                                  cudnnTensorDescriptor_t dy_desc, const void* dy,
                                  cudnnTensorDescriptor_t x_desc, const void* x, const void* beta,
                                  cudnnTensorDescriptor_t dx_desc, void* dx) = nullptr;
  cudnnStatus_t (*create_dropout)(cudnnDropoutDescriptor_t*) = nullptr;
  cudnnStatus_t (*destroy_dropout)(cudnnDropoutDescriptor_t) = nullptr;
  cudnnStatus_t (*set_dropout)(cudnnDropoutDescriptor_t, cudnnHandle_t, float, void*, size_t,
                               unsigned long long) = nullptr;
  cudnnStatus_t (*create_rnn)(cudnnRNNDescriptor_t*) = nullptr;
  cudnnStatus_t (*destroy_rnn)(cudnnRNNDescriptor_t) = nullptr;
  cudnnStatus_t (*set_rnn_v8)(cudnnRNNDescriptor_t, int algo, int cell, int bias, int dir,
                              int input_mode, int dtype, int math_prec, int math_type,
                              int32_t input_size, int32_t hidden, int32_t proj, int32_t layers,
                              cudnnDropoutDescriptor_t, uint32_t aux_flags) = nullptr;
  cudnnStatus_t (*create_rnn_data)(cudnnRNNDataDescriptor_t*) = nullptr;
  cudnnStatus_t (*destroy_rnn_data)(cudnnRNNDataDescriptor_t) = nullptr;
  cudnnStatus_t (*set_rnn_data)(cudnnRNNDataDescriptor_t, int dtype, int layout, int max_seq,
                                int batch, int vector, const int* seq_lengths,
                                void* padding_fill) = nullptr;
  cudnnStatus_t (*rnn_weight_space_size)(cudnnHandle_t, cudnnRNNDescriptor_t, size_t*) = nullptr;
  cudnnStatus_t (*rnn_temp_space_sizes)(cudnnHandle_t, cudnnRNNDescriptor_t, int fwd_mode,
                                        cudnnRNNDataDescriptor_t, size_t* ws,
                                        size_t* reserve) = nullptr;
  cudnnStatus_t (*rnn_weight_params)(cudnnHandle_t, cudnnRNNDescriptor_t, int32_t pseudo_layer,
                                     size_t ws_size, const void* ws, int32_t lin_layer,
                                     cudnnTensorDescriptor_t m_desc, void** m_addr,
                                     cudnnTensorDescriptor_t b_desc, void** b_addr) = nullptr;
  cudnnStatus_t (*rnn_forward)(cudnnHandle_t, cudnnRNNDescriptor_t, int fwd_mode,
                               const int32_t* dev_seq_lengths, cudnnRNNDataDescriptor_t x_desc,
                               const void* x, cudnnRNNDataDescriptor_t y_desc, void* y,
                               cudnnTensorDescriptor_t h_desc, const void* hx, void* hy,
                               cudnnTensorDescriptor_t c_desc, const void* cx, void* cy,
                               size_t weight_bytes, const void* weights, size_t ws_bytes, void* ws,
                               size_t reserve_bytes, void* reserve) = nullptr;

  // "CUDNN_STATUS_NOT_SUPPORTED (3000): ..." with cuDNN's own text when it has one.
  std::string status_text(cudnnStatus_t s) const;
};

// The symbolic name of a status ("CUDNN_STATUS_BAD_PARAM"); cuDNN 8 and 9 codes.
const char* cudnn_status_name(cudnnStatus_t s);

// The sub-library a cuDNN call lives in ("libcudnn_cnn.so.9", "cudnn_adv_infer64_8.dll"),
// used to name what is missing when a call fails with a loading status.
std::string cudnn_sublibrary(std::string_view area, int major, bool windows);

// Loads libcudnn.so.<major> from `dir` (empty: by soname), or the file `path` itself
// when it names a file. Every symbol above must be present.
Result<CudnnApi> load_cudnn(const std::string& dir_or_file, int major);

}  // namespace dlenv
