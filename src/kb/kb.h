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
  KbRef ref;  // the matched toolkit row; confirmed=false -> only ever warn on it
  // The floor the driver met for that row. Unconfirmed exact floors and null (N/A)
  // floors are replaced by the confirmed driver-branch rule (e.g. 590 for CUDA 13.1),
  // never lower than the previous row's floor.
  Version driver_floor;
};

struct ArchSupport {
  Version cuda;  // the toolkit row matched (major.minor)
  Version min_cc;
  Version max_cc;
  std::vector<std::string> sass_targets;  // "sm_90", ...
  KbRef ref;                              // confirmed covers min_cc/max_cc
  bool sass_targets_confirmed = false;    // the exact SASS list is usually from memory
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
  KbRef ref;         // the release row; confirmed=false also when inferred from an older release
  std::optional<Version> driver_linux_min;    // where the support matrix gives one
  std::optional<Version> driver_windows_min;  // (a bare branch such as "450" for r450)
  std::vector<Version> compute_capabilities;  // empty when not given
  std::string note;
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
  std::string confidence;   // "" or the catalog's "lower"/"medium"
  std::string error_note;   // the catalog's prose around the error text
  std::string catalog_key;  // "A13" for failures.md's entries; "" for dlenv's own checks
  std::string severity;     // the highest a check reports: "error", "warning", "info"
  std::string layer;        // "driver", "gpu", "toolkit", "cudnn", "python", "env", "host"
  // The framework whose build `dlenv plan` chooses to fix it ("torch"), or "".
  std::string plan_framework;
};

// One row of kb/libnames.json: a library's file names for some CUDA majors.
struct LibraryInfo {
  std::string library;           // "cublasLt", "cudart", "cudnn", "nccl", ...
  std::vector<int> cuda_majors;  // empty: not tied to a CUDA major
  // For libraries versioned on their own (cudnn, nccl): the library's major, which is
  // the number library_file_name / library_from_file_name use for them.
  std::optional<int> own_major;
  std::vector<std::string> linux_names;    // SONAMEs, canonical first
  std::vector<std::string> windows_names;  // DLL names, canonical first
  std::string note;
  KbRef ref;
};

// One row of kb/cudnn_archives.json: an archive NVIDIA publishes and its SHA-256.
struct CudnnArchive {
  std::string file;      // "cudnn-linux-x86_64-9.17.0.29_cuda13-archive.tar.xz"
  Version cudnn;         // 9.17.0.29
  int cuda_major = 0;    // the CUDA major it was built for
  std::string platform;  // "linux-x86_64", "linux-sbsa", "windows-x86_64"
  std::string sha256;    // lower-case hex
  std::string note;
  KbRef ref;  // confirmed=false: corroborated by third-party pins only (warn, never refuse)
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
  // A file name shared by several CUDA majors (libcusolver.so.11: CUDA 11 and 12) gives the
  // lowest; library_info_for_file() lists them all. Libraries not tied to a CUDA major give
  // their own major (cudnn, nccl) or 0. Also accepts a path and a fuller Linux name
  // ("libcudart.so.12.4.127").
  virtual std::optional<std::pair<std::string, int>> library_from_file_name(
      std::string_view file_name) const = 0;
  // The libnames row behind the two queries above (nullptr when unknown).
  virtual const LibraryInfo* library_info(std::string_view library, int major) const {
    (void)library;
    (void)major;
    return nullptr;
  }
  virtual const LibraryInfo* library_info_for_file(std::string_view file_name) const {
    (void)file_name;
    return nullptr;
  }

  // NVIDIA's cuDNN archives by digest (lower-case hex) and by file name (the base name
  // as NVIDIA publishes it); nullptr when the KB does not know it.
  virtual const CudnnArchive* cudnn_archive_by_sha256(std::string_view sha256) const {
    (void)sha256;
    return nullptr;
  }
  virtual const CudnnArchive* cudnn_archive_by_file(std::string_view file_name) const {
    (void)file_name;
    return nullptr;
  }

  // The failure catalog.
  virtual const FindingInfo* finding(std::string_view id) const = 0;
  virtual const std::vector<FindingInfo>& findings() const = 0;

  // Names of the files this KB was built from, with a content hash, for the report.
  virtual std::string describe() const = 0;
  // The newest releases the tables know (`dlenv --version`): CUDA toolkit and cuDNN.
  struct NewestReleases {
    std::optional<Version> cuda_toolkit;
    std::optional<Version> cudnn;
  };
  virtual NewestReleases newest_releases() const { return {}; }
  // The names of the files this KB was built from ("cudnn.json", ...).
  virtual std::vector<std::string> file_names() const { return {}; }
  // The text of one KB file ("pytorch.json"), for data that has no typed query yet.
  virtual std::optional<std::string> file_text(std::string_view name) const {
    (void)name;
    return std::nullopt;
  }
};

}  // namespace dlenv
