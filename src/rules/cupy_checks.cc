// CuPy: several CuPy packages in one environment, and the CUDA major of the one installed.
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
namespace checks {

using namespace pyrules;
namespace py = pyrules;

void cupy_multiple(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    const auto* cp = fw(e, "cupy");
    if (!cp || cp->cuda_packages.size() < 2) continue;
    Finding x = make_finding(FindingId::cupy_multiple_packages, Severity::error,
                             "several CuPy packages are installed in " + env_name(e) + ": " +
                                 join(cp->cuda_packages, ", "));
    for (const auto& p : e.packages) {
      if (p.name == "cupy" || starts_with(p.name, "cupy-cuda")) x.evidence.push_back(pkg_ev(p));
    }
    auto dc = driver_cuda(c);
    std::string keep = dc && dc->cuda.major() >= 13 ? "cupy-cuda13x" : "cupy-cuda12x";
    std::string all;
    for (const auto& p : e.packages) {
      if (p.name == "cupy" || starts_with(p.name, "cupy-cuda")) all += " " + p.name;
    }
    x.fix.push_back(
        step("uninstall all of them, then install exactly one for the driver's CUDA major",
             pip(e) + " uninstall -y" + all + " && " + pip(e) + " install " + keep, &c));
    out.push_back(std::move(x));
  }
}

void cupy_major(const Ctx& c, Findings& out) {
  auto dc = driver_cuda(c);
  for (const auto& e : c.f.python) {
    const auto* cp = fw(e, "cupy");
    if (!cp || !cp->cuda) continue;
    auto major = parse_int(*cp->cuda);
    if (!major) continue;
    int m = static_cast<int>(*major);
    bool driver_short = dc && dc->cuda.major() < m;
    bool runtime = false;
    std::vector<Evidence> have;
    for (const auto& l : e.cuda_libs) {
      if (l.library == "cudart") {
        runtime |= l.major == m;
        have.push_back(ev("wheel libcudart.so." + std::to_string(l.major), l.path));
      }
    }
    for (const auto& t : c.f.toolkits) {
      if (!t.version) continue;
      runtime |= t.version->major() == m;
      have.push_back(ev("CUDA toolkit " + t.version->str() + " at " + t.root, t.version.source));
    }
    if (!driver_short && runtime) continue;
    if (!driver_short && !gpu_present(c.f)) continue;
    Finding x = make_finding(
        FindingId::cupy_cuda_major_mismatch, Severity::error,
        driver_short ? cp->package + " in " + env_name(e) + " needs CUDA " + std::to_string(m) +
                           ", driver " + dc->driver.str() + " supports only CUDA " + dc->cuda.str()
                     : cp->package + " in " + env_name(e) + " needs a CUDA " + std::to_string(m) +
                           " runtime and none is installed");
    x.evidence.push_back(
        ev(cp->package + " " + cp->version + " is built for CUDA " + std::to_string(m) + ".x",
           cp->cuda.source));
    if (driver_short)
      x.evidence.push_back(ev("driver supports CUDA " + dc->cuda.str(), dc->source));
    for (auto& h : have) x.evidence.push_back(std::move(h));
    if (have.empty()) {
      x.evidence.push_back(ev("no CUDA toolkit and no nvidia-cuda-runtime wheel found", e.prefix));
    }
    if (driver_short) {
      std::string fit = "cupy-cuda" + std::to_string(dc->cuda.major()) + "x";
      x.fix.push_back(
          step("install the CuPy package of the driver's CUDA major",
               pip(e) + " uninstall -y " + cp->package + " && " + pip(e) + " install " + fit, &c));
    } else {
      x.fix.push_back(step("install the CUDA " + std::to_string(m) + " runtime libraries as wheels",
                           pip(e) + " install \"" + cp->package + "[ctk]\"", &c));
      x.fix.push_back(step("or install a CUDA " + std::to_string(m) +
                           ".x toolkit and put its lib directory on the loader path"));
    }
    out.push_back(std::move(x));
  }
}

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check cupy_multiple_entry{"cupy_multiple",
                                       "several CuPy packages",
                                       cupy_multiple,
                                       {FindingId::cupy_multiple_packages},
                                       fact_area::driver | fact_area::python};
extern const Check cupy_major_entry{
    "cupy_major",
    "CuPy's CUDA major against the driver",
    cupy_major,
    {FindingId::cupy_cuda_major_mismatch},
    fact_area::driver | fact_area::gpus | fact_area::python | fact_area::toolkits};

}  // namespace checks
}  // namespace dlenv
