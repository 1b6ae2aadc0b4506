// The libraries NVIDIA libraries load at run time (dlopen / LoadLibrary) that
// their import tables do not show: one table shared by the Linux and the
// Windows loader models.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kb/kb.h"
#include "util/bytes.h"

namespace dlenv {

struct RuntimeCompanion {
  std::string name;  // file name as the library asks for it ("cudnn_ops_infer64_8.dll")
  std::string note;  // why ("cuDNN 8 loads its sub-libraries at run time (LoadLibrary)")
};

// For one library file name (soname or DLL name) and its file version (PE
// version resource on Windows, "" when unknown): the cuDNN main library's
// sub-libraries (KB), cuBLAS -> cuBLASLt of the same major, and on Windows
// zlibwapi.dll for cuDNN 8.3-8.9's cudnn_ops_infer/cudnn_cnn_infer.
std::vector<RuntimeCompanion> nvidia_runtime_companions(const Kb& kb, std::string_view file_name,
                                                        Os os, std::string_view file_version);

// Whether `file_name` is a CUDA library whose runtime loads the driver library.
bool loads_cuda_driver(std::string_view file_name, Os os);
// The driver library: libcuda.so.1 / nvcuda.dll, with the note naming `loader`.
RuntimeCompanion cuda_driver_companion(std::string_view loader, Os os);

// Windows: cuBLASLt and NVRTC DLL names ("cublasLt64_12.dll", "nvrtc64_120_0.dll")
// that a cuDNN DLL names in its bytes (it loads them with LoadLibrary).
std::vector<RuntimeCompanion> windows_companions_in_bytes(ByteView bytes, size_t max_results = 8);

}  // namespace dlenv
