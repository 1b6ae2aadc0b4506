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

}  // namespace dlenv
