// SystemInfo on Windows: the real version from RtlGetVersion (GetVersionEx answers
// what the manifest allows), the processor architecture, host and user name.
// Windows has no numeric uid/gid: they stay 0 and no groups are listed.
#include <windows.h>

#include <string>

#include "platform/system.h"
#include "platform/win32_text.h"

namespace dlenv {
namespace {

using RtlGetVersionFn = LONG(WINAPI*)(OSVERSIONINFOW*);

std::string windows_release() {
  HMODULE ntdll = ::GetModuleHandleW(L"ntdll.dll");
  if (ntdll == nullptr) return {};
  // GetProcAddress returns a generic function pointer; the cast through void* is the
  // documented way to reach RtlGetVersion's real signature.
  auto fn = reinterpret_cast<RtlGetVersionFn>(
      reinterpret_cast<void*>(::GetProcAddress(ntdll, "RtlGetVersion")));
  if (fn == nullptr) return {};
  OSVERSIONINFOW v{};
  v.dwOSVersionInfoSize = sizeof v;
  if (fn(&v) != 0) return {};
  return std::to_string(v.dwMajorVersion) + "." + std::to_string(v.dwMinorVersion) + "." +
         std::to_string(v.dwBuildNumber);
}

// Named like uname -m so reports read the same on both systems.
std::string machine_name() {
  SYSTEM_INFO si{};
  ::GetNativeSystemInfo(&si);
  switch (si.wProcessorArchitecture) {
    case PROCESSOR_ARCHITECTURE_AMD64: return "x86_64";
    case PROCESSOR_ARCHITECTURE_ARM64: return "aarch64";
    case PROCESSOR_ARCHITECTURE_INTEL: return "x86";
    default: return "unknown (" + std::to_string(si.wProcessorArchitecture) + ")";
  }
}

std::string host_name() {
  wchar_t buf[256];
  DWORD n = sizeof buf / sizeof buf[0];
  if (::GetComputerNameExW(ComputerNameDnsHostname, buf, &n)) {
    return win32::narrow(std::wstring_view(buf, n));
  }
  return {};
}

std::string user_name() {
  wchar_t buf[257];
  DWORD n = sizeof buf / sizeof buf[0];
  if (::GetUserNameW(buf, &n) && n > 0) return win32::narrow(std::wstring_view(buf, n - 1));
  return {};
}

}  // namespace

SystemInfo current_system() {
  SystemInfo info;
  info.sysname = "Windows";
  info.release = windows_release();
  info.machine = machine_name();
  info.hostname = host_name();
  info.user_name = user_name();
  return info;
}

std::string group_name(uint32_t gid) {
  return std::to_string(gid);
}

std::string current_executable() {
  std::wstring buf(32768, L'\0');
  const DWORD n = ::GetModuleFileNameW(nullptr, buf.data(), static_cast<DWORD>(buf.size()));
  buf.resize(n);
  return win32::narrow(buf);
}

bool limit_own_memory(uint64_t address_space_bytes, uint64_t data_bytes) {
  // Windows reserves address space lazily and has no RLIMIT_AS: the committed-memory cap
  // of a job object (nested inside run_process's kill-on-close job) is the data limit.
  (void)address_space_bytes;
  HANDLE job = ::CreateJobObjectW(nullptr, nullptr);
  if (job == nullptr) return false;
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
  limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_PROCESS_MEMORY;
  limits.ProcessMemoryLimit = static_cast<SIZE_T>(data_bytes);
  const bool ok =
      ::SetInformationJobObject(job, JobObjectExtendedLimitInformation, &limits, sizeof limits) &&
      ::AssignProcessToJobObject(job, ::GetCurrentProcess());
  // The job lives as long as a process is in it: the handle is not needed any more.
  ::CloseHandle(job);
  return ok;
}

void let_crashes_end_this_process() {}

}  // namespace dlenv
