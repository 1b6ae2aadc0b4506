// Findings: the output of rules. Stable ids come from the failure catalog.
#pragma once

#include <string>
#include <vector>

namespace dlenv {

enum class Severity { info, warning, error };
const char* severity_name(Severity s);  // "info", "warning", "error"

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
};

}  // namespace dlenv
