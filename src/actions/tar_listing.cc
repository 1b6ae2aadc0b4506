// The `tar -tvf` listing parser (GNU tar and bsdtar, the latter also Windows' tar.exe):
// a file of its own, with only util beneath it, so that its libFuzzer target
// (tar_listing_fuzz.cc) builds without the rest of the actions layer.
#include <fmt/format.h>

#include <algorithm>

#include "actions/cudnn_source.h"
#include "util/strings.h"

namespace dlenv {
namespace {

std::vector<std::string_view> fields(std::string_view line, size_t count, size_t* rest) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (out.size() < count) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i >= line.size()) break;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    out.push_back(line.substr(i, j - i));
    i = j;
  }
  // The name is the rest of the line (blanks inside it are kept; leading ones are not).
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  *rest = i;
  return out;
}

SourceEntryType type_of(char c) {
  switch (c) {
    case '-': return SourceEntryType::file;
    case 'd': return SourceEntryType::directory;
    case 'l': return SourceEntryType::symlink;
    case 'h': return SourceEntryType::hardlink;
    case 'c':
    case 'b': return SourceEntryType::device;
    case 'p': return SourceEntryType::fifo;
    case 's': return SourceEntryType::socket;
    default: return SourceEntryType::other;
  }
}

uint32_t mode_bits(std::string_view m) {
  // "rwxr-xr-x" (9 characters after the type), with s/S/t/T for the special bits.
  uint32_t mode = 0;
  if (m.size() < 10) return 0644;
  static constexpr uint32_t bits[9] = {0400, 0200, 0100, 040, 020, 010, 04, 02, 01};
  for (size_t i = 0; i < 9; ++i) {
    char c = m[1 + i];
    if (c != '-' && c != 'S' && c != 'T') mode |= bits[i];
  }
  if (m[3] == 's' || m[3] == 'S') mode |= 04000;
  if (m[6] == 's' || m[6] == 'S') mode |= 02000;
  if (m[9] == 't' || m[9] == 'T') mode |= 01000;
  return mode;
}

}  // namespace

Result<std::vector<SourceEntry>> parse_tar_listing(std::string_view text, TarFlavor flavor) {
  // GNU:  -rw-r--r-- user/group   1234 2024-01-01 12:00 top/name
  // bsd:  -rw-r--r--  0 user   group   1234 Jan  1 12:00 top/name
  // then "NAME -> TARGET" (symlink) or "NAME link to TARGET" (hardlink).
  const size_t before_name = flavor == TarFlavor::gnu ? 5 : 8;
  const size_t size_field = flavor == TarFlavor::gnu ? 2 : 4;
  std::vector<SourceEntry> out;
  size_t line_no = 0;
  for (auto line_sv : split(std::string(text), '\n')) {
    std::string_view line = line_sv;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // Windows tar.exe
    if (line.empty()) continue;
    size_t rest = 0;
    auto f = fields(line, before_name, &rest);
    auto bad = [&](const std::string& why) {
      return fail(fmt::format("tar listing line {} (\"{}\"): {}", line_no, line, why));
    };
    if (f.size() < before_name || rest >= line.size()) return bad("too few fields");
    if (f[0].size() < 10) return bad("no file mode in the first field");
    SourceEntry e;
    e.type = type_of(f[0][0]);
    e.mode = mode_bits(f[0]);
    std::string name(line.substr(rest));
    if (e.type == SourceEntryType::symlink) {
      size_t arrow = name.find(" -> ");
      if (arrow == std::string::npos) return bad("a link without \" -> TARGET\"");
      e.link_target = name.substr(arrow + 4);
      name.resize(arrow);
    } else if (e.type == SourceEntryType::hardlink) {
      size_t to = name.find(" link to ");
      if (to == std::string::npos) return bad("a hard link without \" link to TARGET\"");
      e.link_target = name.substr(to + 9);
      name.resize(to);
    }
    if (e.type == SourceEntryType::file) {
      std::string_view s = f[size_field];
      uint64_t v = 0;
      if (s.empty() || s.size() > 19 ||
          !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return bad("the size field is not a number");
      }
      for (char c : s) v = v * 10 + static_cast<uint64_t>(c - '0');
      e.size = v;
    }
    while (name.size() > 1 && name.back() == '/') name.pop_back();
    e.raw_path = e.path = name;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace dlenv
