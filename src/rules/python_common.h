// Helpers shared by the Python rule files (python_rules.cc, python_rules2.cc).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/rules.h"

namespace dlenv::pyrules {

using Findings = std::vector<Finding>;
using Ctx = RuleContext;

Evidence ev(std::string fact, std::string source);
// A fix step; with `command`, its shell follows the target OS of `c`.
FixStep step(std::string text, std::string command = {}, const Ctx* c = nullptr);
// A finding of layer "python".
Finding make(const char* id, Severity sev, std::string title);

// The interpreter path (or prefix) naming an environment in titles and commands.
std::string env_name(const PythonEnv& e);
// `<python> -m pip`, quoted when needed.
std::string pip(const PythonEnv& e);
const PythonPackage* pkg(const PythonEnv& e, std::string_view name);
Evidence pkg_ev(const PythonPackage& p);
const FrameworkFacts* fw(const PythonEnv& e, std::string_view name);

// An NVIDIA GPU or driver is visible (NVML, /proc or the kernel module).
bool gpu_present(const Facts& f);

// The newest CUDA the driver runs, with where that came from.
struct DriverCuda {
  Version cuda;
  std::string source;
  std::vector<int> minor_compat_majors;
  bool confirmed = true;
  Version driver;
};
std::optional<DriverCuda> driver_cuda(const Ctx& c);

// The second group of Python rules (python_rules2.cc), appended to python_rules().
const std::vector<Rule>& python_rules2();

}  // namespace dlenv::pyrules
