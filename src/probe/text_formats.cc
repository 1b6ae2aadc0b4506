#include "probe/text_formats.h"

#include "util/strings.h"

namespace dlenv {

std::optional<Version> cudnn_header_version(std::string_view text) {
  // A plain scan (std::regex compilation costs more than the whole rest of the probe).
  auto macro = [&](std::string_view name) -> std::optional<long long> {
    size_t pos = 0;
    while ((pos = text.find(name, pos)) != std::string_view::npos) {
      size_t line_start = text.rfind('\n', pos);
      line_start = line_start == std::string_view::npos ? 0 : line_start + 1;
      std::string_view head = trim(text.substr(line_start, pos - line_start));
      size_t end = pos + name.size();
      pos = end;
      if (head != "#define" && head != "# define") continue;
      if (end >= text.size() || (text[end] != ' ' && text[end] != '\t')) continue;
      size_t eol = text.find('\n', end);
      auto value =
          parse_int(trim(text.substr(end, eol == std::string_view::npos ? eol : eol - end)));
      if (value) return value;
    }
    return std::nullopt;
  };
  auto major = macro("CUDNN_MAJOR"), minor = macro("CUDNN_MINOR"),
       patch = macro("CUDNN_PATCHLEVEL");
  if (!major || !minor) return std::nullopt;
  return Version{static_cast<int>(*major), static_cast<int>(*minor),
                 static_cast<int>(patch.value_or(0))};
}

std::optional<std::string> version_json_component(std::string_view text, std::string_view key) {
  // Find "key", then the first "version": "..." after it, inside the same object.
  const std::string quoted = "\"" + std::string(key) + "\"";
  size_t k = text.find(quoted);
  if (k == std::string_view::npos) return std::nullopt;
  size_t close = text.find('}', k);
  size_t v = text.find("\"version\"", k);
  if (v == std::string_view::npos || (close != std::string_view::npos && v > close)) {
    return std::nullopt;
  }
  size_t colon = text.find(':', v);
  if (colon == std::string_view::npos) return std::nullopt;
  size_t q1 = text.find('"', colon + 1);
  if (q1 == std::string_view::npos) return std::nullopt;
  size_t q2 = text.find('"', q1 + 1);
  if (q2 == std::string_view::npos) return std::nullopt;
  return std::string(text.substr(q1 + 1, q2 - q1 - 1));
}

DistMetadata parse_dist_metadata(std::string_view text) {
  DistMetadata m;
  for (const auto& line : split_lines(text)) {
    if (trim(line).empty()) break;  // the end of the headers
    std::string_view l = line;
    if (l.starts_with("Name: ")) m.name = std::string(trim(l.substr(6)));
    if (l.starts_with("Version: ")) m.version = std::string(trim(l.substr(9)));
    if (l.starts_with("Requires-Dist: ")) m.requires_dist.emplace_back(trim(l.substr(15)));
  }
  return m;
}

}  // namespace dlenv
