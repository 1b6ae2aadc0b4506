// ONNX Runtime: the CPU and GPU packages together, and the CUDA libraries its CUDA execution
// provider needs.
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

// The provider library's own dependency list, resolved by the loader model: the exact
// sonames (DLL names) that are missing, and the wheel copies the loader does not search.
void ort_provider_needed(const Ctx& c, const PythonEnv& e, const PythonPackage& ort,
                         const FrameworkFacts& f, Findings& out) {
  std::vector<const NeededLibrary*> missing;
  for (const auto& n : f.needed) {
    if (n.resolved.empty()) missing.push_back(&n);
  }
  if (missing.empty()) return;
  std::vector<std::string> names;
  std::set<std::string> wheel_dirs;
  bool all_in_wheels = true;
  for (const auto* n : missing) {
    names.push_back(n->name);
    if (n->wheel_copy.empty()) {
      all_in_wheels = false;
    } else {
      wheel_dirs.insert(path_dirname(n->wheel_copy));
    }
  }
  const bool win = c.os == Os::windows;
  Finding x = make_finding(
      FindingId::ort_cuda_provider_load_failure, Severity::error,
      "onnxruntime-gpu " + ort.version + " in " + env_name(e) +
          ": the CUDA provider cannot load, " + join(names, ", ") +
          (names.size() == 1 ? " is" : " are") + " not found" +
          (all_in_wheels ? " on the loader path (only in pip wheel directories)" : ""));
  x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
  x.evidence.push_back(pkg_ev(ort));
  for (const auto& n : f.needed) {
    if (!n.resolved.empty()) {
      x.evidence.push_back(ev(f.gpu_library + " needs " + n.name + ": " + n.resolved, n.via));
    } else if (!n.wheel_copy.empty()) {
      x.evidence.push_back(
          ev(f.gpu_library + " needs " + n.name +
                 ": not on the loader path; a pip wheel copy is at " + n.wheel_copy,
             win ? "PE imports of " + f.gpu_library : "DT_NEEDED of " + f.gpu_library));
    } else {
      x.evidence.push_back(
          ev(f.gpu_library + " needs " + n.name + ": not found anywhere",
             win ? "PE imports of " + f.gpu_library : "DT_NEEDED of " + f.gpu_library));
    }
  }
  if (!wheel_dirs.empty()) {
    std::vector<std::string> dirs(wheel_dirs.begin(), wheel_dirs.end());
    x.fix.push_back(
        step("let ONNX Runtime preload the NVIDIA wheels before creating the "
             "session (onnxruntime >= 1.21), or import torch first",
             env_name(e) + " -c \"import onnxruntime as ort; ort.preload_dlls(); "
                           "print(ort.get_available_providers())\"",
             &c));
    x.fix.push_back(step("or put the wheel directories on the loader path",
                         win ? "$env:PATH = \"" + join(dirs, ";") + ";$env:PATH\""
                             : "export LD_LIBRARY_PATH=" + join(dirs, ":") + ":$LD_LIBRARY_PATH",
                         &c));
  }
  if (!all_in_wheels) {
    bool cudnn8 = false, cuda11 = false;
    for (const auto* n : missing) {
      cudnn8 |=
          contains(n->name, "cudnn") && (ends_with(n->name, ".so.8") || contains(n->name, "64_8"));
      cuda11 |= ends_with(n->name, ".so.11") || contains(n->name, "64_11");
    }
    if (cudnn8 || cuda11) {
      x.fix.push_back(
          step("this onnxruntime-gpu is built for CUDA 11 / cuDNN 8: install those, "
               "or upgrade to onnxruntime-gpu >= 1.19 (CUDA 12, cuDNN 9)",
               pip(e) + " install -U \"onnxruntime-gpu[cuda,cudnn]\"", &c));
    } else {
      x.fix.push_back(step("install the CUDA and cuDNN wheels it links against",
                           pip(e) + " install \"onnxruntime-gpu[cuda,cudnn]==" + ort.version + "\"",
                           &c));
    }
  }
  out.push_back(std::move(x));
}

}  // namespace

namespace checks {

using namespace pyrules;
namespace py = pyrules;

void ort_both(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    const auto* cpu = pkg(e, "onnxruntime");
    const auto* gpu = pkg(e, "onnxruntime-gpu");
    if (!cpu || !gpu) continue;
    Finding x = make_finding(FindingId::ort_cpu_and_gpu_packages_coexist, Severity::error,
                             "onnxruntime and onnxruntime-gpu are both installed in " +
                                 env_name(e) + ": the CPU package can shadow the CUDA provider");
    x.evidence.push_back(pkg_ev(*cpu));
    x.evidence.push_back(pkg_ev(*gpu));
    x.fix.push_back(step("uninstall both, then install only the GPU package",
                         pip(e) + " uninstall -y onnxruntime onnxruntime-gpu && " + pip(e) +
                             " install onnxruntime-gpu==" + gpu->version,
                         &c));
    out.push_back(std::move(x));
  }
}

void ort_cuda_libraries(const Ctx& c, Findings& out) {
  if (!gpu_present(c.f)) return;
  for (const auto& e : c.f.python) {
    const auto* ort = pkg(e, "onnxruntime-gpu");
    if (!ort) continue;
    auto v = Version::parse(ort->version);
    if (!v) continue;
    if (const auto* f = fw(e, "onnxruntime"); f && !f->gpu_library.empty() && !f->needed.empty()) {
      ort_provider_needed(c, e, *ort, *f, out);
      continue;
    }
    bool new_ort = !(*v < Version{1, 19});
    int cuda = new_ort ? 12 : 11;
    int cudnn = new_ort ? 9 : 8;
    Available a = available_libs(c, e);
    std::vector<std::string> missing;
    if (!a.cudart.contains(cuda)) missing.push_back("CUDA " + std::to_string(cuda) + " runtime");
    if (!a.cudnn.contains(cudnn)) missing.push_back("cuDNN " + std::to_string(cudnn));
    if (missing.empty()) continue;
    Finding x =
        make_finding(FindingId::ort_cuda_provider_load_failure, Severity::warning,
                     "onnxruntime-gpu " + ort->version + " in " + env_name(e) + " needs " +
                         join(missing, " and ") + ", not found: the CUDA provider will not load");
    x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
    x.evidence.push_back(pkg_ev(*ort));
    x.evidence.push_back(ev("onnxruntime-gpu " + std::string(new_ort ? ">= 1.19" : "< 1.19") +
                                " (PyPI) is built for CUDA " + std::to_string(cuda) +
                                ".x and cuDNN " + std::to_string(cudnn) + ".x",
                            "https://onnxruntime.ai/docs/execution-providers/"
                            "CUDA-ExecutionProvider.html#requirements"));
    for (auto& h : a.evidence) x.evidence.push_back(std::move(h));
    if (new_ort) {
      x.fix.push_back(
          step("install the CUDA 12 / cuDNN 9 wheels it can preload",
               pip(e) + " install \"onnxruntime-gpu[cuda,cudnn]==" + ort->version + "\"", &c));
    } else {
      x.fix.push_back(
          step("install CUDA 11.8 and cuDNN 8 and put their lib directories on the "
               "loader path, or upgrade to onnxruntime-gpu >= 1.19 (CUDA 12, cuDNN 9)",
               pip(e) + " install -U onnxruntime-gpu", &c));
    }
    out.push_back(std::move(x));
  }
}

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check ort_both_entry{"ort_both",
                                  "onnxruntime and onnxruntime-gpu together",
                                  ort_both,
                                  {FindingId::ort_cpu_and_gpu_packages_coexist},
                                  fact_area::python};
extern const Check ort_cuda_libraries_entry{"ort_cuda_libraries",
                                            "the CUDA libraries ONNX Runtime's CUDA provider needs",
                                            ort_cuda_libraries,
                                            {FindingId::ort_cuda_provider_load_failure},
                                            fact_area::cudnn | fact_area::driver | fact_area::gpus |
                                                fact_area::python | fact_area::toolkits |
                                                fact_area::windows};

}  // namespace checks
}  // namespace dlenv
