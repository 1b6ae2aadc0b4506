// --redact: hostname, user, home and GPU UUIDs replaced by stable placeholders.
#include <algorithm>
#include <cctype>
#include <regex>

#include "report/report.h"

namespace dlenv {
namespace {

bool name_char(char ch) {
  return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '-' || ch == '_';
}

// Appends `placeholder` for the `value_size` bytes that ended at text[end]; returns where
// the copy of `text` goes on. With `keep_columns` (text laid out in columns), the run of
// spaces after the rest of that word grows or shrinks by the difference (one space kept),
// so that the next column stays where it was.
size_t put(std::string& out, std::string_view text, size_t end, size_t value_size,
           std::string_view placeholder, bool keep_columns) {
  out.append(placeholder);
  if (!keep_columns || placeholder.size() == value_size) return end;
  size_t gap = text.find_first_of(" \n", end);
  if (gap == std::string_view::npos || text[gap] != ' ') return end;
  out.append(text.substr(end, gap - end));
  if (placeholder.size() < value_size) {
    out.append(value_size - placeholder.size(), ' ');
    return gap;
  }
  size_t spaces = text.find_first_not_of(' ', gap);
  spaces = (spaces == std::string_view::npos ? text.size() : spaces) - gap;
  return gap + std::min(placeholder.size() - value_size, spaces - 1);
}

// Replaces each occurrence of `value` that `stands_alone(text, begin, end)` accepts.
template <class Accept>
std::string replace_where(std::string_view text, std::string_view value,
                          std::string_view placeholder, bool keep_columns, Accept stands_alone) {
  if (value.empty()) return std::string(text);
  std::string out;
  size_t pos = 0;
  for (size_t hit; (hit = text.find(value, pos)) != std::string_view::npos;) {
    size_t end = hit + value.size();
    out.append(text.substr(pos, hit - pos));
    if (stands_alone(text, hit, end)) {
      pos = put(out, text, end, value.size(), placeholder, keep_columns);
    } else {
      out.append(value);
      pos = end;
    }
  }
  out.append(text.substr(pos));
  return out;
}

bool separator(char ch) {
  return ch == '/' || ch == '\\';
}

// A name: the characters around it are not part of a name.
std::string replace_name(std::string_view text, std::string_view value,
                         std::string_view placeholder, bool keep_columns) {
  return replace_where(
      text, value, placeholder, keep_columns, [](std::string_view t, size_t b, size_t e) {
        return (b == 0 || !name_char(t[b - 1])) && (e == t.size() || !name_char(t[e]));
      });
}

// A path component: after a path separator, and no name character follows.
std::string replace_component(std::string_view text, std::string_view value,
                              std::string_view placeholder, bool keep_columns) {
  return replace_where(text, value, placeholder, keep_columns,
                       [](std::string_view t, size_t b, size_t e) {
                         return b > 0 && separator(t[b - 1]) && (e == t.size() || !name_char(t[e]));
                       });
}

// The home directory: a path prefix, so only where a separator, the end or a character
// that is not part of a file name follows.
std::string replace_home(std::string_view text, std::string_view home, bool keep_columns) {
  if (home.size() < 2) return std::string(text);
  return replace_where(text, home, "~", keep_columns, [](std::string_view t, size_t, size_t e) {
    return e == t.size() || separator(t[e]) || !(name_char(t[e]) || t[e] == '.');
  });
}

const std::regex& uuid_pattern() {
  static const std::regex re(
      "(GPU|MIG)-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");
  return re;
}

}  // namespace

Redactor::Redactor(const Facts& facts, std::string user, std::string home)
    : user_(std::move(user)), home_(std::move(home)) {
  if (facts.host.hostname.ok()) host_ = *facts.host.hostname;
  // "root" is no one in particular, and `--root` is in every other line.
  if (user_ == "root") user_.clear();
  while (home_.size() > 1 && (home_.back() == '/' || home_.back() == '\\')) home_.pop_back();
  for (const GpuFacts& g : facts.gpus) {
    if (g.uuid.ok()) (void)(*this)(*g.uuid);  // numbers the facts' GPUs first, in order
  }
}

std::string Redactor::operator()(std::string_view text) {
  return redact(text, false);
}

std::string Redactor::columns(std::string_view text) {
  return redact(text, true);
}

std::string Redactor::redact(std::string_view text, bool keep_columns) {
  std::string out = replace_home(text, home_, keep_columns);
  out = replace_component(out, user_, "<user>", keep_columns);
  out = replace_name(out, host_, "<host>", keep_columns);
  std::string result;
  auto begin = std::sregex_iterator(out.begin(), out.end(), uuid_pattern());
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const std::string uuid = it->str();
    std::string placeholder;
    for (const auto& [value, p] : uuids_) {
      if (value == uuid) placeholder = p;
    }
    if (placeholder.empty()) {
      placeholder = (*it)[1].str() + "-<uuid-" + std::to_string(uuids_.size() + 1) + ">";
      uuids_.emplace_back(uuid, placeholder);
    }
    result.append(out, last, static_cast<size_t>(it->position()) - last);
    last = put(result, out, static_cast<size_t>(it->position() + it->length()), uuid.size(),
               placeholder, keep_columns);
  }
  result.append(out, last);
  return result;
}

std::string Redactor::notice() {
  return "Redacted: hostname, user, home, GPU UUIDs — pass --no-redact to keep them";
}

}  // namespace dlenv
