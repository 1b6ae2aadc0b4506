// CUDA toolkit checks: each installed toolkit against the driver and the GPUs, the
// toolkits PATH / CUDA_HOME / LD_LIBRARY_PATH select, and an interrupted dlenv change.
#include <algorithm>
#include <cstdio>
#include <set>

#include "rules/checks.h"
#include "rules/rule_helpers.h"
#include "util/strings.h"

namespace dlenv {
namespace {

std::optional<Version> driver_version(const Facts& f) {
  return f.driver.version();
}

}  // namespace

namespace checks {

using namespace rule_helpers;

void toolkit_vs_driver(const Ctx& c, Findings& out) {
  auto dv = driver_version(c.f);
  if (!dv) return;
  auto support = c.kb.max_cuda_for_driver(*dv, c.os);
  if (!support) return;
  Version driver_cuda = support->max_cuda;
  if (c.f.driver.cuda_driver_version) {
    driver_cuda = Version::from_cuda_int(*c.f.driver.cuda_driver_version);
  }
  for (const auto& t : c.f.toolkits) {
    if (!t.version) continue;
    Version tv = t.version->truncated(2);
    if (!(driver_cuda < tv)) continue;
    bool minor_ok =
        std::find(support->minor_compat_majors.begin(), support->minor_compat_majors.end(),
                  tv.major()) != support->minor_compat_majors.end();
    Finding x = make_finding(
        FindingId::cuda_driver_insufficient, minor_ok ? Severity::warning : Severity::error,
        minor_ok
            ? "CUDA " + tv.str() + " at " + t.root + " is newer than driver " + dv->str() +
                  " (CUDA " + driver_cuda.str() + "): runs only through minor-version compatibility"
            : "CUDA " + tv.str() + " at " + t.root + " needs a newer driver than " + dv->str() +
                  " (which supports up to CUDA " + driver_cuda.str() + ")");
    x.confirmed = support->ref.confirmed;
    if (!x.confirmed && x.severity == Severity::error) x.severity = Severity::warning;
    x.evidence.push_back(
        ev("toolkit " + t.root + " is CUDA " + t.version->str(), t.version.source));
    x.evidence.push_back(ev("driver " + dv->str() + " supports CUDA " + driver_cuda.str(),
                            c.f.driver.cuda_driver_version
                                ? c.f.driver.cuda_driver_version.source
                                : "knowledge base: " + support->ref.source));
    if (auto need = c.kb.min_driver_for_cuda(tv, c.os, false)) {
      x.fix.push_back(step("install driver " + need->str() + " or newer for CUDA " + tv.str()));
    }
    if (minor_ok) {
      x.fix.push_back(
          step("minor-version compatibility runs CUDA " + std::to_string(tv.major()) +
               ".x code on this driver, but PTX JIT of newer PTX fails "
               "(CUDA_ERROR_UNSUPPORTED_PTX_VERSION); upgrading the driver removes the limit"));
    } else {
      x.fix.push_back(step("or use a toolkit / framework build for CUDA " + driver_cuda.str() +
                           " or older (see `dlenv plan`)"));
    }
    out.push_back(std::move(x));
  }
}

void toolkits_disagree(const Ctx& c, Findings& out) {
  if (c.f.toolkits.size() < 2 || c.os == Os::windows) return;  // Windows: win-cuda-path-confusion
  const ToolkitFacts* by_path = nullptr;
  const ToolkitFacts* by_home = nullptr;
  const ToolkitFacts* by_ld = nullptr;
  const ToolkitFacts* by_link = nullptr;
  for (const auto& t : c.f.toolkits) {
    if (t.active_path && !by_path) by_path = &t;
    if (t.active_cuda_home && !by_home) by_home = &t;
    if (t.active_ld_library_path && !by_ld) by_ld = &t;
    if (t.is_default_link && !by_link) by_link = &t;
  }
  std::vector<std::pair<std::string, const ToolkitFacts*>> picks;
  if (by_path) picks.push_back({"PATH (nvcc)", by_path});
  if (by_home) picks.push_back({"CUDA_HOME/CUDA_PATH", by_home});
  if (by_ld) picks.push_back({"LD_LIBRARY_PATH", by_ld});
  std::set<std::string> roots;
  for (auto& p : picks) roots.insert(p.second->real_root);
  if (roots.size() < 2) return;
  Finding x = make_finding(FindingId::cuda_toolkits_disagree, Severity::warning,
                           "PATH, CUDA_HOME and LD_LIBRARY_PATH select different CUDA toolkits");
  for (auto& [what, t] : picks) {
    x.evidence.push_back(
        ev(what + " selects " + t->root + " (CUDA " + vstr(t->version) + ")", c.f.env.source));
  }
  if (by_link) {
    x.evidence.push_back(ev("/usr/local/cuda points to " + by_link->root, "/usr/local/cuda"));
  }
  const ToolkitFacts* target = by_path ? by_path : picks.front().second;
  std::string lib = target->lib_dirs.empty() ? target->root + "/lib64" : target->lib_dirs.front();
  x.fix.push_back(
      step("make one toolkit active everywhere (nvcc, headers and the runtime must match)",
           "export CUDA_HOME=" + target->root + " PATH=" + target->root +
               "/bin:$PATH LD_LIBRARY_PATH=" + lib + ":$LD_LIBRARY_PATH"));
  out.push_back(std::move(x));
}

void nvcc_vs_smi(const Ctx& c, Findings& out) {
  if (c.f.toolkits.empty()) return;
  const ToolkitFacts* t = &c.f.toolkits.front();
  for (const auto& k : c.f.toolkits) {
    if (k.active_path) t = &k;
  }
  if (!t->version) return;
  std::optional<Version> driver_cuda;
  std::string src;
  if (c.f.driver.cuda_driver_version) {
    driver_cuda = Version::from_cuda_int(*c.f.driver.cuda_driver_version);
    src = c.f.driver.cuda_driver_version.source;
  } else if (auto dv = driver_version(c.f)) {
    // Without libcuda (e.g. under --root): what the driver version supports, per the KB.
    if (auto support = c.kb.max_cuda_for_driver(*dv, c.os)) {
      driver_cuda = support->max_cuda;
      src = "knowledge base: driver " + dv->str() + " (" + support->ref.source + ")";
    }
  }
  if (!driver_cuda) return;
  if (t->version->truncated(2) == *driver_cuda) return;
  Finding x = make_finding(FindingId::nvcc_vs_nvidia_smi_version_confusion, Severity::info,
                           "nvcc says CUDA " + t->version->truncated(2).str() +
                               ", nvidia-smi says CUDA " + driver_cuda->str() + ": both are right");
  x.evidence.push_back(
      ev("toolkit (nvcc) " + t->root + ": CUDA " + t->version->str(), t->version.source));
  x.evidence.push_back(
      ev("driver API version (nvidia-smi's \"CUDA Version\"): " + driver_cuda->str(), src));
  x.fix.push_back(
      step("nvidia-smi shows the newest CUDA the driver supports; nvcc shows the "
           "installed toolkit. A framework wheel brings its own CUDA runtime and needs "
           "neither to match, only a new enough driver"));
  out.push_back(std::move(x));
}

void gpu_vs_toolkits(const Ctx& c, Findings& out) {
  if (c.f.toolkits.empty()) return;
  for (const auto& g : c.f.gpus) {
    if (!g.compute_capability) continue;
    const Version& cc = *g.compute_capability;
    std::vector<std::string> why;
    bool any = false, all_confirmed = true, known_any = false;
    for (const auto& t : c.f.toolkits) {
      if (!t.version) continue;
      auto a = c.kb.arch_support(t.version->truncated(2));
      if (!a) continue;
      known_any = true;
      all_confirmed &= a->ref.confirmed;
      if (!(cc < a->min_cc) && !(a->max_cc < cc)) {
        any = true;
        break;
      }
      why.push_back("CUDA " + t.version->truncated(2).str() + " (" + t.root + ") builds for " +
                    a->min_cc.str() + "–" + a->max_cc.str());
    }
    if (any || !known_any) continue;
    bool too_new = true;
    for (const auto& t : c.f.toolkits) {
      if (!t.version) continue;
      if (auto a = c.kb.arch_support(t.version->truncated(2)); a && cc < a->min_cc) too_new = false;
    }
    Finding x = make_finding(
        FindingId::nvcc_unsupported_gpu_arch, all_confirmed ? Severity::warning : Severity::info,
        "No installed CUDA toolkit can compile for GPU " + std::to_string(g.index) + " (" +
            g.name.value.value_or("?") + ", compute capability " + cc.str() + ")");
    x.confirmed = all_confirmed;
    x.evidence.push_back(
        ev("GPU compute capability " + cc.str() + " (" + c.kb.architecture_name(cc) + ")",
           g.compute_capability.source));
    for (auto& w : why) x.evidence.push_back(ev(w, "knowledge base"));
    x.fix.push_back(step(too_new
                             ? "install a newer CUDA toolkit that supports this architecture "
                               "(see `dlenv plan`)"
                             : "this GPU is older than every installed toolkit supports: install "
                               "an older toolkit that still targets it"));
    out.push_back(std::move(x));
  }
}

void cuda_home_unset(const Ctx& c, Findings& out) {
  if (c.f.toolkits.empty() || c.os == Os::windows) return;  // Windows: win-cuda-path-confusion
  bool nvcc_on_path = false;
  for (const auto& t : c.f.toolkits) nvcc_on_path |= t.active_path;
  bool home = c.f.env.vars.count("CUDA_HOME") || c.f.env.vars.count("CUDA_PATH");
  if (nvcc_on_path || home) return;
  const ToolkitFacts* t = &c.f.toolkits.front();
  for (const auto& k : c.f.toolkits) {
    if (k.is_default_link) t = &k;
  }
  if (!t->nvcc) return;
  Finding x =
      make_finding(FindingId::cuda_home_not_set, Severity::info,
                   "A CUDA toolkit is installed but neither nvcc is on PATH nor CUDA_HOME is set");
  x.evidence.push_back(ev("toolkit " + t->root + " (CUDA " + vstr(t->version) + ")", t->root));
  x.fix.push_back(step("builds of CUDA extensions (pip install of packages with CUDA code) need it",
                       "export CUDA_HOME=" + t->root + " PATH=" + t->root + "/bin:$PATH"));
  out.push_back(std::move(x));
}

void toolkit_change_interrupted(const Ctx& c, Findings& out) {
  for (const auto& i : c.f.interrupted_changes) {
    Finding x = make_finding(FindingId::toolkit_change_interrupted, Severity::error,
                             "dlenv's change to " + i.toolkit + " was interrupted (" +
                                 i.description + "): the toolkit may hold part of it");
    x.evidence.push_back(ev("the journal of the change is still there", i.journal));
    x.fix.push_back(
        step("finish or roll back the change exactly, as its journal says", i.recover_command));
    out.push_back(std::move(x));
  }
}

void host_compiler(const Ctx& c, Findings& out) {
  const auto& h = c.f.system.host_compiler;
  if (!h.gcc_major) return;
  bool any_active = false;
  for (const auto& t : c.f.toolkits) {
    any_active |= t.active_path || t.active_cuda_home || t.is_default_link;
  }
  for (const auto& t : c.f.toolkits) {
    if (any_active && !(t.active_path || t.active_cuda_home || t.is_default_link)) continue;
    auto it = h.toolkit_max_gcc.find(t.root);
    if (it == h.toolkit_max_gcc.end() || !it->second) continue;
    int max = *it->second;
    if (*h.gcc_major <= max) continue;
    std::string ver = t.version ? t.version->str() : "?";
    Finding x = make_finding(FindingId::nvcc_unsupported_host_compiler, Severity::warning,
                             "nvcc of CUDA " + ver + " (" + t.root + ") refuses GCC " +
                                 std::to_string(*h.gcc_major) + ": it accepts GCC " +
                                 std::to_string(max) + " at most");
    x.evidence.push_back(
        ev("host_config.h: GCC versions later than " + std::to_string(max) + " are not supported",
           it->second.source));
    x.evidence.push_back(ev("host compiler " + h.compiler.value.value_or("?") + " is GCC " +
                                std::to_string(*h.gcc_major) + " (" + h.compiler.source + ")",
                            h.gcc_major.source));
    x.fix.push_back(step("install a supported GCC and point nvcc at it",
                         "sudo apt install g++-" + std::to_string(max) +
                             " && export NVCC_CCBIN=g++-" + std::to_string(max) +
                             " CUDAHOSTCXX=g++-" + std::to_string(max)));
    x.fix.push_back(
        step("or install a newer CUDA toolkit that supports GCC " + std::to_string(*h.gcc_major)));
    out.push_back(std::move(x));
  }
}

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check toolkit_vs_driver_entry{"toolkit_vs_driver",
                                           "each toolkit against the driver's CUDA",
                                           toolkit_vs_driver,
                                           {FindingId::cuda_driver_insufficient},
                                           fact_area::driver | fact_area::toolkits};
extern const Check toolkits_disagree_entry{
    "toolkits_disagree",
    "PATH, CUDA_HOME and LD_LIBRARY_PATH select different toolkits",
    toolkits_disagree,
    {FindingId::cuda_toolkits_disagree},
    fact_area::env | fact_area::toolkits};
extern const Check nvcc_vs_smi_entry{"nvcc_vs_smi",
                                     "nvcc's CUDA against nvidia-smi's",
                                     nvcc_vs_smi,
                                     {FindingId::nvcc_vs_nvidia_smi_version_confusion},
                                     fact_area::driver | fact_area::toolkits};
extern const Check gpu_vs_toolkits_entry{"gpu_vs_toolkits",
                                         "a GPU no installed toolkit compiles for",
                                         gpu_vs_toolkits,
                                         {FindingId::nvcc_unsupported_gpu_arch},
                                         fact_area::gpus | fact_area::toolkits};
extern const Check cuda_home_unset_entry{"cuda_home_unset",
                                         "a toolkit with neither nvcc on PATH nor CUDA_HOME",
                                         cuda_home_unset,
                                         {FindingId::cuda_home_not_set},
                                         fact_area::env | fact_area::toolkits};
extern const Check toolkit_change_interrupted_entry{"toolkit_change_interrupted",
                                                    "an interrupted dlenv change to a toolkit",
                                                    toolkit_change_interrupted,
                                                    {FindingId::toolkit_change_interrupted},
                                                    fact_area::changes};

extern const Check host_compiler_entry{"host_compiler",
                                       "the host compiler against nvcc",
                                       host_compiler,
                                       {FindingId::nvcc_unsupported_host_compiler},
                                       fact_area::system | fact_area::toolkits};

}  // namespace checks
}  // namespace dlenv
