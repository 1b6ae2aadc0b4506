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

}  // namespace dlenv
