#include "probe/os_path.h"

#include <algorithm>
#include <cctype>

#include "util/strings.h"

namespace dlenv {

bool is_drive_path(std::string_view p) {
  return p.size() >= 3 && std::isalpha(static_cast<unsigned char>(p[0])) && p[1] == ':' &&
         (p[2] == '\\' || p[2] == '/');
}

std::string path_join_os(std::string_view a, std::string_view b, bool windows) {
  if (!windows || !is_drive_path(a)) return path_join(a, b);
  std::string out(a);
  std::replace(out.begin(), out.end(), '/', '\\');
  std::string rest(b);
  std::replace(rest.begin(), rest.end(), '/', '\\');
  while (out.size() > 3 && out.back() == '\\') out.pop_back();
  const size_t skip = rest.find_first_not_of('\\');
  if (skip == std::string::npos) return out;
  if (out.back() != '\\') out += '\\';
  return out + rest.substr(skip);
}

std::string path_dirname_os(std::string_view p) {
  if (!is_drive_path(p)) return path_dirname(p);
  while (p.size() > 3 && (p.back() == '/' || p.back() == '\\')) p.remove_suffix(1);
  const size_t pos = p.find_last_of("/\\");
  return std::string(p.substr(0, pos == 2 ? 3 : pos));  // "C:\" keeps its separator
}

std::string path_basename_os(std::string_view p) {
  if (!is_drive_path(p)) return path_basename(p);
  while (p.size() > 3 && (p.back() == '/' || p.back() == '\\')) p.remove_suffix(1);
  if (p.size() == 3) return "";
  return std::string(p.substr(p.find_last_of("/\\") + 1));
}

}  // namespace dlenv
