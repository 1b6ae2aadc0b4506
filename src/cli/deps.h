// `dlenv deps` and `dlenv load`: the loader model and a real dlopen, rendered.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "probe/loader_model.h"

namespace dlenv {

struct DepsOptions {
  std::string target;  // FILE (with a '/') or a library NAME
  bool flat = false;   // one line per object in load order instead of the tree
  bool json = false;
  bool trace = false;  // add the walk's timeline (which thread did what, when)
  // Linux: the ELF that calls dlopen(target) (a framework's extension module): its
  // DT_RPATH/DT_RUNPATH are searched, as ld.so does for a dlopen from it.
  std::string dlopen_from;
  std::string root;      // --root DIR
  std::string env_file;  // --env-file FILE (LD_LIBRARY_PATH, PATH, CUDA_PATH* are read from it)
  // "linux", "windows" or "" (automatic: windows for a PE file or a .dll/.exe/.pyd name).
  std::string os;
  // Windows model only.
  std::string app_dir;                // the .exe's directory (e.g. python.exe's)
  std::vector<std::string> dll_dirs;  // AddDllDirectory / os.add_dll_directory
  std::string cwd;                    // the process's current directory
  bool python_ext = false;            // Python >= 3.8 extension module / ctypes load
  bool altered_search_path = false;   // LoadLibraryEx(LOAD_WITH_ALTERED_SEARCH_PATH)
};

// Exit: 0 everything resolves, 1 something is missing or broken, 2 usage error.
int run_deps(const DepsOptions& options, std::ostream& out, std::ostream& err);

struct LoadOptions {
  std::string target;  // NAME or PATH, given to dlopen as is
  bool json = false;
  // With --root (or --os other than this host's): no real load, only the
  // loader model's explanation of the failure `error_code` (Windows: 126, 127,
  // 193, 1114; 0: whatever the model finds).
  std::string root;
  std::string env_file;
  std::string os;
  int error_code = 0;
};

// A real dlopen (RTLD_NOW | RTLD_LOCAL). Exit 0 loaded, 1 failed (with the
// dependency walk that explains it).
int run_load(const LoadOptions& options, std::ostream& out, std::ostream& err);

// Windows: the sentences that explain LoadLibrary error `code` (126, 127, 193,
// 1114; 0: unknown) for `target`, from the Windows loader model's walk:
// "cudnn64_8.dll was found in C:\cudnn\bin (PATH), but: cublasLt64_11.dll
// (needed by cudnn64_8.dll) was not found ...; a copy exists in Y, which is not on PATH".
std::vector<std::string> explain_windows_load_failure(const LoadTree& tree,
                                                      const std::string& target, int code);

// Windows: one sentence per imported function that a DLL of the walk imports (at load
// time, not delay-loaded) from a DLL that does not export it: "on Windows this load fails
// with error 127: X.dll imports Foo from Y.dll, which does not export it". `dlenv load`
// asserts them after a LoadLibrary that succeeded, because Wine binds such an import to a
// stub (the call fails later) where Windows refuses the load.
std::vector<std::string> windows_import_errors(const LoadTree& tree);

}  // namespace dlenv
