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
// step, so the toolkit is back exactly as it was. Every step is journaled first
// (transaction.h: <toolkit>/.dlenv/journal) under the toolkit's lock, so a run
// killed at any point is finished or rolled back by recover_toolkit (`dlenv cudnn
// recover`), which install and uninstall run first. Modes are sanitised (0755/0644).
//
// Reads go through ProbeContext::fs and writes through FileWriter, both on
// logical paths: under --root everything happens inside the root.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actions/cudnn_inspect.h"
#include "actions/cudnn_source.h"
#include "actions/cudnn_verify.h"
#include "actions/file_writer.h"
#include "actions/transaction.h"
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

// Carries out a plan (which must be ok()). `load_check`: the real load of the
// verification (cudnn_verify.h; empty: no real load).
CudnnInstallResult execute_cudnn_install(const ProbeContext& ctx, const CudnnSource& source,
                                         const CudnnInstallPlan& plan, FileWriter& writer,
                                         const LoadChecker& load_check = {});

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

// The toolkit (real path) holding the one dlenv install of `version` that
// uninstall_cudnn would take out (Error: none, or several, with the reason).
Result<std::string> locate_cudnn_install(const ProbeContext& ctx, const std::string& version,
                                         const std::string& toolkit);

// What uninstalling `version` ("9.1.0.70", or a prefix such as "9.1") does: found
// from the install manifest (in `toolkit`, or every toolkit found when empty) and
// checked (every path inside the toolkit's trees, no path turned into a link, every
// backup there); never writes. `failure` says why nothing can be done.
struct CudnnUninstallPlan {
  struct Item {
    std::string path;    // removed (when present)
    std::string backup;  // "" or what is moved back to `path`
    bool present = false;
  };
  std::string toolkit, manifest, version, failure;
  std::vector<Item> items;
  std::string backup_dir;                 // removed once empty ("" when none)
  std::vector<std::string> created_dirs;  // removed when empty, deepest first
  bool ok() const { return failure.empty(); }
};
CudnnUninstallPlan plan_cudnn_uninstall(const ProbeContext& ctx, const std::string& version,
                                        const std::string& toolkit);
std::string render_uninstall_plan_text(const CudnnUninstallPlan& plan, Os os);
std::string render_uninstall_plan_json(const CudnnUninstallPlan& plan);  // dry_run: true

// Carries out a plan, journaled, under the caller's lock of the toolkit. `report` (a progress
// line) hears the files done of the plan's items, first with none and last with `done` set.
CudnnUninstallResult execute_cudnn_uninstall(const ProbeContext& ctx,
                                             const CudnnUninstallPlan& plan, FileWriter& writer,
                                             const SourceProgressReport& report = {});

// plan_cudnn_uninstall + execute_cudnn_uninstall: undoes `dlenv cudnn install` of `version`
// ("9.1.0.70", or a prefix such as "9.1") in the toolkit (`toolkit` empty: every toolkit found is
// searched for the manifest).
CudnnUninstallResult uninstall_cudnn(const ProbeContext& ctx, const std::string& version,
                                     const std::string& toolkit, FileWriter& writer);

// Every install, uninstall and recovery of a toolkit runs under its lock, after a
// recovery of whatever an earlier run left in its journal (transaction.h):
//   <toolkit>/.dlenv/journal.
std::string toolkit_journal_path(const std::string& toolkit);

struct ToolkitLockOptions {
  bool wait = true;                                 // false: --no-wait
  std::function<void(const std::string&)> on_wait;  // told once before waiting
};
// The toolkit's lock (FileWriter::lock_dir). Another holder: Error with !wait,
// else `on_wait` is told and the call blocks until the lock is free.
Result<std::unique_ptr<FileLock>> lock_toolkit(FileWriter& writer, const std::string& toolkit,
                                               Os os, const ToolkitLockOptions& options);
// Finishes or rolls back the transaction journaled in the toolkit (Outcome::nothing
// when there is none), then removes an empty .dlenv. The caller holds the lock.
Result<RecoveryResult> recover_toolkit(const ProbeContext& ctx, FileWriter& writer,
                                       const std::string& toolkit);

struct InterruptedTransaction {
  std::string toolkit;  // real path
  std::string journal;
  RecoveryResult pending;  // what recovery would do (outcome), kind, what, pid
};
// Toolkits whose journal says a transaction was interrupted (read only).
std::vector<InterruptedTransaction> find_interrupted_transactions(const ProbeContext& ctx);

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

// Logical path from a user's toolkit argument: for windows as win_logical() reads it
// ("D:\\CUDA\\v12.4" -> "D:/CUDA/v12.4" on the machine itself, so that the current
// directory's drive does not matter; "C:\\CUDA" -> "/CUDA" under --root).
std::string logical_toolkit_path(const ProbeContext& ctx, const std::string& arg);
// How a logical path is shown ("/Program Files/X" -> "C:\\Program Files\\X" for windows).
std::string display_path(const std::string& logical, Os os);
// Whether `path` is `dir` or lies under it, compared as shown: on Windows a real path comes
// back with its drive letter, backslashes and the case it has on disk, a logical one without;
// NTFS ignores case.
bool path_within(const std::string& path, const std::string& dir, Os os);

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
// `interrupted`: find_interrupted_transactions(), each shown with its recover command.
std::string render_cudnn_list_text(const std::vector<CudnnListEntry>& list,
                                   const std::vector<InterruptedTransaction>& interrupted = {},
                                   Os os = Os::linux);
std::string render_cudnn_list_json(
    const std::vector<CudnnListEntry>& list,
    const std::vector<InterruptedTransaction>& interrupted = {});  // dlenv.cudnn-list/1
// "cudnn-install of cuDNN 9.1.0.70 by process 1234": what a journal's begin record says.
std::string describe_pending(const RecoveryResult& pending);
// The command that recovers `toolkit` ("dlenv cudnn recover --toolkit /usr/local/cuda-12.4").
std::string recover_command(const std::string& toolkit, Os os);

// `dlenv cudnn recover`: what recovery did in each toolkit.
struct CudnnRecoverEntry {
  std::string toolkit;
  std::optional<RecoveryResult> result;
  std::string error;  // the lock or the journal could not be handled
};
std::string render_recover_text(const std::vector<CudnnRecoverEntry>& entries, Os os);
std::string render_recover_json(
    const std::vector<CudnnRecoverEntry>& entries);  // dlenv.cudnn-recover/1

}  // namespace dlenv
