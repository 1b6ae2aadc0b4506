// The resolver: what every check reported becomes the report's findings. It runs once, after
// all checks, so that no check needs to look at another's output:
//  1. a finding whose id a catalog `supersedes` entry (kb/findings.json) makes redundant is
//     dropped when a finding of the superseding id is about the same subject (its `subject` or
//     one of its `covers`): one finding per cause;
//  2. a finding about a (non-empty) subject is merged into an earlier one (table order) of its id
//     about the same subject (as its `subject` or one of its `covers`): the highest severity,
//     confirmed only if both are, the later one's new evidence appended;
//  3. the rest are ordered by severity (errors first), then id, keeping table order otherwise.
#pragma once

#include <vector>

#include "rules/finding.h"

namespace dlenv {

std::vector<Finding> resolve_findings(std::vector<Finding> findings);

}  // namespace dlenv
