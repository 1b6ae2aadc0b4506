// Facts about the running system that only the OS can answer (uname, user ids).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dlenv {

struct SystemInfo {
  std::string sysname;  // "Linux"
  std::string release;  // kernel release
  std::string machine;  // "x86_64"
  std::string hostname;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> groups;  // supplementary groups
  std::string user_name;
};

SystemInfo current_system();
// Name of a group id ("video"), or the number as text when unknown.
std::string group_name(uint32_t gid);

// The file this process runs ("/proc/self/exe" on Linux, which also names a binary replaced
// or deleted since it started; GetModuleFileNameW on Windows): for starting itself again.
std::string current_executable();

// Caps this process's memory, for a child that is about to run foreign code: the address
// space (RLIMIT_AS) and the heap and other private data (RLIMIT_DATA) on POSIX; committed
// memory (a job object's process limit) on Windows. An allocation past the cap fails
// instead of exhausting the machine. False when the OS refused, and in a sanitizer build
// (ASan reserves terabytes of address space for its shadow memory: no cap fits it).
bool limit_own_memory(uint64_t address_space_bytes, uint64_t data_bytes);

// For the same child: SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT back to their default
// action, so that a crash in foreign code ends the process with that signal for the parent
// to name (a sanitizer runtime's handler would turn it into "exit status 1"). No-op on
// Windows, where a crash is an exception code either way.
void let_crashes_end_this_process();

}  // namespace dlenv
