// The catalog's error signatures on the messages the frameworks really print: the longest
// signature found names the failure. Each expected id is the one the former first-match table
// of rules/python_deep_checks.cc gave (the signatures that overlap were lengthened so that the
// longest one is the specific one), so moving the table into the catalog changed no answer.
#include "kb/error_signature.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace dlenv {
namespace {

TEST(ErrorSignature, TheLongestSignatureInAFrameworkMessageNamesTheFailure) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"RuntimeError: CUDA error: system not yet initialized", "fabric-manager-missing-802"},
      {"RuntimeError: CUDA error: forward compatibility was attempted on non supported HW",
       "forward-compat-unsupported-804"},
      {"cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorCompatNotSupportedOnDevice: "
       "forward compatibility was attempted on non supported HW",
       "forward-compat-unsupported-804"},
      {"AssertionError: Torch not compiled with CUDA enabled", "torch-cpu-build-installed"},
      {"RuntimeError: CUDA error: no kernel image is available for execution on the device",
       "no-kernel-image-new-gpu"},
      {"UserWarning: NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with "
       "the current PyTorch installation.",
       "no-kernel-image-new-gpu"},
      {"RuntimeError: The NVIDIA driver on your system is too old (found version 11040).",
       "torch-driver-too-old"},
      {"RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (9, 1, 0) but "
       "found runtime version (8, 9, 2).",
       "torch-cudnn-runtime-older-than-build"},
      {"Loaded runtime CuDNN library: 8.6.0 but source was compiled with: 8.9.4.",
       "jax-cudnn-version-mismatch"},
      {"ImportError: libcusparse.so.12: undefined symbol: __nvJitLinkAddData_12_1, version "
       "libnvJitLink.so.12",
       "nvjitlink-older-than-cusparse"},
      {"OSError: libcudnn.so.8: cannot open shared object file: No such file or directory",
       "libcudnn8-not-found"},
      {"E external/xla/xla/stream_executor/cuda/cuda_driver.cc:268] failed call to cuInit: could "
       "not find cuda drivers",
       "tf-could-not-find-cuda-drivers"},
      {"tensorflow.python.framework.errors_impl.UnknownError: Failed to get convolution algorithm. "
       "This is probably because cuDNN failed to initialize",
       "tf-cudnn-failed-to-initialize"},
      {"UnknownError: Failed to get convolution algorithm.", "tf-cudnn-failed-to-initialize"},
      {"TF-TRT Warning: Could not find TensorRT", "tf-trt-not-found"},
      {"TensorFlow was not built with CUDA kernel binaries compatible with compute capability 9.0. "
       "CUDA kernels will be jit-compiled from PTX",
       "tf-ptx-jit-new-arch"},
      {"INTERNAL: libdevice not found at ./libdevice.10.bc", "xla-libdevice-ptxas-not-found"},
      {"Can't find libdevice directory ${CUDA_DIR}/nvvm/libdevice",
       "xla-libdevice-ptxas-not-found"},
      {"The third-party dynamic library (cudnn64_8.dll) that Paddle depends on is not configured "
       "correctly.",
       "win-paddle-third-party-dso"},
      {"ImportError: /env/lib/python3.10/site-packages/flash_attn_2_cuda.so: undefined symbol: "
       "_ZN3c104cuda9SetDeviceEi",
       "prebuilt-extension-abi-mismatch"},
      {"ImportError: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.34' not found (required by "
       "/env/lib/python3.10/site-packages/torch/lib/libtorch_cpu.so)",
       "glibc-too-old-for-wheel"},
      {"ImportError: /env/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
       "cudnnGetLibConfig, version libcudnn_graph.so.9",
       "pip-cudnn-vs-system-cudnn-symbols"},
      {"Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot "
       "open shared object file: No such file or directory",
       "ctranslate2-cudnn8-vs-9"},
      {"Could not load library libcudnn_ops_infer.so.8", "ctranslate2-cudnn8-vs-9"},
      {"W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64] Could not "
       "load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared "
       "object file: No such file or directory",
       "tf-cannot-dlopen-gpu-libraries"},
      {"W tensorflow/core/common_runtime/gpu/gpu_device.cc:1960] Cannot dlopen some GPU libraries. "
       "Please make sure the missing libraries mentioned above are installed properly",
       "tf-cannot-dlopen-gpu-libraries"},
      {"RuntimeError: jaxlib/cuda/versions_helpers.cc:81: operation cuInit(0) failed: CUDA-enabled "
       "jaxlib is not installed. a CUDA-enabled jaxlib is not installed",
       "jax-cpu-only-jaxlib"},
      {"RuntimeError: Unable to load cuSPARSE. Is it installed?",
       "jax-ld-library-path-overrides-wheels"},
      {"ImportError: libcublas.so.11: cannot open shared object file: No such file or directory",
       "python-gpu-library-not-loadable"},
      {"OSError: [WinError 126] The specified module could not be found. Error loading "
       "\"C:\\env\\lib\\site-packages\\torch\\lib\\fbgemm.dll\" or one of its dependencies.",
       "win-torch-dll-dependency-126"},
      {"Failed to create CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*.",
       "ort-cuda-provider-load-failure"},
      {"You are using GPU version Paddle, but your CUDA device is not set properly. ... installed "
       "CPU version PaddlePaddle",
       "paddle-cpu-package-installed"},
      {"Cannot load cudnn shared library. Cannot invoke method cudnnGetVersion",
       "paddle-cannot-load-cudnn"},
      {"cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorCompatNotSupportedOnDevice",
       "forward-compat-unsupported-804"},
      {"ImportError: /env/lib/python3.11/site-packages/nvidia/cusparse/lib/libcusparse.so.12: "
       "symbol __nvJitLinkAddData_12_1 version libnvJitLink.so.12 not defined in file "
       "libnvJitLink.so.12 with link time reference",
       "nvjitlink-older-than-cusparse"},
      {"tensorflow.python.framework.errors_impl.UnknownError: CUDNN_STATUS_NOT_INITIALIZED: "
       "cuDNN failed to initialize",
       "tf-cudnn-failed-to-initialize"},
  };
  std::set<std::string> named;
  for (const auto& [text, id] : cases) {
    const ErrorSignature* s = longest_error_signature(text);
    ASSERT_NE(s, nullptr) << text;
    EXPECT_EQ(finding_name(s->id), id) << text << " (signature \"" << s->text << "\")";
    named.insert(std::string(s->text));
  }
  // Each signature of the catalog is the answer for at least one of these messages.
  for (const ErrorSignature& s : kErrorSignatures) {
    EXPECT_TRUE(named.count(std::string(s.text))) << "no case for signature \"" << s.text << "\"";
  }
}

TEST(ErrorSignature, NoSignatureNoAnswer) {
  EXPECT_EQ(longest_error_signature(""), nullptr);
  EXPECT_EQ(longest_error_signature("Segmentation fault (core dumped)"), nullptr);
}

TEST(ErrorSignature, SignaturesAreLowerCaseAndMatchedCaseInsensitively) {
  for (const ErrorSignature& s : kErrorSignatures) {
    std::string upper(s.text);
    for (char& c : upper) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    const ErrorSignature* got = longest_error_signature(upper);
    ASSERT_NE(got, nullptr) << s.text;
    EXPECT_GE(got->text.size(), s.text.size()) << s.text;
  }
}

}  // namespace
}  // namespace dlenv
