// Rules: findings from facts + the knowledge base. One static table; each rule
// has a stable id (the failure catalog's where it has one) and never probes.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kb/kb.h"
#include "probe/facts.h"
#include "rules/finding.h"

namespace dlenv {

// A finding a check reports: the catalog's id, layer and highest severity (kb/findings.json:
// what it means and how to fix it is said there too).
struct RuleInfo {
  std::string_view id;
  std::string_view layer;
  Severity severity;
};

struct RuleContext {
  const Facts& f;
  const Kb& kb;
  Os os;
};

struct Rule {
  FindingId id;
  // Appends its findings; nullptr for ids that another rule's check reports.
  std::function<void(const RuleContext&, std::vector<Finding>&)> check;
};

// Rule groups defined in other files of this layer, appended to the table in order.
const std::vector<Rule>& python_rules();   // rules/python_rules.cc
const std::vector<Rule>& verify_rules();   // rules/verify_rules.cc (ids dlenv verify reports)
const std::vector<Rule>& system_rules();   // rules/system_rules.cc: WSL, containers, kernel
const std::vector<Rule>& windows_rules();  // rules/windows_rules.cc
// rules/loader_rules.cc: decided by the loader models (win 193/127, Python 3.8 DLL
// search, LD_LIBRARY_PATH entries), and the loader-model parts of rules of other files.
const std::vector<Rule>& loader_rules();
void loader_preload_stub(const RuleContext& c, std::vector<Finding>& out);      // libcuda stub
void loader_preload_cudnn(const RuleContext& c, std::vector<Finding>& out);     // LD_PRELOAD cuDNN
void loader_cudnn_incomplete(const RuleContext& c, std::vector<Finding>& out);  // Linux
// rules/loader_framework_rules.cc: decided by the loader model on each Python environment's
// framework libraries; the bool ones return whether the model had anything to say.
void loader_framework_cudnn_mix(const RuleContext& c, std::vector<Finding>& out);
bool loader_models_cudnn(const Facts& f, const PythonEnv& e);  // cuDNN resolved there
// Whether pip-cudnn-vs-system-cudnn-symbols reports a framework taking cuDNN libraries from the
// wheel directory `dir` together with another release's (that copy's live version is then
// whatever the mixed load answered).
bool loader_explains_cudnn_mix(const Facts& f, const std::string& dir);
void loader_cudnn_not_found(const RuleContext& c, std::vector<Finding>& out);
// Whether the model resolved (or missed) libcudnn.so.N for the environment's frameworks
// (only `framework`'s when given).
bool loader_decides_cudnn_found(const Facts& f, const PythonEnv& e,
                                std::string_view framework = "");
bool loader_libcuda_stub(const RuleContext& c, std::vector<Finding>& out);
// rules/loader_rules.cc: cuDNN 8 companions (sub-libraries, zlibwapi.dll) the Windows loader
// model cannot resolve for the copy a context loads; the copies it decides.
void loader_win_cudnn8_sublibraries(const RuleContext& c, std::vector<Finding>& out);
void loader_win_zlibwapi(const RuleContext& c, std::vector<Finding>& out);
bool loader_decides_win_cudnn(const Facts& f, const CudnnCopy& k);
// Fabric Manager (802), forward compatibility (804), cuBLAS wheel pins: rules/catalog_rules.cc
const std::vector<Rule>& catalog_rules();
// no-nvidia-driver on Windows (no nvcuda.dll), called by the rule in rules.cc.
void windows_no_driver(const RuleContext& c, std::vector<Finding>& out);

// Every rule dlenv checks, in evaluation order.
const std::vector<RuleInfo>& rule_table();
const RuleInfo* find_rule(std::string_view id);
// Every finding id `dlenv explain` knows: the rule table's, then the catalog entries
// (kb/findings.json) no rule checks yet.
std::vector<std::string> finding_ids(const Kb& kb);

// Runs every rule; findings come back sorted by severity (errors first), then id.
std::vector<Finding> run_rules(const Facts& facts, const Kb& kb, Os os);

// Text of `dlenv explain ID` (catalog entry and/or rule description); nullopt for unknown ids.
std::optional<std::string> explain_text(std::string_view id, const Kb& kb);
// docs/findings.md, generated from the rule table and the catalog.
std::string findings_markdown(const Kb& kb);

}  // namespace dlenv
