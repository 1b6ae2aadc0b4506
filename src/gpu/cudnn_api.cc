#include "gpu/cudnn_api.h"

#include <vector>

namespace dlenv {

const char* cudnn_status_name(cudnnStatus_t s) {
  switch (s) {
    case 0: return "CUDNN_STATUS_SUCCESS";
    // cuDNN 8 codes.
    case 1: return "CUDNN_STATUS_NOT_INITIALIZED";
    case 2: return "CUDNN_STATUS_ALLOC_FAILED";
    case 3: return "CUDNN_STATUS_BAD_PARAM";
    case 4: return "CUDNN_STATUS_INTERNAL_ERROR";
    case 5: return "CUDNN_STATUS_INVALID_VALUE";
    case 6: return "CUDNN_STATUS_ARCH_MISMATCH";
    case 7: return "CUDNN_STATUS_MAPPING_ERROR";
    case 8: return "CUDNN_STATUS_EXECUTION_FAILED";
    case 9: return "CUDNN_STATUS_NOT_SUPPORTED";
    case 10: return "CUDNN_STATUS_LICENSE_ERROR";
    case 11: return "CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING";
    case 14: return "CUDNN_STATUS_VERSION_MISMATCH";
    // cuDNN 9 codes (category * 1000 + detail).
    case 1001: return "CUDNN_STATUS_NOT_INITIALIZED";
    case 1002: return "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH";
    case 1008: return "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED";
    case 2000: return "CUDNN_STATUS_BAD_PARAM";
    case 2002: return "CUDNN_STATUS_BAD_PARAM_NULL_POINTER";
    case 2003: return "CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER";
    case 3000: return "CUDNN_STATUS_NOT_SUPPORTED";
    case 3002: return "CUDNN_STATUS_NOT_SUPPORTED_SHAPE";
    case 3003: return "CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE";
    case 3004: return "CUDNN_STATUS_NOT_SUPPORTED_LAYOUT";
    case 3005: return "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER";
    case 3006: return "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART";
    case 3007: return "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH";
    case 3008: return "CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING";
    case 3009: return "CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE";
    case 3010: return "CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT";
    case 4000: return "CUDNN_STATUS_INTERNAL_ERROR";
    case 4001: return "CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED";
    case 4003: return "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED";
    case 4004: return "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED";
    case 5000: return "CUDNN_STATUS_EXECUTION_FAILED";
    case 5001: return "CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER";
    case 5002: return "CUDNN_STATUS_EXECUTION_FAILED_CUBLAS";
    case 5003: return "CUDNN_STATUS_EXECUTION_FAILED_CUDART";
  }
  if (s >= 1000 && s < 6000) {
    static const char* const kCategory[] = {"",
                                            "CUDNN_STATUS_NOT_INITIALIZED",
                                            "CUDNN_STATUS_BAD_PARAM",
                                            "CUDNN_STATUS_NOT_SUPPORTED",
                                            "CUDNN_STATUS_INTERNAL_ERROR",
                                            "CUDNN_STATUS_EXECUTION_FAILED"};
    return kCategory[s / 1000];
  }
  return "CUDNN_STATUS_UNKNOWN";
}

std::string CudnnApi::status_text(cudnnStatus_t s) const {
  std::string out = std::string(cudnn_status_name(s)) + " (" + std::to_string(s) + ")";
  if (get_error_string) {
    if (const char* t = get_error_string(s); t && *t && out.find(t) == std::string::npos) {
      out += ": ";
      out += t;
    }
  }
  return out;
}

std::string cudnn_sublibrary(std::string_view area, int major, bool windows) {
  // cuDNN 8 split each area into an inference and a training library; 9 has one each.
  std::string name(area);
  if (major == 8) {
    if (area == "ops" || area == "cnn" || area == "adv") name += "_infer";
  }
  if (windows) return "cudnn_" + name + "64_" + std::to_string(major) + ".dll";
  return "libcudnn_" + name + ".so." + std::to_string(major);
}

Result<CudnnApi> load_cudnn(const std::string& dir_or_file, int major) {
  std::string soname = "libcudnn.so." + std::to_string(major);
  std::string target =
      dir_or_file.empty() ? soname
      : dir_or_file.ends_with(".so") || dir_or_file.find(".so.") != std::string::npos
          ? dir_or_file
          : dir_or_file + "/" + soname;
  auto lib = DynamicLibrary::open(target);
  if (!lib) return fail(lib.error().message);
  CudnnApi api;
  std::vector<void*> p(52, nullptr);
  const SymbolSpec specs[] = {
      {"cudnnGetVersion", &p[0], true, 0},
      {"cudnnGetErrorString", &p[1], false, 0},
      {"cudnnCreate", &p[2], true, 0},
      {"cudnnDestroy", &p[3], true, 0},
      {"cudnnCreateTensorDescriptor", &p[4], true, 0},
      {"cudnnDestroyTensorDescriptor", &p[5], true, 0},
      {"cudnnSetTensor4dDescriptor", &p[6], true, 0},
      {"cudnnSetTensorNdDescriptor", &p[7], true, 0},
      {"cudnnGetTensorNdDescriptor", &p[8], true, 0},
      {"cudnnCreateFilterDescriptor", &p[9], true, 0},
      {"cudnnDestroyFilterDescriptor", &p[10], true, 0},
      {"cudnnSetFilter4dDescriptor", &p[11], true, 0},
      {"cudnnCreateConvolutionDescriptor", &p[12], true, 0},
      {"cudnnDestroyConvolutionDescriptor", &p[13], true, 0},
      {"cudnnSetConvolution2dDescriptor", &p[14], true, 0},
      {"cudnnSetConvolutionMathType", &p[15], true, 0},
      {"cudnnGetConvolutionForwardAlgorithm_v7", &p[16], true, 0},
      {"cudnnFindConvolutionForwardAlgorithm", &p[17], true, 0},
      {"cudnnGetConvolutionBackwardDataAlgorithm_v7", &p[18], true, 0},
      {"cudnnFindConvolutionBackwardDataAlgorithm", &p[19], true, 0},
      {"cudnnGetConvolutionBackwardFilterAlgorithm_v7", &p[20], true, 0},
      {"cudnnFindConvolutionBackwardFilterAlgorithm", &p[21], true, 0},
      {"cudnnConvolutionForward", &p[22], true, 0},
      {"cudnnConvolutionBackwardData", &p[23], true, 0},
      {"cudnnConvolutionBackwardFilter", &p[24], true, 0},
      {"cudnnCreateActivationDescriptor", &p[25], true, 0},
      {"cudnnDestroyActivationDescriptor", &p[26], true, 0},
      {"cudnnSetActivationDescriptor", &p[27], true, 0},
      {"cudnnActivationForward", &p[28], true, 0},
      {"cudnnActivationBackward", &p[29], true, 0},
      {"cudnnCreateDropoutDescriptor", &p[30], true, 0},
      {"cudnnDestroyDropoutDescriptor", &p[31], true, 0},
      {"cudnnSetDropoutDescriptor", &p[32], true, 0},
      {"cudnnCreateRNNDescriptor", &p[33], true, 0},
      {"cudnnDestroyRNNDescriptor", &p[34], true, 0},
      {"cudnnSetRNNDescriptor_v8", &p[35], true, 0},
      {"cudnnCreateRNNDataDescriptor", &p[36], true, 0},
      {"cudnnDestroyRNNDataDescriptor", &p[37], true, 0},
      {"cudnnSetRNNDataDescriptor", &p[38], true, 0},
      {"cudnnGetRNNWeightSpaceSize", &p[39], true, 0},
      {"cudnnGetRNNTempSpaceSizes", &p[40], true, 0},
      {"cudnnGetRNNWeightParams", &p[41], true, 0},
      {"cudnnRNNForward", &p[42], true, 0},
  };
  auto bound = bind_symbols(*lib, specs);
  if (!bound) return fail(bound.error().message);
  int i = 0;
  auto as = [&](auto& fn) { fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p[i++]); };
  as(api.get_version);
  as(api.get_error_string);
  as(api.create);
  as(api.destroy);
  as(api.create_tensor);
  as(api.destroy_tensor);
  as(api.set_tensor_4d);
  as(api.set_tensor_nd);
  as(api.get_tensor_nd);
  as(api.create_filter);
  as(api.destroy_filter);
  as(api.set_filter_4d);
  as(api.create_conv);
  as(api.destroy_conv);
  as(api.set_conv_2d);
  as(api.set_conv_math);
  as(api.get_fwd_algo);
  as(api.find_fwd_algo);
  as(api.get_bwd_data_algo);
  as(api.find_bwd_data_algo);
  as(api.get_bwd_filter_algo);
  as(api.find_bwd_filter_algo);
  as(api.conv_fwd);
  as(api.conv_bwd_data);
  as(api.conv_bwd_filter);
  as(api.create_activation);
  as(api.destroy_activation);
  as(api.set_activation);
  as(api.activation_fwd);
  as(api.activation_bwd);
  as(api.create_dropout);
  as(api.destroy_dropout);
  as(api.set_dropout);
  as(api.create_rnn);
  as(api.destroy_rnn);
  as(api.set_rnn_v8);
  as(api.create_rnn_data);
  as(api.destroy_rnn_data);
  as(api.set_rnn_data);
  as(api.rnn_weight_space_size);
  as(api.rnn_temp_space_sizes);
  as(api.rnn_weight_params);
  as(api.rnn_forward);
  api.version = api.get_version();
  api.path = lib->loaded_path();
  api.lib = std::move(*lib);
  return api;
}

}  // namespace dlenv
