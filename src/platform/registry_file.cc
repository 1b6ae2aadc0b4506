#include "platform/registry_file.h"

#include <cstdint>

#include "util/bytes.h"
#include "util/strings.h"

namespace dlenv {
namespace {

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// UTF-16LE bytes -> UTF-8; stops at a NUL code unit when `stop_at_nul`. Unpaired
// surrogates become U+FFFD; an odd trailing byte is ignored.
std::string utf16le_to_utf8(ByteView b, bool stop_at_nul) {
  std::string out;
  for (uint64_t i = 0; b.in_bounds(i, 2); i += 2) {
    uint32_t u = *b.read<uint16_t>(i);
    if (u == 0 && stop_at_nul) break;
    if (u >= 0xD800 && u <= 0xDBFF && b.in_bounds(i + 2, 2)) {
      uint32_t lo = *b.read<uint16_t>(i + 2);
      if (lo >= 0xDC00 && lo <= 0xDFFF) {
        append_utf8(out, 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00));
        i += 2;
        continue;
      }
    }
    if (u >= 0xD800 && u <= 0xDFFF) u = 0xFFFD;
    append_utf8(out, u);
  }
  return out;
}

// "hex(2):25,00,53,00" -> bytes; nullopt on a malformed byte.
std::optional<std::string> hex_bytes(std::string_view list) {
  std::string out;
  for (const auto& part : split(list, ',')) {
    std::string_view t = trim(part);
    if (t.empty()) continue;
    if (t.size() > 2) return std::nullopt;
    unsigned v = 0;
    for (char ch : t) {
      v <<= 4;
      if (ch >= '0' && ch <= '9') {
        v |= static_cast<unsigned>(ch - '0');
      } else if (ch >= 'a' && ch <= 'f') {
        v |= static_cast<unsigned>(ch - 'a' + 10);
      } else if (ch >= 'A' && ch <= 'F') {
        v |= static_cast<unsigned>(ch - 'A' + 10);
      } else {
        return std::nullopt;
      }
    }
    out += static_cast<char>(v);
  }
  return out;
}

// A quoted .reg string starting at s[0] == '"': unescapes \\ and \"; sets `end` past it.
std::optional<std::string> quoted(std::string_view s, size_t& end) {
  if (s.empty() || s[0] != '"') return std::nullopt;
  std::string out;
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      out += s[++i];
    } else if (s[i] == '"') {
      end = i + 1;
      return out;
    } else {
      out += s[i];
    }
  }
  return std::nullopt;
}

}  // namespace

Result<RegistryData> parse_reg_file(std::string_view bytes, std::string_view file_name) {
  std::string text;
  ByteView b(bytes);
  if (bytes.size() >= 2 && static_cast<uint8_t>(bytes[0]) == 0xFF &&
      static_cast<uint8_t>(bytes[1]) == 0xFE) {
    text = utf16le_to_utf8(*b.sub(2, bytes.size() - 2), false);
  } else if (bytes.size() >= 3 && bytes.substr(0, 3) == "\xEF\xBB\xBF") {
    text = std::string(bytes.substr(3));
  } else {
    text = std::string(bytes);
  }
  auto lines = split_lines(text);
  std::string where = std::string(file_name);
  size_t first = 0;
  while (first < lines.size() && trim(lines[first]).empty()) ++first;
  if (first == lines.size() || (trim(lines[first]) != "Windows Registry Editor Version 5.00" &&
                                trim(lines[first]) != "REGEDIT4")) {
    return fail(where +
                ": not a registry export (the first line must be \"Windows Registry Editor "
                "Version 5.00\" or REGEDIT4; create it with `reg export KEY FILE`)");
  }
  RegistryData data;
  std::map<std::string, std::string>* current = nullptr;
  for (size_t i = first + 1; i < lines.size(); ++i) {
    std::string line(trim(lines[i]));
    size_t line_no = i + 1;
    // Continuation lines: "hex(2):25,00,\" + "  53,00"
    while (!line.empty() && line.back() == '\\' && line.find("=hex") != std::string::npos &&
           i + 1 < lines.size()) {
      line.pop_back();
      line += std::string(trim(lines[++i]));
    }
    if (line.empty() || line[0] == ';') continue;
    if (line[0] == '[') {
      if (line.back() != ']') {
        return fail(where + ":" + std::to_string(line_no) + ": key line without a closing ']'");
      }
      std::string key = line.substr(1, line.size() - 2);
      current = nullptr;
      if (!key.empty() && key[0] == '-') continue;  // a deletion: nothing to read
      size_t slash = key.find('\\');
      std::string hive_name = to_lower(key.substr(0, slash));
      std::string rest = slash == std::string::npos ? "" : to_lower(key.substr(slash + 1));
      RegistryHive hive;
      if (hive_name == "hkey_current_user" || hive_name == "hkcu") {
        hive = RegistryHive::current_user;
      } else if (hive_name == "hkey_local_machine" || hive_name == "hklm") {
        hive = RegistryHive::local_machine;
      } else {
        continue;  // other hives are not read by dlenv
      }
      current = &data.keys[{hive, rest}];
      continue;
    }
    if (!current) continue;
    std::string name;
    size_t pos = 0;
    if (line[0] == '@') {
      pos = 1;
    } else {
      auto n = quoted(line, pos);
      if (!n) {
        return fail(where + ":" + std::to_string(line_no) + ": value name is not a quoted string");
      }
      name = *n;
    }
    if (pos >= line.size() || line[pos] != '=') {
      return fail(where + ":" + std::to_string(line_no) + ": expected '=' after the value name");
    }
    std::string_view v = std::string_view(line).substr(pos + 1);
    std::string value;
    if (!v.empty() && v[0] == '"') {
      size_t end = 0;
      auto s = quoted(v, end);
      if (!s) {
        return fail(where + ":" + std::to_string(line_no) + ": unterminated string value");
      }
      value = *s;
    } else if (starts_with(v, "hex(2):") || starts_with(v, "hex(7):") ||
               starts_with(v, "hex(1):")) {
      auto raw = hex_bytes(v.substr(7));
      if (!raw) {
        return fail(where + ":" + std::to_string(line_no) + ": malformed hex bytes");
      }
      bool multi = starts_with(v, "hex(7):");
      if (multi) {
        // REG_MULTI_SZ: NUL-separated strings; joined with ';' like a PATH.
        std::string all = utf16le_to_utf8(ByteView(*raw), false);
        std::vector<std::string> parts = split(all, '\0');
        value = join(parts, ";");
      } else {
        value = utf16le_to_utf8(ByteView(*raw), true);
      }
    } else {
      continue;  // dword:, hex:, hex(b): ... are not needed
    }
    (*current)[to_lower(name)] = value;
  }
  return data;
}

RegistryReader registry_from_data(RegistryData data) {
  return [data = std::move(data)](RegistryHive hive, std::string_view key,
                                  std::string_view value) -> std::optional<std::string> {
    auto k = data.keys.find({hive, to_lower(key)});
    if (k == data.keys.end()) return std::nullopt;
    auto v = k->second.find(to_lower(value));
    if (v == k->second.end()) return std::nullopt;
    return v->second;
  };
}

}  // namespace dlenv
