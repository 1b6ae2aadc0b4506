// cuDNN copy checks: header against library, the CUDA major a copy was built for against the
// toolkit it sits in, and libraries of several releases in one directory.
#include <algorithm>
#include <cstdio>
#include <set>

#include "rules/checks.h"
#include "rules/rule_helpers.h"
#include "util/strings.h"

namespace dlenv {
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

// This file's entries of the check table (rules/check_table.cc).
const Check cudnn_header_mismatch_entry{"cudnn_header_mismatch",
                                        "a cuDNN header against its library",
                                        cudnn_header_mismatch,
                                        {FindingId::cudnn_header_library_mismatch},
                                        fact_area::cudnn};
const Check cudnn_vs_toolkit_entry{"cudnn_vs_toolkit",
                                   "a cuDNN copy's CUDA major against its toolkit's",
                                   cudnn_vs_toolkit,
                                   {FindingId::cudnn_toolkit_cuda_major_mismatch},
                                   fact_area::cudnn | fact_area::toolkits};
const Check cudnn_mixed_entry{"cudnn_mixed",
                              "cuDNN libraries of several releases in one directory",
                              cudnn_mixed,
                              {FindingId::cudnn_mixed_versions},
                              fact_area::cudnn};

}  // namespace checks
}  // namespace dlenv
