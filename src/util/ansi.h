// ANSI colours for text output. Whether to colour is decided once per run, by
// color_wanted() (report/report.h); these only paint.
#pragma once

#include <string>
#include <string_view>

namespace dlenv {

enum class Style { none, bold, dim, red, yellow, cyan };

// `text` wrapped in the style's escape and a reset; unchanged without `color`.
std::string paint(std::string_view text, Style style, bool color);

// error -> red, warning -> yellow, info -> cyan (any other word: none).
Style severity_style(std::string_view severity);

}  // namespace dlenv
