// What importing each framework showed (doctor --deep): the catalog's error signatures name the
// failure; a finding a file-based check reports for the same environment takes this evidence.
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
namespace checks {

using namespace pyrules;
using json = nlohmann::json;
namespace py = pyrules;

void deep_results(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    if (!e.deep) continue;
    if (!e.deep->status.ok()) {
      Finding x = make_finding(FindingId::python_deep_probe_failed, Severity::warning,
                               "dlenv could not run " + env_name(e) + " to import its frameworks");
      x.evidence.push_back(ev(e.deep->status.reason, e.deep->status.source));
      x.fix.push_back(step("run it by hand to see why",
                           env_name(e) + " -c 'import sys; print(sys.version)'", &c));
      out.push_back(std::move(x));
      continue;
    }
    for (const auto& f : e.deep->frameworks) {
      bool unavailable = !f.imported || (f.gpu_available.ok() && !*f.gpu_available) ||
                         (!f.gpu_op.empty() && f.gpu_op != "ok");
      if (!unavailable || (!gpu_present(c.f) && f.imported)) continue;
      std::string text = f.error.empty() ? f.gpu_op : f.error;
      // The catalog's error signatures name the failure (kb/findings.json `signatures`).
      const ErrorSignature* sig = longest_error_signature(text);
      const FindingId id = sig ? sig->id : FindingId::python_framework_gpu_unavailable;
      // About the environment: where a file-based check reports the same id for it, the
      // resolver merges the two (this one's evidence joins that finding).
      // A CPU-only package (onnxruntime, not onnxruntime-gpu) has no GPU by design.
      bool cpu_package = false;
      std::string package = f.name;
      for (const auto& fw : e.frameworks) {
        if (fw.name == f.name && fw.cuda_build.ok() && !*fw.cuda_build) {
          cpu_package = true;
          package = fw.package.empty() ? fw.name : fw.package;
        }
      }
      if (cpu_package && f.imported && f.error.empty()) {
        Finding x = make_finding(FindingId::python_framework_gpu_unavailable, Severity::info,
                                 f.name + " in " + env_name(e) + " is the CPU package (" + package +
                                     "): it runs on the CPU by design");
        x.layer = "python";
        x.evidence.push_back(
            ev(f.name + " " + f.version + " imported, GPU available: no", e.deep->status.source));
        x.fix.push_back(
            step("for GPU execution install the GPU package instead of " + package,
                 env_name(e) + " -m pip install " +
                     (f.name == "onnxruntime" ? std::string("onnxruntime-gpu") : package + "-gpu"),
                 &c));
        out.push_back(std::move(x));
        continue;
      }
      Finding x = make_finding(id, Severity::error,
                               f.name + " in " + env_name(e) +
                                   (f.imported ? " cannot use the GPU" : " fails to import") +
                                   (text.empty() ? std::string() : ": " + text.substr(0, 200)),
                               e.prefix);
      x.layer = "python";
      x.evidence.push_back(
          ev(f.name + " " + f.version + (f.imported ? " imported" : " import failed") +
                 (f.gpu_available.ok()
                      ? std::string(", GPU available: ") + (*f.gpu_available ? "yes" : "no")
                      : std::string()),
             e.deep->status.source));
      if (!text.empty()) x.evidence.push_back(ev(text, e.deep->status.source));
      // The CUDA libraries the process really mapped: the first few, then a count.
      constexpr size_t kShown = 6;
      for (size_t i = 0; i < e.deep->loaded_libraries.size() && i < kShown; ++i) {
        x.evidence.push_back(ev("loaded " + e.deep->loaded_libraries[i], deep_loaded_source(e)));
      }
      if (e.deep->loaded_libraries.size() > kShown) {
        x.evidence.push_back(
            ev("... and " + std::to_string(e.deep->loaded_libraries.size() - kShown) +
                   " more CUDA libraries (dlenv doctor --deep --json lists them all)",
               deep_loaded_source(e)));
      }
      x.fix.push_back(
          step("`dlenv explain " + std::string(finding_name(id)) + "` has the cause and the fix"));
      out.push_back(std::move(x));
    }
  }
}

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check deep_results_entry{
    "deep_results",
    "what importing each framework showed (--deep)",
    deep_results,
    {FindingId::python_deep_probe_failed, FindingId::python_framework_gpu_unavailable},
    fact_area::driver | fact_area::gpus | fact_area::python,
    true};

}  // namespace checks
}  // namespace dlenv
