#include "report/prometheus_text.h"

#include <fmt/format.h>

#include <cmath>

namespace dlenv::report_detail {
namespace {

// Length of the valid UTF-8 sequence at s[i], 0 when invalid (overlong forms, surrogates
// and code points above U+10FFFF included).
size_t utf8_sequence_length(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  unsigned cp = len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
  for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (byte(i + k) & 0x3F);
  if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
      cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  return len;
}

std::string help_text(std::string_view help) {
  std::string out;
  for (char ch : help) {
    if (ch == '\\') {
      out += "\\\\";
    } else if (ch == '\n') {
      out += "\\n";
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace

std::string prometheus_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (size_t i = 0; i < value.size();) {
    size_t len = utf8_sequence_length(value, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
      continue;
    }
    char ch = value[i];
    if (len == 1 && ch == '\\') {
      out += "\\\\";
    } else if (len == 1 && ch == '"') {
      out += "\\\"";
    } else if (len == 1 && ch == '\n') {
      out += "\\n";
    } else {
      out.append(value.substr(i, len));
    }
    i += len;
  }
  return out;
}

void PrometheusWriter::gauge(std::string_view name, std::string_view help) {
  out_ += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name, help_text(help), name);
}

void PrometheusWriter::sample(std::string_view name, const PrometheusLabels& labels, double value) {
  out_ += name;
  if (!labels.empty()) {
    out_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) out_ += ',';
      out_ += labels[i].first + "=\"" + prometheus_label_value(labels[i].second) + '"';
    }
    out_ += '}';
  }
  if (std::isnan(value)) {
    out_ += " NaN\n";
  } else if (std::isinf(value)) {
    out_ += value > 0 ? " +Inf\n" : " -Inf\n";
  } else {
    out_ += fmt::format(" {}\n", value);
  }
}

}  // namespace dlenv::report_detail
