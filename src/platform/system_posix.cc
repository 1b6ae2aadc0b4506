#include <grp.h>
#include <pwd.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "platform/system.h"

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

}  // namespace dlenv
