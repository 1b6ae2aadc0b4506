// cuDNN copy checks: header against library, the CUDA major a copy was built for against the
// toolkit it sits in, and libraries of several releases in one directory.
#include <algorithm>
#include <cstdio>
#include <set>

#include "rules/checks.h"
#include "rules/rule_helpers.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using namespace rule_helpers;

// The KB rows of a cuDNN release built for `cuda_major`.
std::vector<CudnnBuild> builds_for(const Ctx& c, const CudnnCopy& k) {
  std::vector<CudnnBuild> out;
  const Fact<Version>& v = k.live_version ? k.live_version : k.library_version;
  if (!v || !k.cuda_major) return out;
  for (const auto& b : c.kb.cudnn_builds(*v)) {
    if (b.cuda_min.major() <= *k.cuda_major && *k.cuda_major <= b.cuda_max.major()) {
      out.push_back(b);
    }
  }
  return out;
}

}  // namespace

namespace checks {

using namespace rule_helpers;

void cudnn_header_mismatch(const Ctx& c, Findings& out) {
  for (const auto& k : c.f.cudnn) {
    const Fact<Version>& lib = k.live_version ? k.live_version : k.library_version;
    if (!lib || !k.header_version) continue;
    if (*lib == *k.header_version) continue;
    // A live answer is about the load of the directory: where the loader model finds a
    // framework mixing this wheel folder with another release, pip-cudnn-vs-system-cudnn-symbols
    // covers the directory and supersedes this finding (the live version came from the mixed
    // load; kb/findings.json, rules/resolve.h). A file's version is about the files.
    Finding x = make_finding(FindingId::cudnn_header_library_mismatch, Severity::warning,
                             "cuDNN header " + k.header_version->str() +
                                 " does not match library " + lib->str() + " in " + k.dir,
                             k.live_version ? path_subject(k.dir) : "files in " + k.dir);
    x.evidence.push_back(
        ev("header " + k.header_path + ": " + k.header_version->str(), k.header_version.source));
    x.evidence.push_back(ev("library: " + lib->str(), lib.source));
    x.fix.push_back(
        step("install the header and the libraries from one cuDNN release; code "
             "compiled against the header may call functions the library lacks"));
    out.push_back(std::move(x));
  }
}

void cudnn_vs_toolkit(const Ctx& c, Findings& out) {
  for (const auto& k : c.f.cudnn) {
    if (k.toolkit_root.empty() || !k.cuda_major) continue;
    const ToolkitFacts* t = nullptr;
    for (const auto& tk : c.f.toolkits) {
      if (tk.root == k.toolkit_root) t = &tk;
    }
    if (!t || !t->version || t->version->major() == *k.cuda_major) continue;
    Finding x =
        make_finding(FindingId::cudnn_toolkit_cuda_major_mismatch, Severity::error,
                     "cuDNN in " + k.dir + " was built for CUDA " + std::to_string(*k.cuda_major) +
                         " but sits in the CUDA " + t->version->str() + " toolkit");
    x.evidence.push_back(
        ev("cuDNN built for CUDA " + std::to_string(*k.cuda_major), k.cuda_major.source));
    x.evidence.push_back(
        ev("toolkit " + t->root + " is CUDA " + t->version->str(), t->version.source));
    x.fix.push_back(step("install the cuDNN archive built for CUDA " +
                         std::to_string(t->version->major()) + " (file name ..._cuda" +
                         std::to_string(t->version->major()) +
                         "-archive) into this toolkit, or move this copy to a CUDA " +
                         std::to_string(*k.cuda_major) + " toolkit"));
    out.push_back(std::move(x));
  }
}

void cudnn_mixed(const Ctx& c, Findings& out) {
  for (const auto& k : c.f.cudnn) {
    if (k.mixed_versions.empty()) continue;
    Finding x = make_finding(FindingId::cudnn_mixed_versions, Severity::error,
                             "cuDNN libraries of different versions are mixed in " + k.dir);
    x.evidence.push_back(ev("main library " + vstr(k.library_version), k.library_version.source));
    for (const auto& [file, v] : k.mixed_versions) {
      x.evidence.push_back(ev(file + " is " + v, path_join(k.dir, file)));
    }
    x.fix.push_back(step("remove the old files and install every libcudnn*.so* from one release",
                         "ls -l " + k.dir + "/libcudnn*"));
    out.push_back(std::move(x));
  }
}

void cudnn_old_cuda_new_gpu(const Ctx& c, Findings& out) {
  for (const auto& k : c.f.cudnn) {
    auto builds = builds_for(c, k);
    if (builds.empty()) continue;
    // The newest CUDA this copy can have been built with.
    Version cuda_max = builds.front().cuda_max;
    bool confirmed = true;
    for (const auto& b : builds) {
      if (cuda_max < b.cuda_max) cuda_max = b.cuda_max;
      confirmed &= b.ref.confirmed;
    }
    if (cuda_max.minor() >= 90) {
      // "12.x": the newest minor the arch table knows for that major.
      cuda_max = Version{cuda_max.major(), 9};
    }
    auto arch = c.kb.arch_support(cuda_max);
    if (!arch || arch->cuda.major() != cuda_max.major()) continue;
    for (const auto& g : c.f.gpus) {
      if (!g.compute_capability) continue;
      const Version& cc = *g.compute_capability;
      if (!(arch->max_cc < cc)) continue;
      const Fact<Version>& v = k.live_version ? k.live_version : k.library_version;
      Finding x =
          make_finding(FindingId::cudnn_execution_failed_old_cuda_on_new_gpu,
                       confirmed && arch->ref.confirmed ? Severity::error : Severity::warning,
                       "cuDNN " + v->str() + " for CUDA " + std::to_string(*k.cuda_major) + " in " +
                           k.dir + " has no kernels for GPU " + std::to_string(g.index) + " (" +
                           g.name.value.value_or("?") + ", compute capability " + cc.str() + ")");
      x.confirmed = confirmed && arch->ref.confirmed;
      x.evidence.push_back(ev("cuDNN " + v->str() + " built for CUDA " +
                                  std::to_string(*k.cuda_major) + " (newest: CUDA " +
                                  cuda_max.str() + ")",
                              k.cuda_major.source));
      x.evidence.push_back(ev("CUDA " + arch->cuda.str() + " targets compute capability " +
                                  arch->min_cc.str() + "–" + arch->max_cc.str(),
                              "knowledge base: " + arch->ref.source));
      x.evidence.push_back(
          ev("GPU compute capability " + cc.str() + " (" + c.kb.architecture_name(cc) + ")",
             g.compute_capability.source));
      x.fix.push_back(
          step("install a cuDNN (and framework) built for a CUDA that supports this "
               "GPU (see `dlenv plan`); convolutions fail with "
               "CUDNN_STATUS_EXECUTION_FAILED otherwise"));
      out.push_back(std::move(x));
    }
  }
}

void cudnn_not_initialized(const Ctx& c, Findings& out) {
  auto dv = c.f.driver.version();
  if (!dv || c.os != Os::linux) return;
  for (const auto& k : c.f.cudnn) {
    auto builds = builds_for(c, k);
    if (builds.empty()) continue;
    // The lowest driver floor among the builds for that CUDA major.
    std::optional<Version> floor;
    bool confirmed = true;
    for (const auto& b : builds) {
      if (!b.driver_linux_min) {
        floor.reset();
        break;
      }
      if (!floor || *b.driver_linux_min < *floor) floor = *b.driver_linux_min;
      confirmed &= b.ref.confirmed;
    }
    if (!floor || !(*dv < *floor)) continue;
    const Fact<Version>& v = k.live_version ? k.live_version : k.library_version;
    Finding x = make_finding(
        FindingId::cudnn_status_not_initialized, confirmed ? Severity::error : Severity::warning,
        "cuDNN " + v->str() + " in " + k.dir + " needs driver " + floor->str() +
            " or newer: cudnnCreate fails (CUDNN_STATUS_NOT_INITIALIZED)");
    x.confirmed = confirmed;
    x.evidence.push_back(ev("cuDNN " + v->str() + " built for CUDA " +
                                std::to_string(*k.cuda_major) + " needs driver >= " + floor->str(),
                            "knowledge base: " + builds.front().ref.source));
    x.evidence.push_back(ev("driver " + dv->str(), "driver"));
    x.fix.push_back(step("upgrade the driver to " + floor->str() +
                         " or newer, or use a cuDNN built for an older CUDA"));
    out.push_back(std::move(x));
  }
}

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check cudnn_header_mismatch_entry{"cudnn_header_mismatch",
                                               "a cuDNN header against its library",
                                               cudnn_header_mismatch,
                                               {FindingId::cudnn_header_library_mismatch},
                                               fact_area::cudnn};
extern const Check cudnn_vs_toolkit_entry{"cudnn_vs_toolkit",
                                          "a cuDNN copy's CUDA major against its toolkit's",
                                          cudnn_vs_toolkit,
                                          {FindingId::cudnn_toolkit_cuda_major_mismatch},
                                          fact_area::cudnn | fact_area::toolkits};
extern const Check cudnn_mixed_entry{"cudnn_mixed",
                                     "cuDNN libraries of several releases in one directory",
                                     cudnn_mixed,
                                     {FindingId::cudnn_mixed_versions},
                                     fact_area::cudnn};

extern const Check cudnn_old_cuda_new_gpu_entry{
    "cudnn_old_cuda_new_gpu",
    "a cuDNN build for an older CUDA on a new GPU",
    cudnn_old_cuda_new_gpu,
    {FindingId::cudnn_execution_failed_old_cuda_on_new_gpu},
    fact_area::cudnn | fact_area::gpus};
extern const Check cudnn_not_initialized_entry{"cudnn_not_initialized",
                                               "CUDNN_STATUS_NOT_INITIALIZED causes",
                                               cudnn_not_initialized,
                                               {FindingId::cudnn_status_not_initialized},
                                               fact_area::cudnn | fact_area::driver};

}  // namespace checks
}  // namespace dlenv
