// `dlenv cudnn install / uninstall / list`: put a cuDNN distribution into a CUDA
// toolkit as one transaction and take it out again exactly.
//
// install: choose the toolkit (its CUDA major must match the distribution's),
// plan every file (new, or replacing which version), check permissions and the
// processes that map files to be replaced, then: stage every file under
// <toolkit>/.dlenv/staging-<ver>/, move each replaced file into
// <toolkit>/.dlenv/backup-cudnn-<ver>/, move the staged file into place, write
// <toolkit>/.dlenv/cudnn-<ver>.json and verify (header and library versions
// agree; the library and its sub-libraries resolve through the loader model;
// without --root, a real load). Any failure, verification included, undoes every
// step (file_writer.h's Transaction), so the toolkit is back exactly as it was.
//
// Reads go through ProbeContext::fs and writes through FileWriter, both on
// logical paths: under --root everything happens inside the root.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "actions/cudnn_inspect.h"
#include "actions/cudnn_source.h"
#include "actions/file_writer.h"
#include "platform/process_modules.h"
#include "probe/probe.h"

namespace dlenv {

struct CudnnInstallOptions {
  std::string toolkit;          // --toolkit DIR (logical; "C:\..." accepted for --os windows)
  std::optional<Version> cuda;  // --cuda X.Y
  bool force = false;           // install into a toolkit of another CUDA major
};

struct CudnnInstallStep {
  std::string source_path;  // in the distribution
  std::string dest;         // logical path in the toolkit (symlinks in its directory resolved)
  SourceEntryType type = SourceEntryType::file;
  uint32_t mode = 0644;
  uint64_t size = 0;
  std::string link_target;
  bool replaces = false;
  std::string old_what;  // "9.0.0 (libcudnn.so.9.0.0)", "link -> libcudnn.so.9.0.0"
  std::string new_what;
  std::string backup;  // where the replaced file goes
  std::string staged;  // where the new file is staged
};

struct BusyFile {
  std::string path;
  int pid = 0;
  std::string command;
};

struct CudnnInstallPlan {
  CudnnDistInfo dist;
  std::string toolkit;  // logical root as found / given
  std::string toolkit_real;
  Fact<Version> toolkit_version;
  std::string toolkit_reason;  // why this toolkit ("--toolkit", "the only CUDA 12 toolkit", ...)
  std::string previous_cudnn;  // "9.0.0 (include/cudnn_version.h)" or ""
  std::string version;         // the distribution's version text ("9.1.0.70")
  std::vector<CudnnInstallStep> steps;
  std::vector<std::string> blockers;  // nothing is touched while any is set
  std::vector<std::string> warnings;
  std::vector<BusyFile> busy;
  std::string dlenv_dir, staging_dir, backup_dir, manifest_path;
  std::vector<std::string> dirs_to_create;  // destination dirs that do not exist yet
  bool ok() const { return blockers.empty(); }
};

// Inspects the source and plans the install; never writes. Error only for a
// source that cannot be read.
Result<CudnnInstallPlan> plan_cudnn_install(const ProbeContext& ctx, const CudnnSource& source,
                                            const CudnnInstallOptions& options);

struct CudnnInstallResult {
  bool installed = false;
  std::string failure;                         // the step that failed (then everything was undone)
  std::vector<std::string> rollback_problems;  // steps the undo could not do (empty: exact)
  std::vector<std::string> verified;           // what verification checked and found good
  std::vector<std::string> verify_errors;
  std::vector<std::string> notes;  // ldconfig, LD_LIBRARY_PATH advice, restart advice
};

// Carries out a plan (which must be ok()).
CudnnInstallResult execute_cudnn_install(const ProbeContext& ctx, const CudnnSource& source,
                                         const CudnnInstallPlan& plan, FileWriter& writer);

struct CudnnUninstallResult {
  bool removed = false;
  std::string toolkit;
  std::string version;
  std::string failure;
  std::vector<std::string> rollback_problems;
  std::vector<std::string> restored;  // files put back from the backup
  std::vector<std::string> removed_files;
  std::vector<std::string> notes;
};

// Undoes `dlenv cudnn install` of `version` ("9.1.0.70", or a prefix such as "9.1")
// in the toolkit (`toolkit` empty: every toolkit found is searched for the manifest).
CudnnUninstallResult uninstall_cudnn(const ProbeContext& ctx, const std::string& version,
                                     const std::string& toolkit, FileWriter& writer);

// Processes whose /proc/PID/maps maps any of `paths` (logical real paths).
std::vector<BusyFile> find_busy_files(const FileSystem& fs, const std::vector<std::string>& paths);

// Windows: the processes in `scan` that have any of `paths` (Windows paths, "C:\...")
// loaded, compared case-insensitively and with either separator.
std::vector<BusyFile> busy_from_modules(const ModuleScan& scan,
                                        const std::vector<std::string>& paths);

// CUDA toolkits where archives can go (Linux: the toolkit probe, pip-assembled trees
// left out; Windows: CUDA_PATH, CUDA_PATH_V*, Program Files\NVIDIA GPU Computing Toolkit).
struct ToolkitLocation {
  std::string root;  // logical, as found
  std::string real;  // symlinks resolved
  Fact<Version> version;
  bool is_default = false;  // /usr/local/cuda or CUDA_PATH points here
};
std::vector<ToolkitLocation> find_cuda_toolkits(const ProbeContext& ctx);

// Logical path from a user's toolkit argument ("C:\\CUDA\\v12.4" -> "/CUDA/v12.4" for windows).
std::string logical_toolkit_path(const std::string& arg, Os os);
// How a logical path is shown ("/Program Files/X" -> "C:\\Program Files\\X" for windows).
std::string display_path(const std::string& logical, Os os);

std::string render_install_plan_text(const CudnnInstallPlan& plan, Os os);
std::string render_install_result_text(const CudnnInstallResult& result);
std::string render_install_json(const CudnnInstallPlan& plan, const CudnnInstallResult* result,
                                bool dry_run, Os os);  // dlenv.cudnn-install/1
std::string render_uninstall_text(const CudnnUninstallResult& result);
std::string render_uninstall_json(const CudnnUninstallResult& result);  // dlenv.cudnn-uninstall/1

// `dlenv cudnn list`: every cuDNN copy on the machine.
struct CudnnListEntry {
  CudnnCopy copy;
  std::string complete;                // "complete" / "missing N sub-libraries: ..."
  std::vector<std::string> loaded_by;  // who would load it
  std::string installed_by_dlenv;      // manifest path when dlenv installed it
  Os os = Os::linux;                   // how paths are shown (C:\\... for windows)
};
std::vector<CudnnListEntry> list_cudnn(const ProbeContext& ctx);
std::string render_cudnn_list_text(const std::vector<CudnnListEntry>& list);
std::string render_cudnn_list_json(const std::vector<CudnnListEntry>& list);  // dlenv.cudnn-list/1

}  // namespace dlenv
