// IDEs (PyCharm, VS Code): the interpreter a project uses against the shell's, and one that no
// longer exists.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "kb/error_signature.h"
#include "rules/checks.h"
#include "rules/loader_coverage.h"
#include "rules/python_common.h"
#include "rules/rule_helpers.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using namespace pyrules;
using json = nlohmann::json;
namespace py = pyrules;

bool found_by(const PythonEnv& e, std::string_view prefix) {
  for (const auto& v : e.found_via) {
    if (starts_with(v, prefix)) return true;
  }
  return false;
}

// The GPU builds of an environment: "torch 2.11.0+cu130", ...
std::vector<std::string> gpu_builds(const PythonEnv& e) {
  std::vector<std::string> out;
  for (const auto& f : e.frameworks) {
    if (f.cuda_build.ok() && *f.cuda_build) out.push_back(f.package + " " + f.version);
  }
  return out;
}

}  // namespace

namespace checks {

using namespace pyrules;
using json = nlohmann::json;
namespace py = pyrules;

void ide_vs_shell(const Ctx& c, Findings& out) {
  const PythonEnv* shell = nullptr;
  for (const auto& e : c.f.python) {
    if (found_by(e, "PATH")) {
      shell = &e;
      break;
    }
  }
  if (!shell) return;
  for (const auto& e : c.f.python) {
    if (&e == shell || !e.interpreter) continue;
    std::string ide = found_by(e, "PyCharm") ? "PyCharm" : found_by(e, "VS Code") ? "VS Code" : "";
    if (ide.empty()) continue;
    auto a = gpu_builds(*shell);
    auto b = gpu_builds(e);
    if (a.empty() == b.empty()) continue;
    Finding x = make_finding(FindingId::ide_interpreter_differs_from_shell, Severity::warning,
                             ide + " runs " + env_name(e) + (b.empty() ? " (no GPU build)" : "") +
                                 ", the shell runs " + env_name(*shell) +
                                 (a.empty() ? " (no GPU build)" : "") +
                                 ": only one of them can use the GPU");
    x.evidence.push_back(
        ev(ide + " interpreter " + env_name(e) + ": " +
               (b.empty() ? std::string("no CUDA framework build") : join(b, ", ")),
           e.found_via.empty() ? "" : e.found_via[0]));
    x.evidence.push_back(
        ev("shell interpreter " + env_name(*shell) + ": " +
               (a.empty() ? std::string("no CUDA framework build") : join(a, ", ")),
           shell->found_via.empty() ? "" : shell->found_via[0]));
    const PythonEnv& good = a.empty() ? e : *shell;
    x.fix.push_back(step("point " + ide +
                         " and the shell at the same interpreter, the one with "
                         "the GPU build: " +
                         env_name(good) +
                         (ide == "PyCharm" ? " (Settings > Project > Python Interpreter)"
                                           : " (Python: Select Interpreter, or "
                                             "python.defaultInterpreterPath in "
                                             ".vscode/settings.json)")));
    out.push_back(std::move(x));
  }
}

// An IDE's project interpreter that does not exist (the probe keeps it as a not-found
// interpreter with the IDE setting as its source).
void ide_interpreter_stale(const Ctx& c, Findings& out) {
  const PythonEnv* usable = nullptr;  // an existing interpreter to point the IDE at
  for (const auto& e : c.f.python) {
    if (!e.interpreter) continue;
    if (!usable || (gpu_builds(*usable).empty() && !gpu_builds(e).empty())) usable = &e;
  }
  for (const auto& e : c.f.python) {
    if (e.interpreter || e.interpreter.status != FactStatus::not_found) continue;
    const std::string ide = found_by(e, "PyCharm")   ? "PyCharm"
                            : found_by(e, "VS Code") ? "VS Code"
                                                     : "";
    if (ide.empty()) continue;
    Finding x = make_finding(
        FindingId::ide_interpreter_stale, Severity::warning,
        ide + "'s interpreter for this project does not exist (" + e.interpreter.reason + ")");
    x.evidence.push_back(ev(e.interpreter.reason, e.interpreter.source));
    const std::string where = ide == "PyCharm" ? " (Settings > Project > Python Interpreter)"
                                               : " (Python: Select Interpreter)";
    x.fix.push_back(step(usable ? "point " + ide + " at an interpreter that exists, " +
                                      env_name(*usable) +
                                      (gpu_builds(*usable).empty()
                                           ? std::string()
                                           : " (it has " + join(gpu_builds(*usable), ", ") + ")") +
                                      where
                                : "point " + ide +
                                      " at an interpreter that exists, the environment with your "
                                      "GPU framework" +
                                      where));
    out.push_back(std::move(x));
  }
}

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check ide_vs_shell_entry{"ide_vs_shell",
                                      "the IDE's interpreter against the shell's",
                                      ide_vs_shell,
                                      {FindingId::ide_interpreter_differs_from_shell},
                                      fact_area::python};
extern const Check ide_interpreter_stale_entry{"ide_interpreter_stale",
                                               "an IDE interpreter that no longer exists",
                                               ide_interpreter_stale,
                                               {FindingId::ide_interpreter_stale},
                                               fact_area::python};

}  // namespace checks
}  // namespace dlenv
