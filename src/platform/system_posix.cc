#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "platform/system.h"
#include "util/sanitizer_build.h"

namespace dlenv {

SystemInfo current_system() {
  SystemInfo info;
  struct utsname u {};
  if (uname(&u) == 0) {
    info.sysname = u.sysname;
    info.release = u.release;
    info.machine = u.machine;
    info.hostname = u.nodename;
  }
  info.uid = static_cast<uint32_t>(getuid());
  info.gid = static_cast<uint32_t>(getgid());
  int n = getgroups(0, nullptr);
  if (n > 0) {
    std::vector<gid_t> gs(static_cast<size_t>(n));
    n = getgroups(n, gs.data());
    for (int i = 0; i < n; ++i)
      info.groups.push_back(static_cast<uint32_t>(gs[static_cast<size_t>(i)]));
  }
  if (const struct passwd* pw = getpwuid(getuid())) info.user_name = pw->pw_name;
  return info;
}

std::string group_name(uint32_t gid) {
  if (const struct group* g = getgrgid(static_cast<gid_t>(gid))) return g->gr_name;
  return std::to_string(gid);
}

std::string current_executable() {
#ifdef __linux__
  return "/proc/self/exe";
#else
  char buf[4096];
  ssize_t n = ::readlink("/proc/curproc/file", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("dlenv");
#endif
}

bool limit_own_memory(uint64_t address_space_bytes, uint64_t data_bytes) {
  if (kSanitizerBuild) return false;
  auto lower = [](int resource, uint64_t bytes) {
    struct rlimit r {};
    if (::getrlimit(resource, &r) != 0) return false;
    const rlim_t want = static_cast<rlim_t>(bytes);
    if (r.rlim_cur != RLIM_INFINITY && r.rlim_cur <= want) return true;  // already lower
    r.rlim_cur = want;
    if (r.rlim_max != RLIM_INFINITY && r.rlim_max < want) r.rlim_cur = r.rlim_max;
    return ::setrlimit(resource, &r) == 0;
  };
  const bool as = lower(RLIMIT_AS, address_space_bytes);
  const bool data = lower(RLIMIT_DATA, data_bytes);
  return as && data;
}

void let_crashes_end_this_process() {
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
    struct sigaction sa {};
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace dlenv
