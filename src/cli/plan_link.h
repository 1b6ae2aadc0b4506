// doctor -> plan: where the installed combination is inconsistent, the finding's
// fix quotes what `dlenv plan` picks for this machine.
#pragma once

#include <vector>

#include "kb/kb.h"
#include "probe/facts.h"
#include "rules/finding.h"

namespace dlenv {

// Appends a fix step with the plan's best choice (and its install command) to the
// findings that a different framework build would solve. Never fails: a plan that
// cannot be made adds nothing.
void attach_plan_fixes(const Facts& facts, const Kb& kb, std::vector<Finding>& findings);

}  // namespace dlenv
