// Windows path conventions for the probes: drive C: is the root under --root, names
// match case-insensitively, environment names too.
#include <algorithm>
#include <cctype>

#include "binfmt/pe.h"
#include "probe/windows_probes.h"
#include "util/strings.h"

namespace dlenv {

std::string win_logical(const ProbeContext& ctx, std::string_view windows_path) {
  std::string p(trim(windows_path));
  if (p.size() >= 2 && p.front() == '"' && p.back() == '"') p = p.substr(1, p.size() - 2);
  std::replace(p.begin(), p.end(), '\\', '/');
  if (p.empty()) return p;
  bool drive = p.size() >= 2 && p[1] == ':' && std::isalpha(static_cast<unsigned char>(p[0]));
  if (drive) {
    char letter = static_cast<char>(std::toupper(static_cast<unsigned char>(p[0])));
    std::string rest = p.substr(2);
    if (rest.empty() || rest.front() != '/') rest = "/" + rest;
    if (ctx.fs.is_rooted()) {
      if (letter != 'C') return "";  // only drive C: is inside the root
      return path_normalize(rest);
    }
    return std::string(1, letter) + ":" + path_normalize(rest);
  }
  if (starts_with(p, "//")) return ctx.fs.is_rooted() ? "" : p;  // a network share
  return path_normalize(p);
}

std::optional<std::string> win_child(const FileSystem& fs, const std::string& dir,
                                     std::string_view name) {
  // The spelling on disk, from the directory listing: on a case-insensitive file system
  // (Windows, Wine) exists() also answers yes for "NVCUDA.DLL" when the file is nvcuda.dll,
  // so the listing decides, an exact match first.
  if (auto entries = fs.list_dir(dir)) {
    std::optional<std::string> folded;
    const std::string want = to_lower(name);
    for (const auto& e : *entries) {
      if (e.name == name) return path_join(dir, e.name);
      if (!folded && to_lower(e.name) == want) folded = path_join(dir, e.name);
    }
    if (folded) return folded;
  }
  // A directory that cannot be listed (no permission to list, but to open): as given.
  std::string direct = path_join(dir, name);
  if (fs.exists(direct)) return direct;
  return std::nullopt;
}

std::optional<std::string> win_find(const FileSystem& fs, const std::string& logical) {
  if (logical.empty()) return std::nullopt;
  // A path still in Windows spelling ("C:\\Python310", as some probes pass a prefix): the
  // file system reads it as it is; the walk below splits at '/' only.
  if (logical.find('\\') != std::string::npos) {
    return fs.exists(logical) ? std::optional<std::string>(logical) : std::nullopt;
  }
  // Walk from the root (or the drive), matching each component case-insensitively and
  // keeping the spelling on disk (never the shortcut fs.exists(logical): on Windows it is
  // true for any spelling, which would hand back the one asked for).
  std::string cur;
  std::string_view rest = logical;
  if (rest.size() >= 2 && rest[1] == ':') {
    cur = std::string(rest.substr(0, 2)) + "/";
    rest.remove_prefix(2);
  } else if (!rest.empty() && rest.front() == '/') {
    cur = "/";
  } else {
    return fs.exists(logical) ? std::optional<std::string>(logical) : std::nullopt;
  }
  for (const auto& part : split(rest, '/')) {
    if (part.empty()) continue;
    auto next = win_child(fs, cur, part);
    if (!next) return fs.exists(logical) ? std::optional<std::string>(logical) : std::nullopt;
    cur = *next;
  }
  return cur;
}

std::optional<std::string> win_env(const ProbeContext& ctx, std::string_view name) {
  if (auto v = ctx.env.get(name)) return v;
  std::string want = to_lower(name);
  for (const auto& [k, v] : ctx.env.all()) {
    if (to_lower(k) == want) return v;
  }
  return std::nullopt;
}

std::string win_expand(const ProbeContext& ctx, std::string_view text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t a = text.find('%', i);
    if (a == std::string_view::npos) break;
    size_t b = text.find('%', a + 1);
    if (b == std::string_view::npos) break;
    out += text.substr(i, a - i);
    std::string_view name = text.substr(a + 1, b - a - 1);
    std::optional<std::string> v;
    if (!name.empty() && name.find(';') == std::string_view::npos) v = win_env(ctx, name);
    if (v) {
      out += *v;
      i = b + 1;
    } else {
      out += text.substr(a, b - a);  // keep "%NAME" and look again from the second '%'
      i = b;
    }
  }
  out += text.substr(i);
  return out;
}

std::vector<std::string> win_path_entries(std::string_view path_value) {
  std::vector<std::string> out;
  for (const auto& part : split(path_value, ';')) {
    std::string p(trim(part));
    if (p.size() >= 2 && p.front() == '"' && p.back() == '"') p = p.substr(1, p.size() - 2);
    if (!p.empty()) out.push_back(p);
  }
  return out;
}

std::string win_windows_dir(const ProbeContext& ctx) {
  std::string w = win_env(ctx, "SystemRoot").value_or(win_env(ctx, "windir").value_or(""));
  if (w.empty()) w = "C:\\Windows";
  std::string logical = win_logical(ctx, w);
  return win_find(ctx.fs, logical).value_or(logical);
}

std::string win_system32(const ProbeContext& ctx) {
  std::string dir = win_windows_dir(ctx);
  return win_child(ctx.fs, dir, "System32").value_or(path_join(dir, "System32"));
}

std::string win_program_files(const ProbeContext& ctx) {
  std::string p = win_env(ctx, "ProgramW6432").value_or(win_env(ctx, "ProgramFiles").value_or(""));
  if (p.empty()) p = "C:\\Program Files";
  std::string logical = win_logical(ctx, p);
  return win_find(ctx.fs, logical).value_or(logical);
}

WinFile win_read_file(const FileSystem& fs, const std::string& path, std::string found_via) {
  WinFile f;
  f.name = to_lower(path_basename(path));
  f.path = path;
  f.found_via = std::move(found_via);
  auto mapped = fs.map_file(path);
  if (!mapped) {
    f.version = Fact<std::string>::unknown(FactStatus::error, mapped.error().message, path);
    return f;
  }
  auto pe = parse_pe((*mapped)->bytes(), path);
  if (!pe) {
    f.version = Fact<std::string>::unknown(FactStatus::error, pe.error().message, path);
    return f;
  }
  if (!*pe) {
    f.version = Fact<std::string>::unknown(FactStatus::error, "not a PE file", path);
    return f;
  }
  const PeInfo& info = **pe;
  f.machine = pe_machine_name(info.machine);
  for (const auto& imp : info.imports) f.imports.push_back(to_lower(imp.dll));
  for (const auto& imp : info.delay_imports) f.imports.push_back(to_lower(imp.dll));
  if (info.file_version) {
    f.version = Fact<std::string>::known(*info.file_version, path + " (version resource)");
  } else {
    f.version = Fact<std::string>::unknown(FactStatus::not_found, "no version resource", path);
  }
  return f;
}

std::optional<std::string> nvidia_driver_from_file_version(std::string_view file_version) {
  auto parts = split(file_version, '.');
  if (parts.size() != 4) return std::nullopt;
  auto third = parse_int(parts[2]);
  auto fourth = parse_int(parts[3]);
  if (!third || !fourth || *third < 0 || *fourth < 0 || *fourth > 9999) return std::nullopt;
  std::string f4 = std::to_string(*fourth);
  std::string digits = std::to_string(*third) + std::string(4 - f4.size(), '0') + f4;
  if (digits.size() < 5) return std::nullopt;
  digits = digits.substr(digits.size() - 5);
  return digits.substr(0, 3) + "." + digits.substr(3);
}

}  // namespace dlenv
