// Rules: findings from facts + the knowledge base. Every check is listed once in the check
// table (rules/check_table.h) with the catalog ids it may report; each reads facts and the KB
// and never probes; the resolver (rules/resolve.h) then merges and supersedes what they report.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kb/kb.h"
#include "probe/facts.h"
#include "rules/finding.h"

namespace dlenv {

// A finding id some check reports: the catalog's id, layer and highest severity
// (kb/findings.json says what it means and how to fix it).
struct RuleInfo {
  std::string_view id;
  std::string_view layer;
  Severity severity;
};

// Every id a check reports, in the order of the check table.
const std::vector<RuleInfo>& rule_table();
const RuleInfo* find_rule(std::string_view id);
// Every finding id `dlenv explain` knows: the rule table's, then the catalog entries
// (kb/findings.json) no check reports yet.
std::vector<std::string> finding_ids(const Kb& kb);

// Runs every check and resolves their findings; they come back sorted by severity (errors
// first), then id.
std::vector<Finding> run_rules(const Facts& facts, const Kb& kb, Os os);

// Text of `dlenv explain ID` (catalog entry and/or rule description); nullopt for unknown ids.
std::optional<std::string> explain_text(std::string_view id, const Kb& kb);
// docs/findings.md, generated from the check table and the catalog.
std::string findings_markdown(const Kb& kb);

}  // namespace dlenv
