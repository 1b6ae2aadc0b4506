// Renderers of Facts and Findings: human text (optionally ANSI-coloured),
// the versioned JSON report (schema "dlenv.report/1", see docs/json-schema.md)
// and a Markdown form to paste into a bug report. Pure functions: they only
// build strings and never print.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "probe/facts.h"
#include "rules/finding.h"

namespace dlenv {

inline constexpr const char* kReportSchema = "dlenv.report/1";

struct ReportOptions {
  bool color = false;    // ANSI colours (decide with color_wanted())
  bool verbose = false;  // show the source of every fact (evidence always shows its source)
};

// Human text: facts grouped by layer, then the findings (error > warning >
// info), then a one-line summary. Every line ends in '\n'; no line has
// trailing whitespace.
std::string render_text(const Facts& facts, const std::vector<Finding>& findings,
                        const ReportOptions& options);

// The "dlenv.report/1" document, keys in a fixed order.
nlohmann::ordered_json report_json(const Facts& facts, const std::vector<Finding>& findings);
// report_json(...) pretty-printed with two-space indentation, ending in '\n'.
std::string render_json(const Facts& facts, const std::vector<Finding>& findings);

// Markdown for a bug report: a summary table (one row per layer), the findings
// list, and the full facts inside a collapsible <details> block.
std::string render_markdown(const Facts& facts, const std::vector<Finding>& findings);

// Whether to colour: only on a TTY, not when NO_COLOR is set and non-empty,
// not when TERM is "dumb". Null pointers mean "unset".
bool color_wanted(bool is_tty, const char* no_color_env, const char* term_env);

// Findings sorted error > warning > info, keeping the given order within a severity.
std::vector<Finding> sorted_findings(const std::vector<Finding>& findings);

}  // namespace dlenv
