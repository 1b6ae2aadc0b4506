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

// --redact: replaces what identifies a machine or a person in rendered output with stable
// placeholders: the hostname -> <host>, the home directory -> ~, the user name where it is
// a path component -> <user>, GPU/MIG UUIDs -> GPU-<uuid-1>, MIG-<uuid-2>... (numbered by
// first appearance, the facts' GPUs first). One Redactor per run: the same value gets the
// same placeholder in every piece it redacts.
class Redactor {
 public:
  // `user` and `home`: the user name and home directory of the environment the facts come
  // from (empty: not redacted).
  Redactor(const Facts& facts, std::string user, std::string home);
  std::string operator()(std::string_view text);
  // The same for text laid out in columns: the spaces after a replaced word grow or shrink
  // so that the next column stays where it was.
  std::string columns(std::string_view text);
  // "Redacted: hostname, user, home, GPU UUIDs — pass --no-redact to keep them"
  static std::string notice();

 private:
  std::string host_, user_, home_;
  std::vector<std::pair<std::string, std::string>> uuids_;  // value -> placeholder
  std::string redact(std::string_view text, bool keep_columns);
};

struct ReportOptions {
  bool color = false;          // ANSI colours (decide with color_wanted())
  bool verbose = false;        // show the source of every fact (evidence always shows its source)
  Redactor* redact = nullptr;  // --redact: applied to the rendered text
};

// Human text: facts grouped by layer, then the findings (error > warning >
// info), then a one-line summary. Every line ends in '\n'; no line has
// trailing whitespace.
std::string render_text(const Facts& facts, const std::vector<Finding>& findings,
                        const ReportOptions& options);

// The "dlenv.report/1" document, keys in a fixed order.
nlohmann::ordered_json report_json(const Facts& facts, const std::vector<Finding>& findings);
// report_json(...) pretty-printed with two-space indentation, ending in '\n'; with a
// redactor, every string value redacted.
std::string render_json(const Facts& facts, const std::vector<Finding>& findings,
                        Redactor* redact = nullptr);

// Markdown for a bug report: a summary table (one row per layer), the findings
// list, and the full facts inside a collapsible <details> block.
// With a redactor: every piece redacted before it is escaped, and a line that says so.
std::string render_markdown(const Facts& facts, const std::vector<Finding>& findings,
                            Redactor* redact = nullptr);

// The Prometheus text format for node-exporter's textfile collector: dlenv_info,
// dlenv_gpu_info, dlenv_toolkit_info, dlenv_cudnn_info, dlenv_framework_info, dlenv_finding,
// dlenv_findings, dlenv_probe_seconds, dlenv_report_timestamp_seconds (docs/json-schema.md).
// `timestamp_seconds`: when the report was made (Unix time); with a redactor, label values
// that could identify the machine (GPU UUIDs, paths under the home directory) are redacted.
std::string render_prometheus(const Facts& facts, const std::vector<Finding>& findings,
                              double timestamp_seconds, Redactor* redact = nullptr);

// Whether to colour text output, for every command. In order: NO_COLOR set and non-empty:
// no; FORCE_COLOR or CLICOLOR_FORCE set, non-empty and not "0": yes (even into a pipe);
// otherwise only on a TTY whose TERM is not "dumb". Null pointers mean "unset".
bool color_wanted(bool is_tty, const char* no_color_env, const char* term_env,
                  const char* force_color_env = nullptr, const char* clicolor_force_env = nullptr);

// Findings sorted error > warning > info, keeping the given order within a severity.
std::vector<Finding> sorted_findings(const std::vector<Finding>& findings);

}  // namespace dlenv
