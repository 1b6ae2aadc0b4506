#include "util/safe_text.h"

namespace dlenv {

size_t utf8_sequence_length(std::string_view s, size_t i) {
  auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = at(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // UTF-16 surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (at(i + k) < 0x80 || at(i + k) > 0xBF) return 0;
  }
  return n;
}

namespace {

// `prefix` then `value` as `digits` lowercase hex digits ("\\u", 0x1b, 4 -> \u001b).
void append_hex(std::string& out, std::string_view prefix, unsigned value, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += prefix;
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) out += kHex[(value >> shift) & 0xF];
}

// A C1 control (U+0080-U+009F) is the two bytes C2 80..C2 9F.
bool is_c1(std::string_view s, size_t i, size_t n) {
  return n == 2 && static_cast<unsigned char>(s[i]) == 0xC2 &&
         static_cast<unsigned char>(s[i + 1]) < 0xA0;
}

void write_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
          if (c < 0x20 || c == 0x7f) {
            append_hex(out, "\\u", c, 4);
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      append_hex(out, "\\udc", c, 2);
      ++i;
    } else if (is_c1(s, i, n)) {
      append_hex(out, "\\u", static_cast<unsigned char>(s[i + 1]), 4);
      i += n;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  out += '"';
}

void newline(std::string& out, int indent, int level) {
  if (indent < 0) return;
  out += '\n';
  out.append(static_cast<size_t>(indent) * static_cast<size_t>(level), ' ');
}

template <class Json>
void write_json(std::string& out, const Json& j, int indent, int level) {
  if (j.is_string()) {
    write_json_string(out, j.template get_ref<const std::string&>());
  } else if (j.is_object()) {
    if (j.empty()) {
      out += "{}";
      return;
    }
    out += '{';
    bool first = true;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!first) out += ',';
      first = false;
      newline(out, indent, level + 1);
      write_json_string(out, it.key());
      out += indent < 0 ? ":" : ": ";
      write_json(out, it.value(), indent, level + 1);
    }
    newline(out, indent, level);
    out += '}';
  } else if (j.is_array()) {
    if (j.empty()) {
      out += "[]";
      return;
    }
    out += '[';
    bool first = true;
    for (const auto& v : j) {
      if (!first) out += ',';
      first = false;
      newline(out, indent, level + 1);
      write_json(out, v, indent, level + 1);
    }
    newline(out, indent, level);
    out += ']';
  } else {
    out += j.dump();  // numbers, booleans, null: nlohmann's own formatting
  }
}

}  // namespace

std::string json_text(const nlohmann::json& j, int indent) {
  std::string out;
  write_json(out, j, indent, 0);
  return out;
}

std::string json_text(const nlohmann::ordered_json& j, int indent) {
  std::string out;
  write_json(out, j, indent, 0);
  return out;
}

std::string visible_text(std::string_view s, bool keep_newlines) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c >= 0x20 && c != 0x7f) {
        out += static_cast<char>(c);
      } else if (keep_newlines && (c == '\n' || c == '\t')) {
        out += static_cast<char>(c);
      } else {
        switch (c) {
          case '\t': out += "\\t"; break;
          case '\n': out += "\\n"; break;
          case '\r': out += "\\r"; break;
          case 0x1b: out += "\\e"; break;
          case '\a': out += "\\a"; break;
          case '\b': out += "\\b"; break;
          case '\f': out += "\\f"; break;
          case '\v': out += "\\v"; break;
          default: append_hex(out, "\\x", c, 2);
        }
      }
      ++i;
      continue;
    }
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      append_hex(out, "\\x", c, 2);
      ++i;
    } else if (is_c1(s, i, n)) {
      append_hex(out, "\\u", static_cast<unsigned char>(s[i + 1]), 4);
      i += n;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

namespace {

// nlohmann's parser refuses a lone \udcXX, so parse_json_text() first rewrites each one as
// the noncharacter U+FDD0 (kept for a program's internal use) followed by U+0100+XX, and a
// U+FDD0 that is really in the text as two of them; after parsing, unescape_bytes() turns
// these back. Noncharacters are valid UTF-8, so the parser takes them as they are.
constexpr std::string_view kMark = "\xEF\xB7\x90";  // U+FDD0

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The four hex digits at text[i..i+4) as a number, or -1.
int hex4(std::string_view text, size_t i) {
  if (i + 4 > text.size()) return -1;
  int v = 0;
  for (size_t k = i; k < i + 4; ++k) {
    const int d = hex_value(text[k]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

void append_utf8_2(std::string& out, unsigned cp) {  // U+0080-U+07FF
  out += static_cast<char>(0xC0 | (cp >> 6));
  out += static_cast<char>(0x80 | (cp & 0x3F));
}

std::string escape_lone_surrogates(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool after_high = false;  // the last thing copied was a \uD800-\uDBFF escape
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      const int cp = text[i + 1] == 'u' ? hex4(text, i + 2) : -1;
      if (cp >= 0xDC80 && cp <= 0xDCFF && !after_high) {
        out += kMark;
        append_utf8_2(out, 0x100 + static_cast<unsigned>(cp - 0xDC00));
      } else if (cp == 0xFDD0) {
        out += kMark;
        out += kMark;
      } else {
        out.append(text.substr(i, cp >= 0 ? 6 : 2));
      }
      after_high = cp >= 0xD800 && cp <= 0xDBFF;
      i += cp >= 0 ? 6 : 2;
      continue;
    }
    after_high = false;
    if (text.substr(i, kMark.size()) == kMark) {
      out += kMark;
      out += kMark;
      i += kMark.size();
      continue;
    }
    out += text[i++];
  }
  return out;
}

void unescape_bytes(std::string& s) {
  if (s.find(kMark) == std::string::npos) return;
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (std::string_view(s).substr(i, kMark.size()) != kMark) {
      out += s[i++];
      continue;
    }
    const size_t next = i + kMark.size();
    if (std::string_view(s).substr(next, kMark.size()) == kMark) {
      out += kMark;
      i = next + kMark.size();
      continue;
    }
    if (next + 2 <= s.size()) {
      const auto b0 = static_cast<unsigned char>(s[next]);
      const auto b1 = static_cast<unsigned char>(s[next + 1]);
      const unsigned cp = ((b0 & 0x1Fu) << 6) | (b1 & 0x3Fu);
      if ((b0 & 0xE0) == 0xC0 && (b1 & 0xC0) == 0x80 && cp >= 0x180 && cp <= 0x1FF) {
        out += static_cast<char>(cp - 0x100);
        i = next + 2;
        continue;
      }
    }
    out += kMark;  // not one of ours: cannot come from escape_lone_surrogates()
    i = next;
  }
  s = std::move(out);
}

template <class Json>
void unescape_tree(Json& j) {
  if (j.is_string()) {
    unescape_bytes(j.template get_ref<std::string&>());
  } else if (j.is_array()) {
    for (auto& v : j) unescape_tree(v);
  } else if (j.is_object()) {
    bool keys_marked = false;
    for (auto it = j.begin(); it != j.end(); ++it) {
      unescape_tree(it.value());
      keys_marked = keys_marked || it.key().find(kMark) != std::string::npos;
    }
    if (!keys_marked) return;
    Json rebuilt = Json::object();
    for (auto it = j.begin(); it != j.end(); ++it) {
      std::string key = it.key();
      unescape_bytes(key);
      rebuilt[key] = std::move(it.value());
    }
    j = std::move(rebuilt);
  }
}

template <class Json>
Json parse_with_bytes(std::string_view text, bool allow_exceptions) {
  const std::string escaped = escape_lone_surrogates(text);
  Json j = Json::parse(escaped, nullptr, allow_exceptions);
  if (!j.is_discarded()) unescape_tree(j);
  return j;
}

}  // namespace

nlohmann::json parse_json_text(std::string_view text, bool allow_exceptions) {
  return parse_with_bytes<nlohmann::json>(text, allow_exceptions);
}

nlohmann::ordered_json parse_ordered_json_text(std::string_view text, bool allow_exceptions) {
  return parse_with_bytes<nlohmann::ordered_json>(text, allow_exceptions);
}

}  // namespace dlenv
