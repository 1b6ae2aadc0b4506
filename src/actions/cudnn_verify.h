// Verification of a cuDNN just installed into a toolkit (the last step of
// `dlenv cudnn install`; a failure rolls the install back):
//   - the header says the version installed;
//   - every library file of that cuDNN major (kb cudnn.json library_files_by_major,
//     Linux and Windows names) is there, and the main library's version agrees;
//   - the loader model resolves the library, its sub-libraries and their
//     dependencies with the toolkit's own library directory first on the search
//     path (Linux: LD_LIBRARY_PATH; Windows: PATH; cuDNN 8.3+ on Windows: zlibwapi.dll
//     too), so only a genuinely missing file fails (the driver's library and Windows's
//     own DLLs belong to the machine, not to the install: they are not required);
//   - on the live system, a real load of the library and each sub-library in a child
//     process (foreign code never runs inside dlenv): dlenv itself with the hidden
//     `cudnn load-check` subcommand, the toolkit's library directory first on
//     LD_LIBRARY_PATH / PATH.
// Each failure names the missing file and where to get it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kb/kb.h"
#include "probe/probe.h"
#include "util/version.h"

namespace dlenv {

struct LoadCheckResult {
  std::vector<std::string> loaded;
  std::string failed;  // the file whose load failed ("" when all loaded)
  std::string error;   // the loader's message
  std::optional<Version> version;
};
// The real load of `files` (the main library first) with `first_dir` first on the
// loader's search path, in another process: foreign code never runs inside dlenv.
// The CLI gives child_load_checker (dlenv's own `cudnn load-check`); tests give fakes.
using LoadChecker = std::function<Result<LoadCheckResult>(const std::vector<std::string>& files,
                                                          const std::string& first_dir)>;

struct CudnnVerifyRequest {
  Version version;          // what was installed
  std::string toolkit;      // its real path
  std::string include_dir;  // where cudnn_version.h went ("" when it is not installed)
  std::string lib_dir;      // where the main library went
  LoadChecker load_check;   // empty: no real load
};

struct CudnnVerifyResult {
  std::vector<std::string> verified;  // what was checked and found good
  std::vector<std::string> errors;    // each names the file and the way to get it
  std::vector<std::string> notes;
};

CudnnVerifyResult verify_cudnn_install(const ProbeContext& ctx, const CudnnVerifyRequest& req);

// "9.0.0" from libcudnn_ops.so.9.0.0 (the real file's name), or a DLL's version
// resource; "" when neither says.
std::string installed_file_version(const FileSystem& fs, const std::string& path);

// Where a missing dependency `name` ("libcublasLt.so.12", "zlibwapi.dll",
// "cudnn_ops64_9.dll") comes from and where it must go, for messages.
std::string missing_file_advice(const Kb& kb, const std::string& name, Os os,
                                const std::string& toolkit_lib_dir);

// The real load, child side (`dlenv cudnn load-check FILE...`): loads each file in
// order (the first is the main library, whose cudnnGetVersion() is called), stops at
// the first that fails. JSON: {"loaded":[...], "failed":F, "error":E, "version":V}.
std::string run_load_check(const std::vector<std::string>& files);

// The real load, parent side: `command` + files, in a child process whose
// LD_LIBRARY_PATH (Linux) or PATH (Windows) starts with `first_dir`.
Result<LoadCheckResult> load_check_in_child(const std::vector<std::string>& command,
                                            const std::vector<std::string>& files,
                                            const std::string& first_dir, Os os);
// The LoadChecker that runs load_check_in_child with `command` for `os`.
LoadChecker child_load_checker(std::vector<std::string> command, Os os);

}  // namespace dlenv
