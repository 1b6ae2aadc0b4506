// The --help layout: CLI11's, with descriptions wrapped so that every line fits in
// kHelpWidth columns (option descriptions and subcommand summaries indented under their
// column, the command's description flush left).
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>
#include <string_view>

namespace dlenv {

inline constexpr size_t kHelpWidth = 80;

// Words of `text` in lines of at most `width` columns (UTF-8 aware); a word longer than
// `width` stays whole on its own line. Newlines in `text` are kept.
std::string wrap_text(std::string_view text, size_t width);

class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter();
  std::string make_option_desc(const CLI::Option* opt) const override;
  std::string make_subcommand(const CLI::App* sub) const override;
  std::string make_description(const CLI::App* app) const override;
};

}  // namespace dlenv
