// Windows facts (--os windows, or dlenv.exe on Windows): the driver DLLs and their
// version resources, the MSVC and OpenMP run-time DLLs, how PATH / CUDA_PATH pick a
// toolkit, and the PATH stored in the registry. Toolkits and cuDNN copies found on
// Windows go into the common ToolkitFacts / CudnnCopy lists (facts.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "probe/fact.h"

namespace dlenv {

// One DLL (or EXE) on disk, with what its PE header and version resource say.
struct WinFile {
  std::string name;                  // lower-case file name ("cudnn64_8.dll")
  std::string path;                  // logical path
  Fact<std::string> version;         // VS_FIXEDFILEINFO file version ("31.0.15.2849")
  std::string machine;               // "x64", "x86", ...; "" when the PE could not be read
  std::string found_via;             // "System32", "PATH", "torch\\lib", "python dir", ...
  std::vector<std::string> imports;  // DLL names from the import table (lower case)
};

// One PATH entry of the process, in order.
struct WinPathEntry {
  std::string entry;    // as written ("C:\\Program Files\\...\\v11.8\\bin")
  std::string logical;  // the directory it names on this machine (logical path)
  bool exists = false;
  std::string toolkit_root;  // the CUDA toolkit whose bin directory this is ("" none)
  // Interesting files found there (lower case): nvcc.exe, cudart64_*.dll, cudnn*64_*.dll,
  // cublas*64_*.dll, zlibwapi.dll, ...
  std::vector<std::string> cuda_files;
};

// Where the DLL search path (System32, Windows, PATH in order) finds a DLL name.
struct WinResolved {
  std::string name;                // lower case
  std::vector<std::string> paths;  // every copy in search order; the first one wins
};

// A DLL of a cuDNN copy that imports a CUDA DLL (cuBLAS, cuBLASLt, cudart) found neither
// beside it nor on the DLL search path (System32, the Windows folder, PATH): loading it
// fails with error 126 (at the first convolution for a cuDNN 8 sub-library).
struct WinMissingImport {
  std::string dll;                  // the importing DLL (logical path)
  std::string needs;                // the imported DLL, as its import table spells it
  std::vector<std::string> copies;  // directories (logical) that hold a copy nonetheless
};

struct WindowsFacts {
  // Driver: System32\nvcuda.dll (the CUDA driver) and nvml.dll (System32, NVSMI).
  std::vector<WinFile> nvcuda;
  std::vector<WinFile> nvml;
  // "528.49" from nvcuda.dll's file version 31.0.15.2849 (the last five digits).
  Fact<std::string> driver_version;
  // GPUs named by the display-adapter class keys of the registry (DriverDesc).
  std::vector<std::string> registry_gpus;

  // MSVC run time: vcruntime140.dll, vcruntime140_1.dll, msvcp140.dll in System32 and
  // beside every python.exe (a conda env root, an IDE folder).
  std::vector<WinFile> msvc_runtime;
  // OpenMP run times (libiomp5md.dll, libomp140.x86_64.dll, vcomp140.dll) in System32,
  // on PATH, in each environment's torch\lib, Library\bin and other package folders.
  std::vector<WinFile> openmp;
  // zlibwapi.dll copies: the search path, toolkits' bin, cuDNN folders, torch\lib.
  std::vector<WinFile> zlibwapi;
  // CUDA-related DLLs inside Python environments (torch\lib, nvidia\*\bin,
  // ctranslate2, paddle\libs): lower-case name -> paths.
  std::map<std::string, std::vector<std::string>> python_dlls;

  // CUDA_PATH and every CUDA_PATH_V*_* variable (name -> value as written).
  std::map<std::string, std::string> cuda_path_vars;
  std::vector<WinPathEntry> path;     // the process PATH
  std::vector<WinResolved> resolved;  // CUDA/cuDNN/runtime DLLs and nvcc.exe on the search path
  std::string system32;               // logical System32 directory
  // CUDA DLLs that a cuDNN copy's DLLs import and the search path does not find.
  std::vector<WinMissingImport> cudnn_missing_imports;

  // The PATH stored in the registry (what a new shell gets): user and machine.
  Fact<std::string> user_path;
  Fact<std::string> machine_path;
  // Entries of the registry PATH (expanded) that exist but this process's PATH lacks.
  std::vector<std::string> path_not_in_process;
};

}  // namespace dlenv
