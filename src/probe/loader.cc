// The Linux dynamic loader's configuration, read from files: /etc/ld.so.cache
// (parsed directly, never via `ldconfig -p`), /etc/ld.so.conf and its includes.
#include <algorithm>

#include "probe/probe.h"
#include "util/strings.h"

namespace dlenv {
namespace {

// Expands a glob with '*' only in the last component ("/etc/ld.so.conf.d/*.conf").
std::vector<std::string> expand_glob(const FileSystem& fs, const std::string& pattern) {
  std::string dir = path_dirname(pattern);
  std::string base = path_basename(pattern);
  size_t star = base.find('*');
  if (star == std::string::npos) return {pattern};
  std::string pre = base.substr(0, star), post = base.substr(star + 1);
  std::vector<std::string> out;
  auto entries = fs.list_dir(dir);
  if (!entries) return out;
  for (const auto& e : *entries) {
    if (e.name.size() >= pre.size() + post.size() && starts_with(e.name, pre) &&
        ends_with(e.name, post)) {
      out.push_back(path_join(dir, e.name));
    }
  }
  return out;
}

void read_conf(const FileSystem& fs, const std::string& path, int depth,
               std::vector<std::string>& dirs) {
  if (depth > 8) return;
  auto text = fs.read_file(path);
  if (!text) return;
  for (const auto& raw : split_lines(*text)) {
    std::string_view line = raw;
    if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    if (starts_with(line, "include ") || starts_with(line, "include\t")) {
      std::string pat(trim(line.substr(8)));
      if (!pat.empty() && pat[0] != '/') pat = path_join(path_dirname(path), pat);
      for (const auto& f : expand_glob(fs, pat)) read_conf(fs, f, depth + 1, dirs);
      continue;
    }
    if (starts_with(line, "hwcap ")) continue;
    // "dir=TYPE" is an old syntax; keep the directory.
    std::string dir(line.substr(0, line.find('=')));
    dir = std::string(trim(dir));
    if (!dir.empty() && std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
  }
}

}  // namespace

LinuxLoaderSettings linux_loader_settings(const LoaderConfig& loader) {
  LinuxLoaderSettings ls;
  ls.ld_library_path = loader.ld_library_path;
  ls.cache = loader.cache;
  ls.conf_dirs = loader.conf_dirs;
  ls.companions = false;
  ls.symbols = false;
  return ls;
}

LoaderConfig read_loader_config(const ProbeContext& ctx) {
  LoaderConfig lc;
  read_conf(ctx.fs, "/etc/ld.so.conf", 0, lc.conf_dirs);
  if (auto p = ctx.env.get("LD_LIBRARY_PATH")) lc.ld_library_path = split_path_list(*p, ':');
  const char* cache_path = "/etc/ld.so.cache";
  auto mapped = ctx.fs.map_file(cache_path);
  if (!mapped) {
    lc.cache_status = Fact<std::string>::unknown(
        ctx.fs.exists(cache_path) ? FactStatus::error : FactStatus::not_found,
        mapped.error().message, cache_path);
    return lc;
  }
  auto parsed = parse_ld_cache((*mapped)->bytes());
  if (!parsed) {
    lc.cache_status =
        Fact<std::string>::unknown(FactStatus::error, parsed.error().message, cache_path);
  } else if (!*parsed) {
    lc.cache_status = Fact<std::string>::unknown(
        FactStatus::error, "not an ld.so.cache file (unknown magic)", cache_path);
  } else {
    lc.cache = std::move(**parsed);
    lc.cache_status = Fact<std::string>::known(
        std::to_string(lc.cache->entries.size()) + " entries (" + lc.cache->format + " format)",
        cache_path);
  }
  return lc;
}

}  // namespace dlenv
