// Helpers shared by the report renderers (not part of the public interface).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "probe/facts.h"
#include "report/report.h"
#include "rules/finding.h"
#include "util/version.h"

namespace dlenv::report_detail {

// Makes untrusted text safe for one line of terminal output: newlines and tabs
// become spaces, other control characters (ESC included) become "\xNN", and
// the result is trimmed.
std::string clean(std::string_view s);

// Text for a Markdown table cell or list item: one line (clean), Markdown punctuation escaped.
std::string md_text(std::string_view s);

// Columns a UTF-8 string takes (one per code point).
size_t display_width(std::string_view s);

// "not found", "permission denied", "skipped"... for a status without a value.
std::string status_phrase(FactStatus s);
// "not found: <reason>" (or just "not found" without a reason).
std::string unknown_text(FactStatus s, std::string_view reason);

inline std::string value_text(const std::string& v) {
  return v;
}
inline std::string value_text(bool v) {
  return v ? "yes" : "no";
}
inline std::string value_text(int v) {
  return std::to_string(v);
}
inline std::string value_text(uint64_t v) {
  return std::to_string(v);
}
inline std::string value_text(const Version& v) {
  return v.str();
}

// A fact as one line of text: its value, or why it has none.
template <class T>
std::string fact_text(const Fact<T>& f) {
  if (f.ok()) return clean(value_text(*f));
  return unknown_text(f.status, f.reason);
}

// Status to report for a fact without a value ("ok" without a value reads as not-found).
template <class T>
FactStatus missing_status(const Fact<T>& f) {
  return f.status == FactStatus::ok ? FactStatus::not_found : f.status;
}

// Windows facts (report/windows_report.cc): the JSON object and the text rows.
struct WindowsRow {
  std::string label;
  std::string value;
  std::string source;
};
nlohmann::ordered_json windows_json(const WindowsFacts& w);
std::vector<WindowsRow> windows_rows(const WindowsFacts& w);
// One line for the Markdown table: run times, CUDA on PATH, registry PATH.
std::string windows_summary(const WindowsFacts& w);

// The effective driver version as written by its source (NVML, else the kernel
// module, else nvidia-smi), keeping leading zeros ("580.95.05"); empty when none.
std::string driver_version_text(const DriverFacts& d);

// Which settings make a toolkit the active one: "PATH", "CUDA_HOME", ...
std::vector<std::string> active_via(const ToolkitFacts& t);

struct Counts {
  int errors = 0;
  int warnings = 0;
  int infos = 0;
};
Counts count_findings(const std::vector<Finding>& findings);
// "2 errors, 1 warning, 3 info"
std::string counts_text(const Counts& c);

// The facts part of the text report (everything before "Findings").
std::string render_facts_text(const Facts& facts, const ReportOptions& options);

}  // namespace dlenv::report_detail
