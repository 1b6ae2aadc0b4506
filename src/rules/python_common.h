// Helpers shared by the Python check files (torch_checks.cc, tensorflow_checks.cc, ...),
// defined in python_common.cc.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rules/checks.h"

namespace dlenv::pyrules {

using Findings = std::vector<Finding>;
using Ctx = RuleContext;

Evidence ev(std::string fact, std::string source);
// A fix step; with `command`, its shell follows the target OS of `c`.
FixStep step(std::string text, std::string command = {}, const Ctx* c = nullptr);
// A finding of layer "python".

// The interpreter path (or prefix) naming an environment in titles and commands.
std::string env_name(const PythonEnv& e);
// `<python> -m pip`, quoted when needed.
std::string pip(const PythonEnv& e);
const PythonPackage* pkg(const PythonEnv& e, std::string_view name);
Evidence pkg_ev(const PythonPackage& p);
const FrameworkFacts* fw(const PythonEnv& e, std::string_view name);

// --deep (python_deep_common.cc): the files of a library family ("cudnn", "cublas",
// "cudart") the process reported loaded, in its order: Linux libcudnn*.so* and Windows
// cudnn*.dll names alike, the latter matched case-insensitively with either separator.
std::vector<std::string> deep_loaded(const PythonEnv& e, std::string_view family);
// Where those paths came from: "/proc/self/maps of ENV", or "the module list of ENV" when
// the process was a Windows one.
std::string deep_loaded_source(const PythonEnv& e);
// The process was a Windows one (its module paths are Windows paths).
bool deep_windows(const PythonEnv& e);

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

// One PEP 508 requirement, enough for "name==1.2; markers", "name (>=9.1,<10)".
struct Requirement {
  std::string name;  // normalised (lower case, '_' '.' -> '-')
  std::vector<std::pair<std::string, Version>> specs;
  bool extra_only = false;  // the marker names an extra
  std::string text;
};
std::optional<Requirement> parse_requirement(std::string_view text);
// The lowest version a requirement allows (== or >=); nullopt when unbounded below.
std::optional<Version> lower_bound(const Requirement& r);
// Whether `v` meets every version specifier of `r` (markers are not evaluated).
bool satisfies(const Requirement& r, const Version& v);

// Helpers of several framework check files (python_common.cc).
using json = nlohmann::json;

// "cu130" -> 13.0, "cu118" -> 11.8.
std::optional<Version> variant_cuda(std::string_view v);
std::string variant_of(const Version& cuda);
json kb_json(const Kb& kb, std::string_view name);
// The torch release row (kb/pytorch.json releases[]) of a torch version.
json torch_release(const json& kb, const Version& torch);
std::string torch_reinstall(const PythonEnv& e, const std::string& torch_version,
                            const std::string& variant);
// CUDA library majors this environment can load: its own wheels, system cuDNN copies
// and toolkits.
struct Available {
  std::set<int> cudnn;
  std::set<int> cudart;
  std::vector<Evidence> evidence;
};
Available available_libs(const Ctx& c, const PythonEnv& e);
const FrameworkFacts* tf_cuda(const PythonEnv& e);

}  // namespace dlenv::pyrules
