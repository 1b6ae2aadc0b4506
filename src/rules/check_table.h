// The check table: every check dlenv doctor runs, in evaluation order (each entry is defined
// beside its check: rules/checks.h). run_rules() (rules.h) runs them and hands their findings to
// the resolver (rules/resolve.h). Internal to the rules layer; tests hold each entry to its
// `emits` and `reads`.
#pragma once

#include <vector>

#include "rules/checks.h"

namespace dlenv {

const std::vector<Check>& check_table();

// What one check reported (before the resolver).
struct CheckOutput {
  const Check* check;
  std::vector<Finding> findings;
};
std::vector<CheckOutput> run_checks(const Facts& facts, const Kb& kb, Os os);

// `facts` with every part outside `areas` (fact_area bits) reset to its empty value; the
// run-wide fields (rooted, root, tool_version, timing) are kept.
Facts facts_limited_to(const Facts& facts, unsigned areas);

}  // namespace dlenv
