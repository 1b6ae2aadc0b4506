// One NVIDIA/CUDA library a process has mapped (process_maps.h finds them; the
// Python probe's --deep results carry them). No platform types: rules and
// reports include it through probe/facts.h.
#pragma once

#include <optional>
#include <string>

namespace dlenv {

// A mapped NVIDIA/CUDA library of a process (one per file, whatever its mappings).
struct MappedLibrary {
  std::string path;            // as mapped
  std::string name;            // file name
  std::string library;         // "cudnn", "cublasLt", "cuda" (driver), "nvml", ...
  std::string soname;          // from the ELF file, when readable
  std::string version;         // "13.0.0.19"; empty when unknown
  std::string version_source;  // "file name", "soname"
  std::string origin;  // "pip wheel", "conda env", "CUDA toolkit", "system", "driver", "other"
  std::string origin_detail;  // "nvidia-cublas-cu12 12.8.4.1 in /venv/lib/python3.12/site-packages"
  bool deleted = false;
  // -- CMD on Windows: false when the DLL was unloaded before the command
  // exited; unset where that is not observed (/proc polling, --pid, --holding).
  std::optional<bool> loaded_at_exit;
};

}  // namespace dlenv
