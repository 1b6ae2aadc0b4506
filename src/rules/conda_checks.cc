// conda: a CPU pytorch the solver picked, a cudatoolkit against the system CUDA, and the __cuda
// virtual package.
#include <algorithm>
#include <map>
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
namespace py = pyrules;

const CondaPackage* conda_pkg(const PythonEnv& e, std::string_view name) {
  for (const auto& p : e.conda) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

Evidence conda_ev(const CondaPackage& p) {
  return ev("conda package " + p.name + " " + p.version + " (build " + p.build + ")", p.source);
}

// The CUDA the environment's conda packages provide: cudatoolkit (old), cuda-version
// (conda-forge and nvidia channels), cuda-cudart.
std::optional<std::pair<Version, const CondaPackage*>> conda_cuda(const PythonEnv& e) {
  for (const char* n : {"cudatoolkit", "cuda-version", "cuda-cudart", "cuda-runtime"}) {
    if (const auto* p = conda_pkg(e, n)) {
      if (auto v = Version::parse(p->version)) return std::make_pair(*v, p);
    }
  }
  return std::nullopt;
}

}  // namespace

namespace checks {

using namespace pyrules;
namespace py = pyrules;

// pytorch (pytorch channel: py3.11_cpu_0 / py3.11_cuda12.1_cudnn8.9.2_0; conda-forge:
// cpu_mkl_py311... / cuda126_...) and pytorch-mutex / cpuonly.
void conda_cpu_pytorch(const Ctx& c, Findings& out) {
  if (!gpu_present(c.f)) return;
  for (const auto& e : c.f.python) {
    if (e.kind != "conda") continue;
    const auto* mutex = conda_pkg(e, "pytorch-mutex");
    const auto* cpuonly = conda_pkg(e, "cpuonly");
    const auto* torch = conda_pkg(e, "pytorch");
    if (!torch) torch = conda_pkg(e, "libtorch");
    bool cpu_build = torch && (contains(torch->build, "_cpu") || starts_with(torch->build, "cpu"));
    bool cpu_mutex = mutex && mutex->build == "cpu";
    if (!cpuonly && !cpu_mutex && !cpu_build) continue;
    if (!torch && !cpuonly && !cpu_mutex) continue;
    Finding x = make_finding(FindingId::conda_solver_picked_cpu_pytorch, Severity::error,
                             "conda installed the CPU build of PyTorch in " + env_name(e) +
                                 " on a machine with an NVIDIA GPU");
    if (torch) x.evidence.push_back(conda_ev(*torch));
    if (mutex) x.evidence.push_back(conda_ev(*mutex));
    if (cpuonly) x.evidence.push_back(conda_ev(*cpuonly));
    std::string cuda = "12.4";
    if (auto dc = driver_cuda(c); dc && dc->cuda < Version{12, 4}) {
      cuda = dc->cuda.truncated(2).str();
    }
    std::string conda = "conda";
    if (cpuonly) {
      x.fix.push_back(step("remove cpuonly (it pins the CPU variant)",
                           conda + " remove -p " + e.prefix + " cpuonly", &c));
    }
    x.fix.push_back(step("install the CUDA variant (or use the pip wheels: `dlenv plan`)",
                         conda + " install -p " + e.prefix + " pytorch pytorch-cuda=" + cuda +
                             " -c pytorch -c nvidia",
                         &c));
    out.push_back(std::move(x));
  }
}

void conda_vs_system(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    if (e.kind != "conda") continue;
    auto cc = conda_cuda(e);
    if (!cc) continue;
    const auto& [cv, cp] = *cc;
    // The driver must run it.
    if (auto dc = driver_cuda(c);
        dc && dc->cuda < cv.truncated(2) &&
        std::find(dc->minor_compat_majors.begin(), dc->minor_compat_majors.end(), cv.major()) ==
            dc->minor_compat_majors.end()) {
      Finding x = make_finding(FindingId::conda_cudatoolkit_vs_system_cuda, Severity::error,
                               "the conda CUDA " + cv.str() + " in " + env_name(e) +
                                   " is newer than driver " + dc->driver.str() + " runs (CUDA " +
                                   dc->cuda.str() + ")");
      x.evidence.push_back(conda_ev(*cp));
      x.evidence.push_back(
          ev("driver " + dc->driver.str() + " runs CUDA up to " + dc->cuda.str(), dc->source));
      x.fix.push_back(
          step("pin the environment's CUDA to one the driver runs, or upgrade the "
               "driver",
               "conda install -p " + e.prefix + " \"" + cp->name + "=" +
                   dc->cuda.truncated(2).str() + "\"",
               &c));
      out.push_back(std::move(x));
      continue;
    }
    // A system toolkit of another major is also visible to the same processes.
    for (const auto& t : c.f.toolkits) {
      if (!t.version || t.version->major() == cv.major()) continue;
      if (!t.active_ld_library_path && !t.active_path && !t.active_cuda_home) continue;
      std::vector<std::string> how;
      if (t.active_ld_library_path) how.push_back("LD_LIBRARY_PATH");
      if (t.active_path) how.push_back("PATH");
      if (t.active_cuda_home) how.push_back("CUDA_HOME/CUDA_PATH");
      Finding x = make_finding(FindingId::conda_cudatoolkit_vs_system_cuda, Severity::warning,
                               "conda environment " + env_name(e) + " has CUDA " + cv.str() +
                                   ", but the system CUDA " + t.version->str() +
                                   " is also active (" + join(how, ", ") + ")");
      x.evidence.push_back(conda_ev(*cp));
      x.evidence.push_back(
          ev("CUDA toolkit " + t.version->str() + " at " + t.root + " on " + join(how, ", "),
             c.f.env.source));
      x.fix.push_back(step("use one CUDA per environment: drop " + t.root + " from " +
                               join(how, ", ") +
                               " inside the conda environment, or pin the "
                               "environment's CUDA to " +
                               t.version->truncated(2).str(),
                           "conda install -p " + e.prefix + " \"" + cp->name + "=" +
                               t.version->truncated(2).str() + "\"",
                           &c));
      out.push_back(std::move(x));
      break;
    }
  }
}

// conda derives the __cuda virtual package from libcuda; without a driver (login nodes,
// docker build) conda-forge solves CPU variants unless CONDA_OVERRIDE_CUDA is set.
void conda_virtual_cuda(const Ctx& c, Findings& out) {
  if (c.os != Os::linux) return;
  auto override_cuda = c.f.env.vars.find("CONDA_OVERRIDE_CUDA");
  bool has_override = override_cuda != c.f.env.vars.end();
  bool libcuda = !c.f.driver.libcuda_files.empty() || c.f.driver.libcuda_library.ok();
  for (const auto& e : c.f.python) {
    if (e.kind != "conda") continue;
    const CondaPackage* cpu = nullptr;
    for (const auto& p : e.conda) {
      bool fw_pkg = p.name == "pytorch" || p.name == "libtorch" || p.name == "tensorflow" ||
                    p.name == "tensorflow-base" || p.name == "jaxlib";
      if (fw_pkg && (starts_with(p.build, "cpu") || contains(p.build, "_cpu"))) cpu = &p;
    }
    if (has_override) {
      auto ov = Version::parse(override_cuda->second);
      auto dc = driver_cuda(c);
      if (ov && dc && dc->cuda < ov->truncated(2)) {
        Finding x = make_finding(FindingId::conda_cuda_virtual_package_missing, Severity::warning,
                                 "CONDA_OVERRIDE_CUDA=" + override_cuda->second +
                                     " makes conda solve for a newer CUDA than driver " +
                                     dc->driver.str() + " runs (" + dc->cuda.str() + ")");
        x.evidence.push_back(ev("CONDA_OVERRIDE_CUDA=" + override_cuda->second, c.f.env.source));
        x.evidence.push_back(
            ev("driver " + dc->driver.str() + " runs CUDA up to " + dc->cuda.str(), dc->source));
        x.fix.push_back(step("set the override to the driver's CUDA",
                             "export CONDA_OVERRIDE_CUDA=" + dc->cuda.truncated(2).str(), &c));
        out.push_back(std::move(x));
      }
      continue;
    }
    if (libcuda || !cpu) continue;
    Finding x =
        make_finding(FindingId::conda_cuda_virtual_package_missing,
                     gpu_present(c.f) ? Severity::error : Severity::warning,
                     "conda sees no CUDA driver (no __cuda virtual package) and solved the CPU "
                     "variant of " +
                         cpu->name + " in " + env_name(e));
    x.evidence.push_back(conda_ev(*cpu));
    x.evidence.push_back(
        ev("no libcuda.so.1 found (conda derives __cuda from it)", "driver library scan"));
    x.evidence.push_back(ev("CONDA_OVERRIDE_CUDA is not set", c.f.env.source));
    x.fix.push_back(
        step("on a host without the driver (login node, docker build), tell conda "
             "which CUDA the GPU machines run, then ask for the CUDA variant",
             "CONDA_OVERRIDE_CUDA=12.6 conda install -p " + e.prefix + " \"" + cpu->name +
                 "=*=cuda*\" -c conda-forge",
             &c));
    out.push_back(std::move(x));
  }
}

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check conda_cpu_pytorch_entry{"conda_cpu_pytorch",
                                           "a CPU pytorch picked by the conda solver",
                                           conda_cpu_pytorch,
                                           {FindingId::conda_solver_picked_cpu_pytorch},
                                           fact_area::driver | fact_area::gpus | fact_area::python};
extern const Check conda_vs_system_entry{
    "conda_vs_system",
    "conda's cudatoolkit against the system CUDA",
    conda_vs_system,
    {FindingId::conda_cudatoolkit_vs_system_cuda},
    fact_area::driver | fact_area::env | fact_area::python | fact_area::toolkits};
extern const Check conda_virtual_cuda_entry{
    "conda_virtual_cuda",
    "conda's __cuda virtual package",
    conda_virtual_cuda,
    {FindingId::conda_cuda_virtual_package_missing},
    fact_area::driver | fact_area::env | fact_area::gpus | fact_area::python};

}  // namespace checks
}  // namespace dlenv
