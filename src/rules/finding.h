// Findings: the output of rules. Every id is an entry of the finding catalog
// (kb/findings.json), named in code by its FindingId (kb/finding_catalog.h, generated).
#pragma once

#include <string>
#include <vector>

#include "kb/finding_catalog.h"

namespace dlenv {

struct Evidence {
  std::string fact;    // "kernel module 580.95.05"
  std::string source;  // "/proc/driver/nvidia/version"
};

struct FixStep {
  std::string text;     // what to do, in words
  std::string command;  // a command to run (may be empty)
  std::string shell;    // "sh", "powershell", "cmd" (empty when no command)
};

struct Finding {
  std::string id;
  Severity severity = Severity::info;
  std::string layer;  // "driver", "gpu", "toolkit", "cudnn", "env", "host"
  std::string title;
  std::vector<Evidence> evidence;
  std::vector<FixStep> fix;
  bool confirmed = true;  // false when it rests on an unconfirmed KB row
  // What the finding is about, for the resolver (rules/resolve.h): a path, an environment's
  // prefix, a GPU ("gpu 0"); empty for the machine as a whole. Two findings of one id about
  // one subject are merged into one; `covers` names further subjects this finding explains
  // (a finding about several directories), which a catalog `supersedes` entry also matches.
  std::string subject;
  std::vector<std::string> covers;
};

// The one way a check builds a finding: the catalog's id and layer, the severity of this
// case (a check may report less than the catalog's highest), and a title.
Finding make_finding(FindingId id, Severity severity, std::string title);
// The same, about `subject` (see Finding::subject).
Finding make_finding(FindingId id, Severity severity, std::string title, std::string subject);

}  // namespace dlenv
