#include "util/strings.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>

namespace dlenv {

std::string_view trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::vector<std::string> split(std::string_view s, char sep, bool keep_empty) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) pos = s.size();
    std::string_view piece = s.substr(start, pos - start);
    if (keep_empty || !piece.empty()) out.emplace_back(piece);
    start = pos + 1;
  }
  return out;
}

std::vector<std::string> split_lines(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < s.size()) {
    size_t pos = s.find('\n', start);
    if (pos == std::string_view::npos) pos = s.size();
    std::string_view line = s.substr(start, pos - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.emplace_back(line);
    start = pos + 1;
  }
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.starts_with(prefix);
}
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.ends_with(suffix);
}
bool contains(std::string_view s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::optional<long long> parse_int(std::string_view s) {
  s = trim(s);
  long long v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string path_join(std::string_view a, std::string_view b) {
  if (a.empty()) return std::string(b);
  if (b.empty()) return std::string(a);
  std::string out(a);
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  while (!b.empty() && b.front() == '/') b.remove_prefix(1);
  if (out != "/") out += '/';
  out += b;
  return out;
}

std::string path_dirname(std::string_view p) {
  while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
  size_t pos = p.rfind('/');
  if (pos == std::string_view::npos) return ".";
  if (pos == 0) return "/";
  return std::string(p.substr(0, pos));
}

std::string_view file_name_of(std::string_view p) {
  const size_t sep = p.find_last_of("/\\");
  return sep == std::string_view::npos ? p : p.substr(sep + 1);
}

std::string path_basename(std::string_view p) {
  while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
  size_t pos = p.rfind('/');
  return std::string(pos == std::string_view::npos ? p : p.substr(pos + 1));
}

std::string path_normalize(std::string_view p) {
  bool absolute = !p.empty() && p.front() == '/';
  std::vector<std::string> out;
  for (auto& part : split(p, '/')) {
    if (part == ".") continue;
    if (part == "..") {
      if (!out.empty() && out.back() != "..") {
        out.pop_back();
      } else if (!absolute) {
        out.push_back(part);
      }
      continue;
    }
    out.push_back(part);
  }
  std::string joined = join(out, "/");
  if (absolute) return "/" + joined;
  return joined.empty() ? "." : joined;
}

std::optional<unsigned long long> parse_byte_size(std::string_view text) {
  size_t i = 0;
  unsigned long long v = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    const unsigned long long d = static_cast<unsigned long long>(text[i] - '0');
    if (v > (~0ull - d) / 10) return std::nullopt;
    v = v * 10 + d;
    ++i;
  }
  if (i == 0) return std::nullopt;
  std::string unit = to_lower(text.substr(i));
  if (unit.size() > 1 && (unit.ends_with("ib") || unit.ends_with("b"))) {
    unit.resize(unit.size() - (unit.ends_with("ib") ? 2 : 1));
  }
  int shift = 0;
  if (unit == "k") {
    shift = 10;
  } else if (unit == "m") {
    shift = 20;
  } else if (unit == "g") {
    shift = 30;
  } else if (unit == "t") {
    shift = 40;
  } else if (!unit.empty() && unit != "b") {
    return std::nullopt;
  }
  if (shift > 0 && v > (~0ull >> shift)) return std::nullopt;
  return v << shift;
}

std::string human_bytes(unsigned long long bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  if (u == 0) {
    std::snprintf(buf, sizeof buf, "%llu B", bytes);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  }
  return buf;
}

}  // namespace dlenv
