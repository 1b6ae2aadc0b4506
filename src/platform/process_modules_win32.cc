// Module lists of Windows processes (see process_modules.h for the methods).
// clang-format off
#include <windows.h>
#include <tlhelp32.h>
// clang-format on

#include <chrono>
#include <map>
#include <utility>

#include "platform/process_modules.h"
#include "platform/win32_text.h"
#include "util/strings.h"

namespace dlenv {
namespace {

class Handle {
 public:
  explicit Handle(HANDLE h = nullptr) : h_(h) {}
  ~Handle() {
    if (valid()) ::CloseHandle(h_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  HANDLE get() const { return h_; }
  bool valid() const { return h_ != nullptr && h_ != INVALID_HANDLE_VALUE; }

 private:
  HANDLE h_;
};

std::string why(DWORD err) {
  if (err == ERROR_ACCESS_DENIED) return "access denied";
  return win32::error_text(err) + " (error " + std::to_string(err) + ")";
}

// A module snapshot of `pid`; ERROR_BAD_LENGTH (the process was loading or
// unloading a module meanwhile) is retried as the documentation advises.
HANDLE module_snapshot(DWORD pid, DWORD& err) {
  HANDLE h = INVALID_HANDLE_VALUE;
  for (int attempt = 0; attempt < 8; ++attempt) {
    h = ::CreateToolhelp32Snapshot(TH32CS_SNAPMODULE | TH32CS_SNAPMODULE32, pid);
    if (h != INVALID_HANDLE_VALUE) return h;
    err = ::GetLastError();
    if (err != ERROR_BAD_LENGTH) break;
    ::Sleep(1);
  }
  return h;
}

Result<ProcessModules> snapshot_modules(DWORD pid) {
  DWORD err = 0;
  Handle snap(module_snapshot(pid, err));
  if (!snap.valid()) {
    if (err == ERROR_INVALID_PARAMETER) return fail("no such process", ErrorCode::not_found);
    return fail(why(err),
                err == ERROR_ACCESS_DENIED ? ErrorCode::access_denied : ErrorCode::failed);
  }
  ProcessModules p;
  p.pid = static_cast<int>(pid);
  MODULEENTRY32W me{};
  me.dwSize = sizeof me;
  for (BOOL ok = ::Module32FirstW(snap.get(), &me); ok; ok = ::Module32NextW(snap.get(), &me)) {
    std::string path = win32::narrow(me.szExePath);
    if (p.modules.empty()) p.image = win32::narrow(me.szModule);
    p.modules.push_back(std::move(path));
  }
  return p;
}

// The file a LOAD_DLL / CREATE_PROCESS event names: its handle's final path,
// else the string lpImageName points to in the debuggee (often absent).
std::string event_image_path(HANDLE process, HANDLE file, void* image_name, WORD unicode) {
  if (file != nullptr && file != INVALID_HANDLE_VALUE) {
    std::wstring buf(1024, L'\0');
    DWORD n = ::GetFinalPathNameByHandleW(file, buf.data(), static_cast<DWORD>(buf.size()),
                                          FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
    if (n >= buf.size() && n < 32768) {
      buf.assign(n + 1, L'\0');
      n = ::GetFinalPathNameByHandleW(file, buf.data(), static_cast<DWORD>(buf.size()),
                                      FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
    }
    if (n > 0 && n < buf.size()) {
      buf.resize(n);
      return win32::strip_verbatim_prefix(win32::narrow(buf));
    }
  }
  if (image_name == nullptr) return "";
  void* remote = nullptr;
  SIZE_T got = 0;
  if (!::ReadProcessMemory(process, image_name, &remote, sizeof remote, &got) ||
      got != sizeof remote || remote == nullptr) {
    return "";
  }
  if (unicode) {
    std::wstring s(MAX_PATH * 2, L'\0');
    if (!::ReadProcessMemory(process, remote, s.data(), s.size() * sizeof(wchar_t), &got) &&
        got == 0) {
      return "";
    }
    s.resize(std::min<size_t>(s.size(), got / sizeof(wchar_t)));
    if (auto z = s.find(L'\0'); z != std::wstring::npos) s.resize(z);
    return win32::strip_verbatim_prefix(win32::narrow(s));
  }
  std::string s(MAX_PATH * 2, '\0');
  if (!::ReadProcessMemory(process, remote, s.data(), s.size(), &got) && got == 0) return "";
  s.resize(std::min<size_t>(s.size(), got));
  if (auto z = s.find('\0'); z != std::string::npos) s.resize(z);
  return s;
}

// One traced process: its handle (owned by the debug API) and which module
// entry each loaded base address belongs to.
struct Traced {
  HANDLE process = nullptr;
  bool initial_breakpoint_seen = false;
  bool exited = false;
  std::map<void*, size_t> by_base;
};

}  // namespace

bool native_process_modules() {
  return true;
}

Result<ProcessModules> process_modules(int pid) {
  if (pid <= 0) return fail("process " + std::to_string(pid) + ": not a process id");
  auto p = snapshot_modules(static_cast<DWORD>(pid));
  if (!p) return fail("process " + std::to_string(pid) + ": " + p.error().message);
  return p;
}

Result<ModuleScan> all_process_modules() {
  Handle snap(::CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0));
  if (!snap.valid()) return fail("the process list: " + why(::GetLastError()));
  ModuleScan scan;
  PROCESSENTRY32W pe{};
  pe.dwSize = sizeof pe;
  for (BOOL ok = ::Process32FirstW(snap.get(), &pe); ok; ok = ::Process32NextW(snap.get(), &pe)) {
    if (pe.th32ProcessID == 0) continue;  // the idle process has no modules
    ++scan.scanned;
    const std::string image = win32::narrow(pe.szExeFile);
    auto p = snapshot_modules(pe.th32ProcessID);
    if (!p) {
      // A process that exited since the list was taken is not worth a line.
      if (p.error().message == "no such process") continue;
      scan.inaccessible.emplace_back(static_cast<int>(pe.th32ProcessID),
                                     image + ": " + p.error().message);
      continue;
    }
    if (p->image.empty()) p->image = image;
    scan.processes.push_back(std::move(*p));
  }
  return scan;
}

Result<TraceResult> run_and_trace_modules(const std::vector<std::string>& argv,
                                          std::chrono::milliseconds timeout) {
  if (argv.empty() || argv[0].empty()) return fail("cannot run a process: empty command line");
  const std::string& name = argv[0];
  std::wstring program = win32::widen(name);
  if (name.find_first_of("/\\") == std::string::npos) {
    // SearchPathW: the directory of dlenv.exe, the current one, System32, Windows, PATH.
    std::wstring found(32768, L'\0');
    const DWORD n = ::SearchPathW(nullptr, program.c_str(), L".exe",
                                  static_cast<DWORD>(found.size()), found.data(), nullptr);
    if (n == 0 || n >= found.size()) return fail("cannot run " + name + ": not found on PATH");
    found.resize(n);
    program = found;
  }
  std::wstring cmd;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (i > 0) cmd += L' ';
    win32::append_quoted(cmd, i == 0 ? program : win32::widen(argv[i]));
  }

  STARTUPINFOW si{};
  si.cb = sizeof si;
  si.dwFlags = STARTF_USESTDHANDLES;
  si.hStdInput = ::GetStdHandle(STD_INPUT_HANDLE);
  si.hStdOutput = ::GetStdHandle(STD_ERROR_HANDLE);  // keep our stdout for the report
  si.hStdError = ::GetStdHandle(STD_ERROR_HANDLE);
  PROCESS_INFORMATION pi{};
  const auto start = std::chrono::steady_clock::now();
  if (!::CreateProcessW(program.c_str(), cmd.data(), nullptr, nullptr, TRUE, DEBUG_PROCESS, nullptr,
                        nullptr, &si, &pi)) {
    return fail("cannot run " + name + ": " + why(::GetLastError()));
  }
  Handle root_process(pi.hProcess), root_thread(pi.hThread);
  const DWORD root_pid = pi.dwProcessId;

  TraceResult r;
  std::map<DWORD, Traced> traced;
  auto record = [&](DWORD pid, void* base, std::string path) {
    Traced& t = traced[pid];
    if (path.empty()) {
      ++r.unresolved;
      return;
    }
    for (size_t i = 0; i < r.modules.size(); ++i) {
      if (r.modules[i].pid == static_cast<int>(pid) && r.modules[i].path == path) {
        r.modules[i].loaded_at_exit = true;  // loaded again after an unload
        t.by_base[base] = i;
        return;
      }
    }
    t.by_base[base] = r.modules.size();
    r.modules.push_back({std::move(path), static_cast<int>(pid), true});
  };
  const auto deadline = start + timeout;
  bool killed = false;
  bool root_exited = false;
  // After the kill, at most this long for the exit events before giving up.
  std::chrono::steady_clock::time_point kill_deadline;
  // Until the command itself exits; processes it leaves running are let go then.
  while (!root_exited) {
    const auto now = std::chrono::steady_clock::now();
    if (!killed && now >= deadline) {
      killed = true;
      r.timed_out = true;
      for (auto& [pid, t] : traced) {
        if (!t.exited && t.process != nullptr) ::TerminateProcess(t.process, 1);
      }
      if (traced.empty()) ::TerminateProcess(root_process.get(), 1);
      kill_deadline = now + std::chrono::seconds(5);
    }
    if (killed && now >= kill_deadline) break;
    DEBUG_EVENT ev{};
    if (!::WaitForDebugEvent(&ev, 50)) continue;
    DWORD status = DBG_CONTINUE;
    switch (ev.dwDebugEventCode) {
      case CREATE_PROCESS_DEBUG_EVENT: {
        Traced& t = traced[ev.dwProcessId];
        t.process = ev.u.CreateProcessInfo.hProcess;
        ++r.processes;
        if (killed) ::TerminateProcess(t.process, 1);
        std::string path =
            event_image_path(t.process, ev.u.CreateProcessInfo.hFile,
                             ev.u.CreateProcessInfo.lpImageName, ev.u.CreateProcessInfo.fUnicode);
        if (ev.u.CreateProcessInfo.hFile) ::CloseHandle(ev.u.CreateProcessInfo.hFile);
        if (!path.empty()) record(ev.dwProcessId, ev.u.CreateProcessInfo.lpBaseOfImage, path);
        break;
      }
      case LOAD_DLL_DEBUG_EVENT: {
        ++r.load_events;
        std::string path = event_image_path(traced[ev.dwProcessId].process, ev.u.LoadDll.hFile,
                                            ev.u.LoadDll.lpImageName, ev.u.LoadDll.fUnicode);
        if (ev.u.LoadDll.hFile) ::CloseHandle(ev.u.LoadDll.hFile);
        record(ev.dwProcessId, ev.u.LoadDll.lpBaseOfDll, std::move(path));
        break;
      }
      case UNLOAD_DLL_DEBUG_EVENT: {
        Traced& t = traced[ev.dwProcessId];
        if (auto it = t.by_base.find(ev.u.UnloadDll.lpBaseOfDll); it != t.by_base.end()) {
          r.modules[it->second].loaded_at_exit = false;
          t.by_base.erase(it);
        }
        break;
      }
      case EXCEPTION_DEBUG_EVENT: {
        // The loader's breakpoint when a process starts is ours to swallow;
        // every other exception goes back to the program as if undebugged.
        Traced& t = traced[ev.dwProcessId];
        const DWORD code = ev.u.Exception.ExceptionRecord.ExceptionCode;
        const bool bp =
            code == EXCEPTION_BREAKPOINT || code == 0x4000001F;  // STATUS_WX86_BREAKPOINT
        if (bp && !t.initial_breakpoint_seen) {
          t.initial_breakpoint_seen = true;
        } else {
          status = DBG_EXCEPTION_NOT_HANDLED;
        }
        break;
      }
      case EXIT_PROCESS_DEBUG_EVENT: {
        Traced& t = traced[ev.dwProcessId];
        t.exited = true;
        if (ev.dwProcessId == root_pid) {
          root_exited = true;
          if (!killed) r.exit_code = static_cast<int>(ev.u.ExitProcess.dwExitCode);
        }
        break;
      }
      default: break;
    }
    ::ContinueDebugEvent(ev.dwProcessId, ev.dwThreadId, status);
  }
  // Detach from what is still running (processes the command left behind, or
  // ones that did not die at the kill) so they are neither held nor killed when
  // this thread stops debugging.
  for (auto& [pid, t] : traced) {
    if (!t.exited) ::DebugActiveProcessStop(pid);
  }
  r.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace dlenv
