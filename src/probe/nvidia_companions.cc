#include "probe/nvidia_companions.h"

#include <fmt/format.h>

#include <algorithm>

#include "util/strings.h"
#include "util/version.h"

namespace dlenv {

std::vector<RuntimeCompanion> nvidia_runtime_companions(const Kb& kb, std::string_view file_name,
                                                        Os os, std::string_view file_version) {
  std::vector<RuntimeCompanion> out;
  const std::string how = os == Os::windows ? "LoadLibrary" : "dlopen";
  const std::string base = path_basename(file_name);
  const std::string lower = to_lower(base);
  auto lib = kb.library_from_file_name(base);
  if (lib && lib->first == "cudnn") {
    for (const auto& f : kb.cudnn_library_files(lib->second, os)) {
      if (to_lower(f) == lower) continue;
      out.push_back(
          {f, fmt::format("cuDNN {} loads its sub-libraries at run time ({})", lib->second, how)});
    }
  }
  if (lib && lib->first == "cublas" && lib->second > 0) {
    if (auto lt = kb.library_file_name("cublasLt", lib->second, os)) {
      out.push_back({*lt, "cuBLAS needs cuBLASLt of the same version"});
    }
  }
  // cuDNN 8.3 to 8.9 on Windows: the inference sub-libraries load zlibwapi.dll.
  if (os == Os::windows &&
      (lower == "cudnn_ops_infer64_8.dll" || lower == "cudnn_cnn_infer64_8.dll")) {
    auto v = Version::parse(std::string(file_version));
    if (v && v->major() == 8 && v->minor() >= 3) {
      out.push_back({"zlibwapi.dll",
                     fmt::format("cuDNN {} on Windows loads zlibwapi.dll at run time (8.3 and "
                                 "later 8.x need it on the DLL search path)",
                                 file_version)});
    }
  }
  return out;
}

bool loads_cuda_driver(std::string_view file_name, Os os) {
  const std::string b = to_lower(path_basename(file_name));
  if (os == Os::linux) {
    for (std::string_view p : {"libcudnn", "libcublas", "libcudart.", "libcufft", "libcusparse",
                               "libcusolver", "libcurand", "libnccl", "libnvjpeg", "libcupti"}) {
      if (b.starts_with(p)) return true;
    }
    return false;
  }
  if (!b.ends_with(".dll")) return false;
  for (std::string_view p : {"cudnn", "cublas", "cudart64_", "cufft64_", "cusparse64_",
                             "cusolver64_", "curand64_", "nvjpeg64_", "cupti64_"}) {
    if (b.starts_with(p)) return true;
  }
  return false;
}

RuntimeCompanion cuda_driver_companion(std::string_view loader, Os os) {
  if (os == Os::windows) {
    return {"nvcuda.dll", fmt::format("the CUDA runtime inside {} loads the driver library at run "
                                      "time (LoadLibrary)",
                                      loader)};
  }
  return {"libcuda.so.1",
          fmt::format("the CUDA runtime inside {} loads the driver library at run time (dlopen)",
                      loader)};
}

std::vector<RuntimeCompanion> windows_companions_in_bytes(ByteView bytes, size_t max_results) {
  std::vector<RuntimeCompanion> out;
  const auto* data = reinterpret_cast<const char*>(bytes.data());
  const std::string_view all(data, bytes.size());
  for (std::string_view prefix : {std::string_view("cublasLt64_"), std::string_view("nvrtc64_")}) {
    for (size_t p = all.find(prefix); p != std::string_view::npos && out.size() < max_results;
         p = all.find(prefix, p + 1)) {
      // A whole word: not preceded by a name character, digits/underscores, then ".dll".
      if (p > 0 && (std::isalnum(static_cast<unsigned char>(all[p - 1])) || all[p - 1] == '_')) {
        continue;
      }
      size_t e = p + prefix.size();
      while (e < all.size() &&
             (std::isdigit(static_cast<unsigned char>(all[e])) || all[e] == '_')) {
        ++e;
      }
      if (e == p + prefix.size() || all.substr(e, 4) != ".dll") continue;
      std::string name(all.substr(p, e + 4 - p));
      if (std::any_of(out.begin(), out.end(), [&](const auto& c) { return c.name == name; })) {
        continue;
      }
      out.push_back({name, name.starts_with("nvrtc")
                               ? "cuDNN compiles run-time kernels with NVRTC (LoadLibrary)"
                               : "cuDNN calls cuBLASLt through LoadLibrary"});
    }
  }
  return out;
}

}  // namespace dlenv
