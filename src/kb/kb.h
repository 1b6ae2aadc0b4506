// The knowledge base: compatibility tables from kb/*.json, embedded in the
// binary at build time (or loaded from --kb DIR), with typed queries. Every row
// keeps its public source and a `confirmed` flag.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"
#include "util/version.h"

namespace dlenv {

enum class Os { linux, windows };

struct KbRef {
  std::string source;  // public URL
  bool confirmed = false;
};

struct DriverCudaSupport {
  Version max_cuda;           // newest toolkit (major.minor) whose driver floor <= driver
  std::string toolkit_label;  // e.g. "CUDA 13.0 GA"
  // CUDA majors whose minor-version-compatibility floor the driver meets
  // (any minor of that major runs, PTX JIT excepted).
  std::vector<int> minor_compat_majors;
  KbRef ref;
};

struct ArchSupport {
  Version cuda;  // the toolkit row matched (major.minor)
  Version min_cc;
  Version max_cc;
  std::vector<std::string> sass_targets;  // "sm_90", ...
  KbRef ref;
};

struct GpuInfo {
  std::string name;
  Version compute_capability;
  std::string segment;  // data_center / workstation_consumer / jetson
  KbRef ref;
};

struct CudnnBuild {
  Version cuda_min;  // inclusive, major.minor
  Version cuda_max;  // inclusive, major.minor (major.99 for "12.x")
  KbRef ref;
};

// One entry of the failure catalog (kb/findings.json), used by `dlenv explain`
// and docs/findings.md.
struct FindingInfo {
  std::string id;
  std::string section;  // "B. Linux driver, kernel module and device access"
  std::string title;    // one line
  std::string platforms;
  std::vector<std::string> error_text;  // verbatim error signatures
  std::string cause;
  std::vector<std::string> signals;
  std::vector<std::string> fix;
  std::vector<std::string> sources;
};

class Kb {
 public:
  // The tables compiled into the binary.
  static Result<std::shared_ptr<const Kb>> load_embedded();
  // Every kb/*.json file of a directory (the same file names as the embedded set).
  static Result<std::shared_ptr<const Kb>> load_dir(const std::string& dir);
  // From in-memory file contents keyed by file name ("cuda_driver.json" -> text).
  static Result<std::shared_ptr<const Kb>> load_files(
      const std::map<std::string, std::string>& files);

  virtual ~Kb() = default;

  // driver version -> newest CUDA it supports (toolkit table + minor-version compatibility).
  virtual std::optional<DriverCudaSupport> max_cuda_for_driver(const Version& driver,
                                                               Os os) const = 0;
  // CUDA (major.minor) -> minimum driver: the table row for that toolkit, or the
  // major's minor-compat floor when `minor_compat` is true and it is lower.
  virtual std::optional<Version> min_driver_for_cuda(const Version& cuda, Os os,
                                                     bool minor_compat) const = 0;
  // toolkit -> compute capabilities it can build SASS for (exact major.minor row,
  // else the newest row not newer than `cuda`).
  virtual std::optional<ArchSupport> arch_support(const Version& cuda) const = 0;
  // Architecture family name for a compute capability ("Hopper" for 9.0).
  virtual std::string architecture_name(const Version& cc) const = 0;
  // GPU marketing name (as NVML reports it, e.g. "NVIDIA H200", "NVIDIA GeForce RTX 4090")
  // -> compute capability. Matching ignores case, "NVIDIA "/"GeForce " prefixes and
  // memory-size suffixes; the longest matching KB name wins.
  virtual std::optional<GpuInfo> gpu_by_name(std::string_view name) const = 0;
  // cuDNN release -> the CUDA versions it was built for.
  virtual std::vector<CudnnBuild> cudnn_builds(const Version& cudnn) const = 0;
  // The library files a cuDNN major consists of (main library first).
  virtual std::vector<std::string> cudnn_library_files(int cudnn_major, Os os) const = 0;
  // A CUDA library's file name for a CUDA major: ("cublasLt", 12, linux) -> "libcublasLt.so.12".
  virtual std::optional<std::string> library_file_name(std::string_view library, int cuda_major,
                                                       Os os) const = 0;
  // Inverse: "libcublasLt.so.12" / "cublasLt64_12.dll" -> {"cublasLt", 12}.
  virtual std::optional<std::pair<std::string, int>> library_from_file_name(
      std::string_view file_name) const = 0;

  // The failure catalog.
  virtual const FindingInfo* finding(std::string_view id) const = 0;
  virtual const std::vector<FindingInfo>& findings() const = 0;

  // Names of the files this KB was built from, with a content hash, for the report.
  virtual std::string describe() const = 0;
};

}  // namespace dlenv
