#include "cli/help_format.h"

#include <sstream>

#include "util/strings.h"

namespace dlenv {
namespace {

size_t columns(std::string_view s) {
  size_t n = 0;
  for (char ch : s) {
    if ((static_cast<unsigned char>(ch) & 0xC0) != 0x80) ++n;
  }
  return n;
}

constexpr size_t kColumn = 30;  // where option descriptions start

}  // namespace

std::string wrap_text(std::string_view text, size_t width) {
  std::string out;
  bool first_paragraph = true;
  for (const auto& paragraph : split(text, '\n', true)) {
    if (!first_paragraph) out += '\n';
    first_paragraph = false;
    std::string line;
    for (const auto& word : split(paragraph, ' ')) {
      if (!line.empty() && columns(line) + 1 + columns(word) > width) {
        out += line + '\n';
        line.clear();
      }
      line += (line.empty() ? "" : " ") + word;
    }
    out += line;
  }
  return out;
}

HelpFormatter::HelpFormatter() {
  column_width(kColumn);
}

std::string HelpFormatter::make_option_desc(const CLI::Option* opt) const {
  return wrap_text(CLI::Formatter::make_option_desc(opt), kHelpWidth - kColumn);
}

std::string HelpFormatter::make_subcommand(const CLI::App* sub) const {
  std::stringstream out;
  CLI::detail::format_help(out, sub->get_display_name(true),
                           wrap_text(sub->get_description(), kHelpWidth - kColumn), kColumn);
  return out.str();
}

std::string HelpFormatter::make_description(const CLI::App* app) const {
  return wrap_text(CLI::Formatter::make_description(app), kHelpWidth);
}

}  // namespace dlenv
