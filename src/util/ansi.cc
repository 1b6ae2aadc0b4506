#include "util/ansi.h"

namespace dlenv {

std::string paint(std::string_view text, Style style, bool color) {
  if (!color || style == Style::none || text.empty()) return std::string(text);
  const char* code = "";
  switch (style) {
    case Style::none: break;
    case Style::bold: code = "\x1b[1m"; break;
    case Style::dim: code = "\x1b[2m"; break;
    case Style::red: code = "\x1b[31m"; break;
    case Style::yellow: code = "\x1b[33m"; break;
    case Style::cyan: code = "\x1b[36m"; break;
  }
  return std::string(code) + std::string(text) + "\x1b[0m";
}

Style severity_style(std::string_view severity) {
  if (severity == "error") return Style::red;
  if (severity == "warning") return Style::yellow;
  if (severity == "info") return Style::cyan;
  return Style::none;
}

}  // namespace dlenv
