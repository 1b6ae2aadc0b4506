// `dlenv cudnn inspect`: what a cuDNN distribution (archive or directory) is --
// version (cudnn_version.h macros, build number from the file name), platform,
// the CUDA major it was built for (file name, and the cuBLAS/cuBLASLt the
// libraries import or load) -- and whether it is complete against the
// knowledge base's manifest (kb/cudnn_manifests.json). Also maps every file to
// its place in a CUDA toolkit, which `cudnn install` uses.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "actions/cudnn_source.h"
#include "kb/kb.h"
#include "probe/fact.h"
#include "util/version.h"

namespace dlenv {

// One file of the distribution and where it goes in a toolkit.
struct CudnnDistFile {
  std::string path;  // in the distribution ("lib/libcudnn.so.9")
  std::string dest;  // relative to the toolkit ("lib64/libcudnn.so.9"); empty: not installed
  SourceEntryType type = SourceEntryType::file;
  uint32_t mode = 0644;
  uint64_t size = 0;
  std::string link_target;  // symlinks
};

struct CudnnDistInfo {
  std::string source;     // "archive /x/cudnn-....tar.xz"
  std::string file_name;  // the archive / directory name
  std::string sha256;     // of the archive file (set by the caller: source_sha256); "" for a dir
  // The NVIDIA archive of the KB (kb/cudnn_archives.json) with this digest (add_archive_digest).
  std::optional<CudnnArchive> known_archive;
  Os os = Os::linux;
  Fact<std::string> platform;  // "linux-x86_64", "linux-sbsa", "windows-x86_64"
  Fact<Version> version;       // 9.1.0.70 when the file name has the build, else 9.1.0
  Fact<int> cuda_major;
  std::vector<std::string>
      cuda_evidence;  // "file name (_cuda12)", "lib/libcudnn_ops.so.9 loads libcublasLt.so.12"
  // The manifest row compared against.
  std::string manifest;  // "cuDNN 8.5.0.96 windows" / "cuDNN 9.x linux" / "" (none)
  KbRef manifest_ref;
  size_t manifest_files = 0;
  size_t file_count = 0;                // regular files + links in the distribution
  std::vector<std::string> missing;     // in the manifest, not in the distribution
  std::vector<std::string> extra;       // cuDNN-looking files the manifest does not list
  std::vector<std::string> unexpected;  // files that are not cuDNN's (never installed)
  std::vector<std::string> errors;      // the distribution must not be installed
  std::vector<std::string> warnings;
  std::vector<CudnnDistFile> files;  // every file / link, with its destination
  bool complete() const { return errors.empty() && missing.empty(); }
};

// Reads the distribution (headers fully; libraries for their imports). Error only
// when the source cannot be read at all.
Result<CudnnDistInfo> inspect_cudnn(const CudnnSource& source, const Kb& kb);

// The parts of NVIDIA's archive name: cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz,
// cudnn-windows-x86_64-8.3.2.44_cuda11.5-archive.zip, cudnn-11.2-linux-x64-v8.1.0.77.tgz.
struct CudnnArchiveName {
  std::string os;        // "linux" / "windows"
  std::string platform;  // "linux-x86_64"
  std::optional<Version> version;
  std::optional<int> cuda_major;
};
std::optional<CudnnArchiveName> parse_cudnn_archive_name(const std::string& file_name);

// CUDNN_MAJOR / CUDNN_MINOR / CUDNN_PATCHLEVEL from cudnn_version.h (or cudnn.h).
std::optional<Version> parse_cudnn_version_header(const std::string& text);

// What the KB knows of an archive's SHA-256 (kb/cudnn_archives.json).
struct ArchiveDigestCheck {
  const CudnnArchive* match = nullptr;  // the row with this digest
  const CudnnArchive* named = nullptr;  // the row with this file name when its digest differs
};
ArchiveDigestCheck check_archive_digest(const Kb& kb, const std::string& file_name,
                                        const std::string& sha256);
// "… carries the name of NVIDIA's … but not its SHA-256 …": why a download is not NVIDIA's file.
std::string archive_digest_mismatch(const CudnnArchive& named, const std::string& sha256);
// "NVIDIA's cudnn-....tar.xz (SOURCE)", "; unconfirmed" added for an unconfirmed row.
std::string known_archive_text(const CudnnArchive& a);
// Sets info.sha256 and what the KB knows of it: known_archive on a match; on a file that
// carries a KB name with another digest, an error (confirmed row) or a warning.
void add_archive_digest(CudnnDistInfo& info, const Kb& kb, const std::string& sha256);

std::string render_cudnn_inspect_text(const CudnnDistInfo& info);
std::string render_cudnn_inspect_json(const CudnnDistInfo& info);  // dlenv.cudnn-inspect/1

}  // namespace dlenv
