// The modules (DLLs) of live Windows processes, for `dlenv which` on Windows.
// On Linux `dlenv which` reads /proc/PID/maps through the FileSystem instead
// (probe/process_maps.h), so the POSIX side of this interface only says so.
//
// Methods (process_modules_win32.cc):
//  - one process: CreateToolhelp32Snapshot(TH32CS_SNAPMODULE | TH32CS_SNAPMODULE32)
//    and Module32FirstW/NextW (the loader's own module list: what is loaded now);
//  - every process: TH32CS_SNAPPROCESS, then one module snapshot per process; a
//    process whose snapshot fails (another user's, a protected or system process)
//    is counted with the reason, never skipped silently;
//  - a command: started under the debug API (CreateProcessW with DEBUG_PROCESS),
//    every LOAD_DLL / UNLOAD_DLL debug event recorded (the path from the event's
//    file handle with GetFinalPathNameByHandleW, else from lpImageName in the
//    child's memory), until the command exits (processes it leaves running are
//    detached, not waited for) or the timeout kills them. Nothing is sampled, so
//    a DLL loaded and unloaded in between is seen too.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "util/result.h"

namespace dlenv {

// True where the functions below are implemented (Windows).
bool native_process_modules();

struct ProcessModules {
  int pid = 0;
  std::string image;                 // the executable's file name ("python.exe")
  std::vector<std::string> modules;  // full paths as the OS reports them, load order
};

// The modules one process has loaded now. Fails naming the pid and the reason
// (no such process; access denied: another user's or a protected process).
Result<ProcessModules> process_modules(int pid);

struct ModuleScan {
  std::vector<ProcessModules> processes;
  std::vector<std::pair<int, std::string>> inaccessible;  // pid, "image: reason"
  int scanned = 0;                                        // processes listed
};

// Every process's modules (this one's included). Fails only when the process
// list itself cannot be read.
Result<ModuleScan> all_process_modules();

struct TracedModule {
  std::string path;
  int pid = 0;                 // the traced process that loaded it
  bool loaded_at_exit = true;  // false: an UNLOAD_DLL event came before its process exited
};

struct TraceResult {
  int exit_code = -1;  // the command's own process; -1 when killed at the timeout
  bool timed_out = false;
  double wall_ms = 0;
  int processes = 0;                  // processes traced (the command and those it started)
  int load_events = 0;                // LOAD_DLL events seen (the executable's image not counted)
  int unresolved = 0;                 // LOAD_DLL events whose path could not be found
  std::vector<TracedModule> modules;  // first-load order, one per (process, path)
};

// Runs argv (argv[0] looked up on PATH, with .exe) under the debug API, its
// stdout sent to our stderr and stdin/stderr inherited, and records every DLL
// it and the processes it starts load and unload, until it exits; after
// `timeout` they are killed. Fails naming argv[0] when it cannot be started.
Result<TraceResult> run_and_trace_modules(const std::vector<std::string>& argv,
                                          std::chrono::milliseconds timeout);

}  // namespace dlenv
