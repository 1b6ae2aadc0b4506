// What a live process has mapped: /proc/PID/maps parsed, the NVIDIA/CUDA
// libraries among the mapped files with their versions and where each came
// from (CUDA toolkit, pip wheel, conda env, system/driver). Reads files only
// (under --root: DIR/proc/PID/maps and the libraries inside DIR). The same for
// the module paths of a Windows process (nvidia_modules): DLL names, versions
// from the PE version resource, Windows origins (driver store, System32, the
// toolkit under Program Files, the cuDNN installer's folder).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "platform/filesystem.h"
#include "probe/mapped_library.h"
#include "util/result.h"

namespace dlenv {

// One line of /proc/PID/maps: "start-end perms offset dev inode [path]".
struct MapsEntry {
  uint64_t start = 0, end = 0;
  std::string perms;  // "r-xp"
  uint64_t offset = 0;
  std::string dev;  // "08:01"
  uint64_t inode = 0;
  std::string path;      // "" for anonymous mappings; "[heap]", "[stack]" kept as is
  bool deleted = false;  // " (deleted)" suffix: the file was replaced/removed after mapping
};

// Parses the text of a maps file. A malformed line is an Error naming `source`
// and the line number; an empty text is an empty list.
Result<std::vector<MapsEntry>> parse_proc_maps(std::string_view text, const std::string& source);

// The NVIDIA/CUDA library name for a file name ("libcublasLt.so.13.0.0.19" ->
// "cublasLt"), nullopt for anything else.
std::optional<std::string> nvidia_library_kind(std::string_view file_name);

// The NVIDIA libraries among `maps`, in first-mapped order, classified through `fs`.
std::vector<MappedLibrary> nvidia_libraries(const FileSystem& fs,
                                            const std::vector<MapsEntry>& maps);

// Where a library file comes from, by its path (and the files around it).
void classify_origin(const FileSystem& fs, MappedLibrary& lib);

// The NVIDIA/CUDA library name for a Windows DLL name ("cudnn_ops_infer64_8.dll"
// -> "cudnn", "nvcuda.dll" -> "cuda (driver)"), case-insensitive; nullopt for
// anything else.
std::optional<std::string> nvidia_dll_kind(std::string_view file_name);

// The NVIDIA DLLs among the module paths of a Windows process (C:\x\y.dll,
// \\?\C:\x\y.dll or C:/x/y.dll), in the given order, one per path
// (compared case-insensitively). `path` keeps the form given; files are read
// through `fs` with '/' separators.
std::vector<MappedLibrary> nvidia_modules(const FileSystem& fs,
                                          const std::vector<std::string>& module_paths);

struct ProcessLibraries {
  int pid = 0;
  std::string command;  // /proc/PID/comm, or the first cmdline word
  std::vector<MappedLibrary> libraries;
};

// /proc/PID/maps of one process (through fs).
Result<ProcessLibraries> read_process_libraries(const FileSystem& fs, int pid);

// Every process under /proc with a mapped file whose name contains `name`
// (case-sensitive, e.g. "libcublas"); processes whose maps cannot be read are
// listed in `unreadable` with the reason (permission denied for other users'
// processes without privileges).
struct HoldingProcess {
  int pid = 0;
  std::string command;
  std::vector<std::string> paths;  // the matching mapped files
};
struct HoldingScan {
  std::vector<HoldingProcess> holders;
  std::vector<std::pair<int, std::string>> unreadable;  // pid, reason
  int scanned = 0;
};
HoldingScan processes_holding(const FileSystem& fs, std::string_view name);

}  // namespace dlenv
