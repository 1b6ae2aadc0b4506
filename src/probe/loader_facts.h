// What the loader models (loader_model.h, loader_model_win.h) resolve on the
// analysed tree, for doctor's rules: the libraries each load context would
// really take, the LD_PRELOAD / /etc/ld.so.preload entries that come before
// every search, and the LD_LIBRARY_PATH entries the loader does not read the
// way their author meant. Plain data, filled by probe/loader_facts.cc.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace dlenv {

// One object of a modelled load (a LoadedObject, flattened for the rules).
struct ResolvedLib {
  std::string name;       // as requested ("libcudnn_ops.so.9", "cudnn_cnn_infer64_8.dll")
  std::string requester;  // the file name of the object that needs it; "" for the root
  std::string path;       // the chosen file (logical); "" when none
  std::string rule;       // the search rule that chose it ("DT_RUNPATH", "PATH", ...)
  std::string rule_detail;
  std::string version;     // from the file name (Linux) or the version resource (Windows)
  std::string machine;     // Windows: the chosen file's machine ("x64", "x86"); "" unknown
  bool companion = false;  // loaded at run time (dlopen / LoadLibrary), not an import
  bool delay_load = false;
  bool missing = false;
  bool wrong_class = false;     // only copies of another ELF class / PE machine were found
  int win_error = 0;            // Windows: 126 / 127 / 193 this object causes; 0 none
  std::string family_mismatch;  // mixed versions within cuDNN / cuBLAS
  // Windows 127: "function (dll)" imports the chosen DLLs do not export.
  std::vector<std::pair<std::string, std::string>> missing_imports;  // function, DLL
  std::vector<std::string> shadowed;   // other usable copies further down the search
  std::vector<std::string> path_copy;  // Python extension loads: copies in PATH directories,
                                       // which that load does not search
  std::vector<std::string> searched;   // missing ones: every directory the search tried
  bool stub = false;                   // the chosen file lives in a .../stubs directory
  std::string problem;                 // the model's explanation, with the fix
};

// One modelled load.
struct LoadContext {
  // "cudnn-copy": a cuDNN copy's main library and its run-time sub-libraries;
  // "by-name": a program opening the library by name (dlopen / LoadLibrary);
  // "python-extension": a framework's extension module imported by Python >= 3.8;
  // "framework" (Linux): a framework's CUDA extension library (libtorch_cuda.so, the JAX
  // CUDA plugin, ...) with the environment's LD_LIBRARY_PATH and the run-time companions;
  // "framework-dlopen" (Linux): the cuDNN that extension opens by name at run time
  // (dlopen, searched with its DT_RPATH / DT_RUNPATH), when it is not a DT_NEEDED entry.
  std::string kind;
  std::string label;                   // "python.exe loading cudnn64_8.dll by name (PATH search)"
  std::string root;                    // the file or name modelled
  std::string python_interpreter;      // python-extension: the interpreter
  std::string python_version;          // python-extension: "3.11.7"
  std::string framework;               // python-extension, framework*: "torch"
  std::string python_prefix;           // framework*: the environment's prefix
  std::string cuda;                    // framework*: the CUDA the framework was built for
  std::vector<std::string> user_dirs;  // python-extension: dirs the package adds itself
  std::string error;                   // the root could not be modelled (why)
  std::vector<ResolvedLib> libs;       // [0] is the root, then load order
};

// One LD_PRELOAD or /etc/ld.so.preload entry.
struct PreloadEntry {
  std::string entry;    // as written
  std::string source;   // "LD_PRELOAD" or "/etc/ld.so.preload"
  std::string path;     // the file it names (logical; a bare name searched like dlopen); "" none
  std::string soname;   // DT_SONAME of that file; "" when none or unreadable
  std::string version;  // from the real file name ("9.1.0"); "" unknown
  bool stub = false;    // a link-time stub (lives in a .../stubs directory)
};

// An LD_LIBRARY_PATH entry ld.so does not read as a fixed directory.
struct LdPathIssue {
  std::string entry;  // as written ("" for an empty entry)
  int position = 0;   // 1-based
  // "origin" ($ORIGIN: the program's directory, not the library's), "token"
  // (a $VAR the shell did not expand, or ~), "relative" (relative to the current
  // directory), "empty" (an empty entry: the current directory).
  std::string kind;
  std::string meaning;  // what ld.so makes of it
};

struct LoaderFacts {
  std::vector<PreloadEntry> preload;
  std::vector<LdPathIssue> ld_library_path_issues;
  std::string ld_library_path;  // the value as set ("" when unset)
  std::vector<LoadContext> contexts;
};

}  // namespace dlenv
