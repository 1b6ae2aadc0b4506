// JAX and XLA: a CPU-only jaxlib, LD_LIBRARY_PATH over JAX's CUDA wheels, and libdevice and
// ptxas for XLA (JAX, and TensorFlow's jit_compile).
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

// System CUDA/cuDNN library directories that LD_LIBRARY_PATH puts first.
std::vector<Evidence> ld_library_path_cuda_dirs(const Facts& f) {
  std::vector<Evidence> out;
  for (const auto& copy : f.cudnn) {
    if (!copy.python_site.empty()) continue;
    if (std::find(copy.found_via.begin(), copy.found_via.end(), "LD_LIBRARY_PATH") !=
        copy.found_via.end()) {
      std::string v = copy.library_version ? copy.library_version->str() : "?";
      out.push_back(
          ev("LD_LIBRARY_PATH puts cuDNN " + v + " in " + copy.dir + " first",
             copy.library_version.source.empty() ? copy.dir : copy.library_version.source));
    }
  }
  for (const auto& t : f.toolkits) {
    if (t.active_ld_library_path) {
      out.push_back(ev("LD_LIBRARY_PATH includes the CUDA " +
                           (t.version ? t.version->str() : std::string("?")) + " libraries of " +
                           t.root,
                       f.env.source));
    }
  }
  return out;
}

}  // namespace

namespace checks {

using namespace pyrules;
namespace py = pyrules;

void jax_cpu_only(const Ctx& c, Findings& out) {
  if (!gpu_present(c.f)) return;
  for (const auto& e : c.f.python) {
    const auto* j = fw(e, "jax");
    if (!j || !j->cuda_build.ok() || *j->cuda_build) continue;
    Finding x = make_finding(FindingId::jax_cpu_only_jaxlib, Severity::error,
                             "JAX " + j->version + " in " + env_name(e) +
                                 " has no CUDA plugin: it falls back to the CPU");
    x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
    if (const auto* p = pkg(e, "jax")) x.evidence.push_back(pkg_ev(*p));
    if (const auto* p = pkg(e, "jaxlib")) x.evidence.push_back(pkg_ev(*p));
    x.evidence.push_back(ev("no jax-cuda12-plugin / jax-cuda13-plugin installed",
                            e.site_packages.empty() ? e.prefix : e.site_packages[0]));
    if (c.os == Os::windows) {
      x.fix.push_back(
          step("JAX publishes no CUDA builds for native Windows: use WSL2 and "
               "install jax[cuda12] there"));
    } else {
      auto dc = driver_cuda(c);
      std::string extra = dc && dc->cuda.major() >= 13 ? "cuda13" : "cuda12";
      x.fix.push_back(step("install the CUDA plugin matching the driver",
                           pip(e) + " install -U \"jax[" + extra + "]\"", &c));
    }
    out.push_back(std::move(x));
  }
}

void jax_ld_library_path(const Ctx& c, Findings& out) {
  if (c.os == Os::windows) return;
  for (const auto& e : c.f.python) {
    const auto* j = fw(e, "jax");
    if (!j || !j->cuda_build.ok() || !*j->cuda_build || e.cuda_libs.empty()) continue;
    auto dirs = ld_library_path_cuda_dirs(c.f);
    if (dirs.empty()) continue;
    Finding x =
        make_finding(FindingId::jax_ld_library_path_overrides_wheels, Severity::warning,
                     "LD_LIBRARY_PATH puts system CUDA libraries ahead of the NVIDIA wheels JAX " +
                         j->version + " in " + env_name(e) + " uses");
    x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
    for (const auto& cp : j->cuda_packages) x.evidence.push_back(ev(cp + " installed", e.prefix));
    x.evidence.push_back(ev("wheel copy " + e.cuda_libs[0].path, e.cuda_libs[0].path));
    for (auto& d : dirs) x.evidence.push_back(std::move(d));
    x.fix.push_back(step(
        "start Python without the system CUDA directories",
        "env -u LD_LIBRARY_PATH " + env_name(e) + " -c 'import jax; print(jax.devices())'", &c));
    x.fix.push_back(
        step("or remove the CUDA/cuDNN directories from LD_LIBRARY_PATH in your "
             "shell profile / module setup"));
    out.push_back(std::move(x));
  }
}

void xla_cuda_files(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    const auto* jax = fw(e, "jax");
    bool jax_gpu = jax && jax->cuda_build.ok() && *jax->cuda_build;
    const auto* tf = tf_cuda(e);
    if (!jax_gpu && !tf) continue;
    std::string who = jax_gpu ? "JAX " + jax->version : "TensorFlow " + tf->version;
    const XlaCudaDir* flagged = nullptr;
    bool libdevice = false, ptxas = false;
    for (const auto& d : e.xla_dirs) {
      if (d.via == "XLA_FLAGS --xla_gpu_cuda_data_dir") flagged = &d;
      libdevice |= d.libdevice;
      ptxas |= d.ptxas;
    }
    if (flagged && !flagged->libdevice) {
      Finding x = make_finding(FindingId::xla_libdevice_ptxas_not_found, Severity::error,
                               "XLA_FLAGS points XLA at " + flagged->dir +
                                   ", which has no nvvm/libdevice/libdevice.10.bc (" + who +
                                   " in " + env_name(e) + ")");
      x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
      x.evidence.push_back(
          ev("--xla_gpu_cuda_data_dir=" + flagged->dir, c.f.env.source + " (XLA_FLAGS)"));
      for (const auto& d : e.xla_dirs) {
        if (d.libdevice) {
          x.fix.push_back(step("point it at a directory that has nvvm/libdevice",
                               "export XLA_FLAGS=--xla_gpu_cuda_data_dir=" + d.dir, &c));
          break;
        }
      }
      x.fix.push_back(step("or unset XLA_FLAGS so XLA finds the nvidia-cuda-nvcc wheel",
                           "unset XLA_FLAGS", &c));
      out.push_back(std::move(x));
      continue;
    }
    // TensorFlow needs them only for XLA (jit_compile): a wrong XLA_FLAGS is reported above.
    if (!jax_gpu || (libdevice && ptxas)) continue;
    std::vector<std::string> missing;
    if (!libdevice) missing.push_back("libdevice.10.bc");
    if (!ptxas && jax_gpu) missing.push_back("ptxas");
    Finding x =
        make_finding(FindingId::xla_libdevice_ptxas_not_found, Severity::warning,
                     who + " in " + env_name(e) + ": XLA will not find " + join(missing, " or ") +
                         " (no CUDA toolkit, conda cuda-nvcc or nvidia-cuda-nvcc wheel has it)");
    x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
    for (const auto& d : e.xla_dirs) {
      x.evidence.push_back(ev(d.dir + ": libdevice " + (d.libdevice ? "yes" : "no") + ", ptxas " +
                                  (d.ptxas ? "yes" : "no"),
                              d.via));
    }
    if (e.xla_dirs.empty()) {
      x.evidence.push_back(
          ev("searched site-packages/nvidia/cuda_nvcc, CUDA_HOME, "
             "/usr/local/cuda",
             e.prefix));
    }
    std::string major = "12";
    if (jax_gpu && jax->cuda) major = *jax->cuda;
    if (!jax_gpu && tf->cuda) {
      major = std::to_string(Version::parse(*tf->cuda).value_or(Version{12}).major());
    }
    x.fix.push_back(step("install the CUDA compiler wheel XLA looks for",
                         pip(e) + " install nvidia-cuda-nvcc-cu" + major, &c));
    out.push_back(std::move(x));
  }
}

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check jax_cpu_only_entry{"jax_cpu_only",
                                      "a CPU-only jaxlib",
                                      jax_cpu_only,
                                      {FindingId::jax_cpu_only_jaxlib},
                                      fact_area::driver | fact_area::gpus | fact_area::python};
extern const Check jax_ld_library_path_entry{
    "jax_ld_library_path",
    "LD_LIBRARY_PATH over JAX's CUDA wheels",
    jax_ld_library_path,
    {FindingId::jax_ld_library_path_overrides_wheels},
    fact_area::cudnn | fact_area::env | fact_area::python | fact_area::toolkits};
extern const Check xla_cuda_files_entry{"xla_cuda_files",
                                        "libdevice and ptxas for XLA",
                                        xla_cuda_files,
                                        {FindingId::xla_libdevice_ptxas_not_found},
                                        fact_area::env | fact_area::python};

}  // namespace checks
}  // namespace dlenv
