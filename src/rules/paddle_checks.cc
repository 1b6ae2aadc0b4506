// PaddlePaddle: the CPU package where a GPU is present, and the cuDNN its build loads.
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

std::string lib_dir_of(const std::string& path) {
  return path_dirname(path);
}

}  // namespace

namespace checks {

using namespace pyrules;
namespace py = pyrules;

void paddle_cpu(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    const auto* cpu = pkg(e, "paddlepaddle");
    const auto* gpu = pkg(e, "paddlepaddle-gpu");
    const auto* paddle = fw(e, "paddle");
    if (!paddle) continue;
    bool both = cpu && gpu;
    bool cpu_only = (cpu && !gpu) || (paddle->cuda_build.ok() && !*paddle->cuda_build);
    if (!both && !(cpu_only && gpu_present(c.f))) continue;
    Finding x =
        make_finding(FindingId::paddle_cpu_package_installed, Severity::error,
                     both ? "paddlepaddle (CPU) and paddlepaddle-gpu are both installed in " +
                                env_name(e) + ": one overwrites the other's paddle module"
                          : "the CPU build of PaddlePaddle is installed in " + env_name(e));
    x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
    if (cpu) x.evidence.push_back(pkg_ev(*cpu));
    if (gpu) x.evidence.push_back(pkg_ev(*gpu));
    if (paddle->cuda_build.ok()) {
      x.evidence.push_back(
          ev(std::string("paddle/version: with_gpu = ") + (*paddle->cuda_build ? "ON" : "OFF"),
             paddle->cuda_build.source));
    }
    auto dc = driver_cuda(c);
    std::string variant = dc && dc->cuda.major() >= 13 ? "cu130" : "cu126";
    x.fix.push_back(
        step("remove both packages", pip(e) + " uninstall -y paddlepaddle paddlepaddle-gpu", &c));
    x.fix.push_back(step("install only the GPU package from Paddle's index (" + variant + ")",
                         pip(e) +
                             " install paddlepaddle-gpu -i "
                             "https://www.paddlepaddle.org.cn/packages/stable/" +
                             variant + "/",
                         &c));
    out.push_back(std::move(x));
  }
}

// Linux only: the Windows variant (cudnn64_N.dll on PATH) is win-paddle-third-party-dso in
// windows_framework_checks.cc.
void paddle_cudnn(const Ctx& c, Findings& out) {
  if (!gpu_present(c.f) || c.os != Os::linux) return;
  const FindingId id = FindingId::paddle_cannot_load_cudnn;
  for (const auto& e : c.f.python) {
    const auto* p = fw(e, "paddle");
    if (!p || !p->cuda_build.ok() || !*p->cuda_build || p->needed.empty()) continue;
    auto built = p->cudnn ? Version::parse(*p->cudnn) : std::nullopt;
    const NeededLibrary& n = p->needed.front();
    auto have = Version::parse(n.version);
    std::string problem;
    Severity sev = Severity::error;
    if (n.resolved.empty()) {
      problem = "cannot load cuDNN: " + n.name + " is not found";
    } else if (built && have && have->major() != built->major()) {
      problem = "would load cuDNN " + have->str() + " (" + n.resolved + "), but it is built for " +
                "cuDNN " + built->str();
    } else if (built && have && have->truncated(2) < built->truncated(2)) {
      problem = "loads cuDNN " + have->str() + ", older than the cuDNN " + built->str() +
                " it was built with";
      sev = Severity::warning;
    } else {
      continue;
    }
    Finding x =
        make_finding(id, sev, "paddle " + p->version + " in " + env_name(e) + " " + problem);
    if (const auto* pk = pkg(e, p->package)) x.evidence.push_back(pkg_ev(*pk));
    if (p->cudnn) {
      x.evidence.push_back(
          ev("built for CUDA " + (p->cuda ? *p->cuda : std::string("?")) + ", cuDNN " + *p->cudnn,
             p->cudnn.source));
    }
    x.evidence.push_back(ev("looks up " + n.name + ": " + p->gpu_library, p->cudnn.source));
    if (!n.resolved.empty()) {
      x.evidence.push_back(ev(
          n.name + " resolves to " + n.resolved + (n.version.empty() ? "" : " (" + n.version + ")"),
          n.via));
    }
    if (!n.wheel_copy.empty()) {
      x.evidence.push_back(ev("a pip wheel copy exists at " + n.wheel_copy +
                                  ", but paddle does not search the wheel directories for it",
                              n.wheel_copy));
    }
    std::vector<const CudnnCopy*> same_major;
    for (const auto& copy : c.f.cudnn) {
      x.evidence.push_back(
          ev("cuDNN " +
                 (copy.library_version ? copy.library_version->str() : std::to_string(copy.major)) +
                 " in " + copy.dir,
             copy.library));
      if (built && copy.major == built->major()) same_major.push_back(&copy);
    }
    std::string major = built ? std::to_string(built->major()) : "N";
    std::string cuda_major =
        p->cuda ? std::to_string(Version::parse(*p->cuda).value_or(Version{12}).major()) : "12";
    if (p->pip_cuda_libraries) {
      x.fix.push_back(step("install the cuDNN wheel this paddle build loads",
                           pip(e) + " install nvidia-cudnn-cu" + cuda_major +
                               "==" + (built ? built->str() + ".*" : "9.*"),
                           &c));
    } else {
      if (!same_major.empty()) {
        std::string d = same_major.front()->dir;
        x.fix.push_back(step(
            "give paddle the unversioned name it opens, next to the cuDNN " + major + " in " + d,
            "sudo ln -sf libcudnn.so." + major + " " + d + "/libcudnn.so && sudo ldconfig", &c));
      } else if (!n.wheel_copy.empty()) {
        std::string d = lib_dir_of(n.wheel_copy);
        x.fix.push_back(
            step("link the wheel's cuDNN under the name paddle opens and put it on "
                 "the loader path",
                 "ln -sf libcudnn.so." + major + " " + d +
                     "/libcudnn.so && export LD_LIBRARY_PATH=" + d + ":$LD_LIBRARY_PATH",
                 &c));
      }
      x.fix.push_back(step("or install cuDNN " + major + " for CUDA " + cuda_major +
                               " with its development package (it provides libcudnn.so)",
                           major == "8"
                               ? "sudo apt-get install libcudnn8 libcudnn8-dev"
                               : "sudo apt-get install libcudnn" + major + "-cuda-" + cuda_major +
                                     " libcudnn" + major + "-dev-cuda-" + cuda_major,
                           &c));
    }
    out.push_back(std::move(x));
  }
}

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check paddle_cpu_entry{"paddle_cpu",
                                    "the CPU paddlepaddle package",
                                    paddle_cpu,
                                    {FindingId::paddle_cpu_package_installed},
                                    fact_area::driver | fact_area::gpus | fact_area::python};
extern const Check paddle_cudnn_entry{
    "paddle_cudnn",
    "the cuDNN paddle's build loads",
    paddle_cudnn,
    {FindingId::paddle_cannot_load_cudnn},
    fact_area::cudnn | fact_area::driver | fact_area::gpus | fact_area::python};

}  // namespace checks
}  // namespace dlenv
