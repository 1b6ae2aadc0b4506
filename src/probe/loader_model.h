// The Linux/glibc dynamic loader's search, modelled as data: for a file (or a
// library name) it resolves every DT_NEEDED entry breadth-first the way ld.so
// does, plus the companions NVIDIA libraries dlopen at run time, and records
// for each the file chosen, the rule that chose it, the copies it shadowed and
// what is wrong (missing, wrong ELF class/machine, undefined symbols, missing
// symbol versions, mixed versions within one library family). It only reads
// files through FileSystem (so it works under --root) and never executes or
// loads the inspected file.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "binfmt/elf.h"
#include "binfmt/ldcache.h"
#include "binfmt/pe.h"
#include "kb/kb.h"
#include "platform/filesystem.h"
#include "util/result.h"

namespace dlenv {

// The search rules, in the order ld.so applies them (ld.so(8)).
enum class SearchRule {
  path,             // the name contains a '/': used as is ($ORIGIN... expanded)
  already_loaded,   // an object with this soname/name is already in the process
  rpath,            // DT_RPATH of the loading chain (only when the requester has no DT_RUNPATH)
  ld_library_path,  // LD_LIBRARY_PATH
  runpath,          // DT_RUNPATH of the requesting object only (not inherited)
  ld_cache,         // /etc/ld.so.cache
  default_dirs,     // the built-in trusted directories
  // Windows (loader_model_win.h), in the order the standard search applies them.
  known_dll,     // HKLM\...\Session Manager\KnownDLLs: always System32's copy
  api_set,       // api-ms-win-* / ext-ms-*: resolved by the loader's API set schema
  dll_load_dir,  // LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR / LOAD_WITH_ALTERED_SEARCH_PATH
  app_dir,       // the directory of the .exe
  user_dirs,     // AddDllDirectory / SetDllDirectory / os.add_dll_directory
  system32,      // C:\Windows\System32
  system16,      // C:\Windows\System
  windows_dir,   // C:\Windows
  current_dir,   // the process's current directory
  path_env,      // PATH
  not_found,
};

// "DT_RPATH", "LD_LIBRARY_PATH", "ld.so.cache", ...
std::string_view search_rule_name(SearchRule rule);

// What the walks of model_linux_load learn about the files of one FileSystem, kept for
// every walk given the same cache (LinuxLoaderSettings::files): each path's stat, real
// path, directory listing and ELF header once per path, and each file's parsed ELF once
// per file, the file being its device, inode, size and modification time (the hard links
// of one file, as conda's package cache leaves them in every environment, are one file).
// Walks that share one take the files not to change while they run (doctor: one report of
// one moment); a walk without one gets its own. Thread-safe.
class LoaderFileCache {
 public:
  explicit LoaderFileCache(const FileSystem& fs);
  ~LoaderFileCache();
  LoaderFileCache(const LoaderFileCache&) = delete;
  LoaderFileCache& operator=(const LoaderFileCache&) = delete;

  const FileSystem& fs() const;
  std::optional<FileStat> stat(const std::string& path);
  bool is_dir(const std::string& path);
  // The path with its symbolic links resolved: its directory's real path (asked once per
  // directory) joined with the name, a link in the same directory followed by name; else
  // FileSystem::real_path; the path itself when that fails.
  const std::string& real_path(const std::string& path);
  // The names in a directory; nullptr when it cannot be read.
  const std::unordered_set<std::string>* listing(const std::string& dir);
  // A file's ELF header (its first 64 bytes, read, not mapped): `error` says why it is not
  // one ("cannot read: ...", "corrupt: ...", "not an ELF file"), else class and machine.
  struct Header {
    std::string error;
    bool is_64 = false;
    uint16_t machine = 0;
  };
  const Header& header(const std::string& path);
  // The file parsed by parse_elf (ElfParseOptions::versions = `versions`); nullptr: not an
  // ELF file. An unreadable or corrupt file is an Error, not kept (asked again, read again).
  Result<std::shared_ptr<const ElfInfo>> elf(const std::string& path, bool versions);

  // The work done so far, for tests and timing: each counts the file system or parser calls
  // made, not the questions asked.
  struct Counts {
    uint64_t stats = 0;         // stat calls
    uint64_t listings = 0;      // directories read
    uint64_t header_reads = 0;  // ELF headers read
    uint64_t elf_parses = 0;    // files mapped and parsed by parse_elf
  };
  Counts counts() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

struct LinuxLoaderSettings {
  std::vector<std::string> ld_library_path;
  std::optional<LdCache> cache;
  // Empty: the defaults for the root object's machine (multiarch dir, /lib64 and
  // /usr/lib64 for 64-bit, /lib, /usr/lib).
  std::vector<std::string> default_dirs;
  // Directories of /etc/ld.so.conf: not searched by ld.so itself (only through
  // the cache) but used to explain a miss ("present in X but the cache is stale").
  std::vector<std::string> conf_dirs;
  std::string platform;  // $PLATFORM; empty: from the machine ("x86_64", "aarch64", "i686")
  std::string lib;       // $LIB; empty: "lib/<triplet>" when that dir exists, else lib64/lib
  // glibc-hwcaps subdirectory names the CPU supports, best first (e.g.
  // "x86-64-v3", "x86-64-v2"): each searched directory is tried as
  // DIR/glibc-hwcaps/NAME/ before DIR/.
  std::vector<std::string> hwcaps;
  // Sonames (or paths) already loaded in the process before the root.
  std::vector<std::string> preloaded;
  // The object that calls dlopen(name) for a root given by name (a framework's extension
  // opening libcudnn.so.9): its DT_RPATH (when it has no DT_RUNPATH) or DT_RUNPATH is
  // searched, $ORIGIN being its directory, and its DT_RPATH is inherited by what the
  // root needs, as ld.so does. None: a program without RPATH/RUNPATH calls it.
  struct DlopenCaller {
    std::string path;
    std::optional<std::string> rpath, runpath;
  };
  std::optional<DlopenCaller> dlopen_caller;
  bool companions = true;  // add NVIDIA run-time companions
  bool symbols = true;     // check undefined symbols and symbol versions
  // Scan libcudnn*'s read-only data for the cuBLASLt / NVRTC sonames it dlopens. Reads
  // whole files (cuDNN 9's sub-libraries are hundreds of MB): `deps` does, doctor does not.
  bool companion_strings = true;
  // Record what each thread did when (LoadTree::trace): `deps --trace`.
  bool trace = false;
  // Hand the walk's worker threads and mapped files to LoadTree::resources instead of
  // joining and unmapping them before returning (1-3 ms on the H200 VM): for a caller
  // that exits right after its output and leaves that to the kernel (`dlenv deps`).
  bool keep_resources = false;
  // The walk's lookups, symbol tables and string scans run ahead on a pool of the machine's
  // hardware threads; false: no threads, the walk does each itself when it needs it (for a
  // caller that runs many walks, side by side on its own threads).
  bool parallel_lookups = true;
  // Shared with other walks on the same FileSystem (see LoaderFileCache); none: the walk
  // keeps its own.
  std::shared_ptr<LoaderFileCache> files;
};

struct LoadCandidate {
  std::string path;
  SearchRule rule = SearchRule::not_found;
  std::string note;  // for rejected ones: why ("ELF class 32-bit, needed 64-bit")
};

enum class LoadSeverity { none, warning, error };

struct LoadedObject {
  std::string name;            // as requested: DT_NEEDED string, dlopen name or the root's path
  int parent = -1;             // the object that needs it (-1: the root)
  bool companion = false;      // dlopen'ed at run time, absent from the import table
  std::string companion_note;  // "cuDNN 9 loads its sub-libraries at run time"
  SearchRule rule = SearchRule::not_found;
  std::string rule_detail;              // e.g. "DT_RUNPATH of libcudnn.so.9: $ORIGIN"
  std::optional<std::string> path;      // the chosen file (logical path)
  std::string real_path;                // symlinks resolved
  int same_as = -1;                     // already loaded: index of that object
  std::vector<LoadCandidate> shadowed;  // other usable copies further down the search
  std::vector<LoadCandidate> rejected;  // files found but unusable (wrong class, not ELF...)
  std::vector<std::string> searched;    // every directory tried, in order
  std::vector<int> children;
  std::optional<ElfInfo> elf;
  std::optional<PeInfo> pe;  // Windows model
  bool delay_load = false;   // Windows: a delay-load import (missing fails at the first call)
  // Windows: the LoadLibrary error this object causes (126 missing, 127 missing
  // export, 193 wrong machine), 0 when none.
  int win_error = 0;
  std::string version;  // from the real file name (libcudnn_ops.so.9.1.0 -> "9.1.0")
  // Flags.
  bool missing = false;
  bool wrong_class = false;                  // only wrong-class/machine copies exist
  std::vector<std::string> missing_symbols;  // undefined, non-weak, defined nowhere loaded
  // Windows: each imported function the chosen DLL does not export (LoadLibrary error 127),
  // as {function ("name" or "ordinal N"), the DLL it is imported from}; forwarders that lead
  // nowhere are listed with the DLL the import names.
  std::vector<std::pair<std::string, std::string>> missing_imports;
  std::vector<std::string> missing_versions;  // "GLIBC_2.38 from libc.so.6"
  std::string family_mismatch;
  std::string problem;  // the explanation with the fix, when something is wrong
  LoadSeverity severity = LoadSeverity::none;
};

// One piece of a walk's work: "lookup libcudnn.so.9" (search + open), "table X" (its
// symbol table read), "scan X" (a span of its string scan), "symbols" (a chunk of the
// check), "wait ..." (the walk's own thread waiting). Times are from the walk's start;
// `thread` 0 is the walk's own thread, 1... the pool's.
struct LoadTraceSpan {
  std::string what;
  int thread = 0;
  double start_ms = 0, end_ms = 0;
};

struct LoadTree {
  std::vector<LoadedObject> objects;  // [0] is the root, then breadth-first load order
  int errors = 0;
  int warnings = 0;
  // The walk stopped at object_limit objects with more still to load (a runaway or hostile
  // dependency graph): said in the text and JSON of `dlenv deps` (docs/json-schema.md).
  bool truncated = false;
  size_t object_limit = 0;
  // Where the time went: "walk" (of it "walk_wait"), "walk_search" and "walk_open" (summed
  // over threads), "companion_scan_wait", "symbols" (of it "symbols_tables_wait"),
  // "families", "total" (docs/json-schema.md).
  std::map<std::string, double> timing_ms;
  std::vector<LoadTraceSpan> trace;  // with LinuxLoaderSettings::trace, in start order
  // With LinuxLoaderSettings::keep_resources: the idle worker threads and the mapped
  // files; releasing it joins and unmaps them.
  std::shared_ptr<void> resources;
};

// Resolves `file_or_name`: a path (anything with a '/') is the root object; a
// bare name is looked up as dlopen(name) from a program without RPATH/RUNPATH.
// Error only when the root itself cannot be read or is not a usable ELF file.
Result<LoadTree> model_linux_load(const FileSystem& fs, const Kb& kb,
                                  const std::string& file_or_name,
                                  const LinuxLoaderSettings& settings);

// Expands $ORIGIN, $LIB and $PLATFORM (and their ${...} forms) in one
// RPATH/RUNPATH element. `origin` is the directory of the object holding it.
std::string expand_dst(std::string_view dir, const std::string& origin, const std::string& lib,
                       const std::string& platform);

}  // namespace dlenv
