// A cuDNN distribution to inspect or install: a .tar.xz / .zip archive read in
// place (libarchive; no extraction to disk) or an already extracted directory.
// Both look the same to the rest of the code: a list of entries with paths
// relative to the distribution's top directory ("include/cudnn_version.h",
// "lib/libcudnn.so.9") and a way to read the bytes of some of them.
//
// Opening a source checks every entry first: absolute paths, "..", links that
// leave the tree, device files and absurd sizes are refused with an Error that
// names the entry; nothing of such a source is ever read further or written.
//
// Archive readers: cudnn_archive_posix.cc (libarchive loaded at run time, then a
// tar program), cudnn_archive_tar.cc (the tar-program reader, both platforms) and
// cudnn_archive_win32.cc (Windows: the system's tar.exe).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace dlenv {

enum class SourceEntryType { file, directory, symlink, hardlink, device, fifo, socket, other };
const char* source_entry_type_name(SourceEntryType type);

struct SourceEntry {
  std::string path;      // relative to the top directory, '/'-separated, no trailing '/'
  std::string raw_path;  // as stored in the archive / on disk (for messages)
  SourceEntryType type = SourceEntryType::other;
  uint64_t size = 0;
  uint32_t mode = 0644;     // permission bits
  std::string link_target;  // symlink / hardlink target as stored
};

// Limits a source must respect: anything larger is refused as unsafe before a byte
// of it is read (a decompression or sparse-file bomb), and no file may hold more
// bytes than its entry declares. Derived from a real release: cuDNN 9.19.0 for
// CUDA 13 (measured, docs/measurements.md) has 8 shared libraries adding up to
// 493 MB, the largest libcudnn_engines_precompiled.so.9 at 245 MB; NVIDIA's
// archives hold fewer than 100 entries (kb/cudnn_manifests.json). The caps leave
// a wide margin above that (8x per file, 16x in total, 20x in entries) for larger
// releases (cuDNN 8 with every architecture, static libraries) and are overridable
// (`--max-file-size`, `--max-total-size`, `--max-files`).
struct SourceLimits {
  uint64_t max_entry_bytes = 2ull << 30;  // one file
  uint64_t max_total_bytes = 8ull << 30;  // all files
  size_t max_entries = 2000;
};

// One piece of a file's bytes: `offset` is where `piece` starts in the file.
using FilePieceVisitor =
    std::function<Result<void>(const SourceEntry&, uint64_t offset, std::string_view piece)>;

class CudnnSource {
 public:
  virtual ~CudnnSource() = default;
  // "archive /x/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz" or "directory /x/cudnn".
  virtual std::string description() const = 0;
  // The archive or directory file name ("cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz").
  virtual std::string file_name() const = 0;
  // Every entry (directories included), in archive / sorted order.
  virtual const std::vector<SourceEntry>& entries() const = 0;
  // Calls `visit` with the bytes of every regular file for which `want` says yes,
  // in one pass over the source, piece by piece (never a whole file in memory): the
  // pieces of one file come in order from offset 0 and add up to exactly its listed
  // size (a 0-byte file gets one empty piece); a file that holds more or fewer bytes
  // than listed is an Error. An error from `visit` stops the pass and is returned.
  virtual Result<void> stream_files(const std::function<bool(const SourceEntry&)>& want,
                                    const FilePieceVisitor& visit) const = 0;
  // stream_files with each file's bytes gathered whole (for small files: headers).
  Result<void> read_files(
      const std::function<bool(const SourceEntry&)>& want,
      const std::function<Result<void>(const SourceEntry&, std::string_view)>& visit) const;

  // The entry with this relative path, or nullptr.
  const SourceEntry* find(std::string_view path) const;
  // The bytes of one regular file (Error naming it when absent or unreadable).
  Result<std::string> read(std::string_view path) const;
};

// How far one stream_files pass is: bytes and files of the files it reads, of how many.
struct SourceProgress {
  uint64_t bytes = 0, total_bytes = 0;
  size_t files = 0, total_files = 0;
  bool done = false;  // the pass ended (read to the end, or stopped by an error)
};
using SourceProgressReport = std::function<void(const SourceProgress&)>;

// `inner`, whose stream_files passes call `report` after every piece (the first call with
// nothing read yet, the last with `done` set, whether the pass finished or failed): what a
// progress line shows. The caller decides how often to draw.
std::unique_ptr<CudnnSource> reporting_progress(std::unique_ptr<CudnnSource> inner,
                                                SourceProgressReport report);

// Checks entries as read from a source, strips the single common top directory
// (cudnn-linux-x86_64-9.1.0.70_cuda12-archive/) and normalises the paths.
// Error (naming the entry and the reason) for: absolute paths or drive letters,
// ".." components, symlinks/hardlinks whose target is absolute or leaves the
// tree, device files, FIFOs and sockets, entries over the limits, the same path
// twice, empty or NUL-containing names.
Result<std::vector<SourceEntry>> check_source_entries(std::vector<SourceEntry> entries,
                                                      const std::string& where,
                                                      const SourceLimits& limits = {});

// A host directory (not under --root: the distribution is the user's download).
Result<std::unique_ptr<CudnnSource>> open_directory_source(const std::string& dir,
                                                           const SourceLimits& limits = {});
// How archives are read. Linux: libarchive, loaded at run time (dlenv has no
// link-time dependency on it), else a tar program; Windows: the system's tar.exe
// (bsdtar). Neither extracts to disk: entries are listed and checked first, then
// the needed members are read into memory.
struct ArchiveReaders {
  // Tried in order with DynamicLibrary::open; empty = do not use libarchive.
  std::vector<std::string> libarchive_names;
  // Tried in order (`PROG --version` must run); empty = no tar program.
  std::vector<std::string> tar_programs;
};
// The platform's default: Linux {libarchive.so.13, libarchive.so} then {bsdtar, tar};
// Windows: no libarchive, %SystemRoot%\System32\tar.exe.
ArchiveReaders default_archive_readers();

// A .tar.xz/.tgz/.tar/.zip archive on the host, read with the first reader that works.
// When none does, the Error says what to install or to pass the extracted directory.
Result<std::unique_ptr<CudnnSource>> open_archive_source(const std::string& file,
                                                         const SourceLimits& limits = {});
Result<std::unique_ptr<CudnnSource>> open_archive_source(const std::string& file,
                                                         const SourceLimits& limits,
                                                         const ArchiveReaders& readers);

// Only through libarchive loaded from one of `names` (Error when none loads).
Result<std::unique_ptr<CudnnSource>> open_libarchive_source(const std::string& file,
                                                            const SourceLimits& limits,
                                                            const std::vector<std::string>& names);

// A tar program (bsdtar, GNU tar, Windows tar.exe) as the archive reader:
// `PROG -tvf FILE` lists the entries (checked like any other source), then
// `PROG -xOf FILE MEMBER...` reads the wanted members to memory, split by their
// listed sizes (never extracted to disk).
enum class TarFlavor { gnu, bsd };
struct TarProgram {
  std::string path;  // what run_process starts
  TarFlavor flavor = TarFlavor::bsd;
};
// Runs `PROG --version`: nullopt when it cannot be started.
std::optional<TarProgram> probe_tar_program(const std::string& path);
// Parses a verbose listing (`tar -tvf`) in the flavor's layout. Error naming the
// line that does not parse.
Result<std::vector<SourceEntry>> parse_tar_listing(std::string_view text, TarFlavor flavor);
Result<std::unique_ptr<CudnnSource>> open_tar_program_source(const std::string& file,
                                                             const SourceLimits& limits,
                                                             const TarProgram& tar);

// The SHA-256 of the archive file `path` (lowercase hex), read in 1 MiB pieces;
// Error for a directory or an unreadable file.
// `report` (when given) hears of the bytes hashed, as reporting_progress() tells them.
Result<std::string> source_sha256(const std::string& path, const SourceProgressReport& report = {});

// A directory or an archive, whichever `path` is.
Result<std::unique_ptr<CudnnSource>> open_cudnn_source(const std::string& path,
                                                       const SourceLimits& limits = {});

}  // namespace dlenv
