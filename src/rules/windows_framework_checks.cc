// Frameworks that use the system CUDA/cuDNN through the Windows DLL search: TensorFlow <= 2.10
// (cudart64_*.dll, cudnn64_8.dll), paddle's third-party DLLs, ctranslate2's cuDNN 9.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "rules/checks.h"
#include "rules/loader_coverage.h"
#include "rules/python_common.h"
#include "rules/windows_common.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using namespace windows_common;
using json = nlohmann::json;

struct TfNeeds {
  std::string tf;
  std::string cuda;   // "11.2"
  std::string cudnn;  // "8.1"
  std::string source;
};

std::optional<TfNeeds> tf_needs(const Kb& kb, const Version& tf) {
  auto text = kb.file_text("tensorflow.json");
  if (!text) return std::nullopt;
  json j = json::parse(*text, nullptr, false);
  if (!j.is_object() || !j.contains("windows_native_gpu")) return std::nullopt;
  for (const auto& r : j["windows_native_gpu"]) {
    auto v = Version::parse(r.value("tf_version", ""));
    if (!v || !(v->truncated(2) == tf.truncated(2))) continue;
    return TfNeeds{r.value("tf_version", ""), r.value("cuda", ""), r.value("cudnn", ""),
                   r.value("source", "")};
  }
  return std::nullopt;
}

std::string cudart_dll(const Kb& kb, const Version& cuda) {
  if (cuda.major() >= 11) {
    if (auto n = kb.library_file_name("cudart", cuda.major(), Os::windows)) return *n;
  }
  return "cudart64_" + std::to_string(cuda.major()) + std::to_string(cuda.minor()) + ".dll";
}

// Every file name matching "<stem>NN.dll" on the search path ("cudart64_" -> cudart64_12.dll...).
std::vector<std::pair<std::string, std::string>> family_on_path(const WindowsFacts& w,
                                                                std::string_view stem) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& r : w.resolved) {
    if (starts_with(r.name, stem) && !r.paths.empty()) out.push_back({r.name, r.paths.front()});
  }
  return out;
}

}  // namespace

namespace checks {

using namespace windows_common;
using json = nlohmann::json;

void win_tf_libraries(const Ctx& c, Findings& out) {
  const WindowsFacts* w = win(c);
  if (!w) return;
  for (const auto& e : c.f.python) {
    const auto* tf = pyrules::fw(e, "tensorflow");
    if (!tf) continue;
    auto v = Version::parse(tf->version);
    if (!v || !(*v < Version{2, 11})) continue;  // 2.11+: win-tf-gpu-after-2.10
    if (tf->cuda_build && !*tf->cuda_build) continue;
    auto needs = tf_needs(c.kb, *v);
    if (!needs) continue;
    auto cuda = Version::parse(needs->cuda);
    auto cudnn = Version::parse(needs->cudnn);
    if (!cuda || !cudnn) continue;
    std::string cudart = cudart_dll(c.kb, *cuda);
    if (findable(c, *w, e, cudart).empty()) {
      Finding x =
          make_finding(FindingId::win_tf_cudart_wrong_cuda_major, Severity::error,
                       "TensorFlow " + tf->version + " in " + win_env_name(e) + " loads " + cudart +
                           " (CUDA " + needs->cuda + "), which is not on the DLL search path");
      x.evidence.push_back(win_pkg_ev(e, *tf));
      x.evidence.push_back(win_ev("TensorFlow " + needs->tf + " for Windows was built with CUDA " +
                                      needs->cuda + " and cuDNN " + needs->cudnn,
                                  needs->source));
      for (const auto& [name, path] : family_on_path(*w, "cudart64_")) {
        x.evidence.push_back(win_ev(name + " is on the search path (another CUDA)", path));
      }
      for (const auto& [k, val] : w->cuda_path_vars) x.evidence.push_back(win_ev(k + "=" + val, k));
      x.fix.push_back(ps("install CUDA " + needs->cuda +
                             " (or a TensorFlow matching the CUDA "
                             "you have) and put its bin folder on PATH, then open a new terminal",
                         add_to_user_path("C:\\Program Files\\NVIDIA GPU Computing "
                                          "Toolkit\\CUDA\\v" +
                                          needs->cuda + "\\bin")));
      out.push_back(std::move(x));
    }
    std::string cudnn_name = "cudnn64_" + std::to_string(cudnn->major()) + ".dll";
    if (findable(c, *w, e, cudnn_name).empty()) {
      Finding x = make_finding(FindingId::win_tf_cudnn64_dll_not_found, Severity::error,
                               "TensorFlow " + tf->version + " in " + win_env_name(e) + " loads " +
                                   cudnn_name + ", which is not on the DLL search path");
      x.evidence.push_back(win_pkg_ev(e, *tf));
      x.evidence.push_back(win_ev("TensorFlow " + needs->tf + " for Windows needs cuDNN " +
                                      needs->cudnn + " (" + cudnn_name + ")",
                                  needs->source));
      std::string elsewhere;
      for (const auto& k : c.f.cudnn) {
        bool on_path =
            !on_search_path(*w, path_basename(k.library)).empty() &&
            to_lower(on_search_path(*w, path_basename(k.library)).front()) == to_lower(k.library);
        if (k.major == cudnn->major() && !on_path && elsewhere.empty()) elsewhere = k.dir;
        x.evidence.push_back(win_ev("cuDNN " + std::to_string(k.major) + " in " + winpath(k.dir) +
                                        (on_path ? " (on the search path)" : " (not on PATH)"),
                                    k.library));
      }
      if (!elsewhere.empty()) {
        x.fix.push_back(ps("add the folder that has it to PATH, then open a new terminal",
                           add_to_user_path(elsewhere)));
      } else {
        x.fix.push_back(ps("download cuDNN " + needs->cudnn + " for CUDA " + needs->cuda +
                           " and copy its bin, include and lib folders into the CUDA " +
                           needs->cuda +
                           " toolkit folder (whose bin is on PATH); then open a new terminal"));
      }
      out.push_back(std::move(x));
    }
  }
}

void win_paddle_dso(const Ctx& c, Findings& out) {
  const WindowsFacts* w = win(c);
  if (!w) return;
  for (const auto& e : c.f.python) {
    const auto* pd = pyrules::fw(e, "paddle");
    if (!pd || !pd->cudnn) continue;
    auto want = Version::parse(*pd->cudnn);
    if (!want) continue;
    std::string name = "cudnn64_" + std::to_string(want->major()) + ".dll";
    auto found = findable(c, *w, e, name);
    auto paddle_libs = in_env(*w, e, name);
    Finding x = make_finding(FindingId::win_paddle_third_party_dso, Severity::error, "");
    x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
    x.evidence.push_back(win_pkg_ev(e, *pd));
    x.evidence.push_back(win_ev("built with cuDNN " + *pd->cudnn, pd->cudnn.source));
    if (found.empty() && paddle_libs.empty()) {
      x.title = "paddle " + pd->version + " in " + win_env_name(e) + " loads " + name +
                ", which is not on the DLL search path (error code 126)";
      x.fix.push_back(ps("install cuDNN " + want->truncated(2).str() +
                         " for the CUDA paddle was built with and put its bin folder on PATH, or "
                         "install the paddle wheel whose postXXX tag matches your CUDA/cuDNN"));
      out.push_back(std::move(x));
      continue;
    }
    // The copy that loads: is it complete, and not older than the build?
    const CudnnCopy* copy = nullptr;
    for (const auto& k : c.f.cudnn) {
      if (!found.empty() && to_lower(k.dir) == to_lower(path_dirname(found.front())) &&
          k.major == want->major()) {
        copy = &k;
      }
    }
    if (!copy) continue;
    auto have = copy_version(*copy);
    if (!copy->sublibraries_missing.empty()) {
      x.title = "paddle " + pd->version + " in " + win_env_name(e) +
                " loads the incomplete cuDNN in " + winpath(copy->dir);
      x.evidence.push_back(win_ev("missing: " + join(copy->sublibraries_missing, ", "), copy->dir));
      x.fix.push_back(
          ps("copy the complete bin folder of the cuDNN archive into " + winpath(copy->dir)));
    } else if (have && have->truncated(2) < want->truncated(2)) {
      x.severity = Severity::warning;
      x.title = "paddle " + pd->version + " in " + win_env_name(e) + " was built with cuDNN " +
                want->truncated(2).str() + " but finds cuDNN " + have->str();
      x.evidence.push_back(
          win_ev("cuDNN " + have->str() + " first on the search path", copy->library));
      x.fix.push_back(ps("install cuDNN " + want->truncated(2).str() +
                         " (or newer within 8.x) and put it first on PATH"));
    } else {
      continue;
    }
    out.push_back(std::move(x));
  }
}

void win_ctranslate2_cudnn9(const Ctx& c, Findings& out) {
  const WindowsFacts* w = win(c);
  if (!w) return;
  for (const auto& e : c.f.python) {
    const auto* ct = pyrules::fw(e, "ctranslate2");
    if (!ct) continue;
    auto v = Version::parse(ct->version);
    if (!v || *v < Version{4, 5}) continue;
    std::vector<std::string> where;
    for (const char* n : {"cudnn_ops64_9.dll", "cudnn64_9.dll"}) {
      for (const auto& p : in_env(*w, e, n)) where.push_back(p);
      for (const auto& p : on_search_path(*w, n)) where.push_back(p);
    }
    if (!where.empty()) continue;
    Finding x = make_finding(FindingId::win_cudnn9_required_by_ctranslate2, Severity::error,
                             "ctranslate2 " + ct->version + " in " + win_env_name(e) +
                                 " needs cuDNN 9 (cudnn_ops64_9.dll), which it cannot find");
    x.evidence.push_back(win_pkg_ev(e, *ct));
    x.evidence.push_back(win_ev("ctranslate2 4.5 and later link cuDNN 9", "failure catalog A17"));
    for (const auto& [name, paths] : w->python_dlls) {
      if (!starts_with(name, "cudnn") || !ends_with(name, "64_8.dll")) continue;
      for (const auto& p : paths) {
        if (starts_with_ci(p, e.prefix + "/") && name == "cudnn64_8.dll") {
          x.evidence.push_back(win_ev("cuDNN 8 only (" + name + ")", p));
        }
      }
    }
    if (const auto* torch = pyrules::fw(e, "torch")) {
      x.evidence.push_back(win_pkg_ev(e, *torch));
    }
    x.fix.push_back(
        ps("upgrade torch to 2.4 or later (it bundles cuDNN 9)",
           win_pip(e) +
               " install -U \"torch>=2.4\" --index-url https://download.pytorch.org/whl/cu124"));
    x.fix.push_back(ps("or stay on cuDNN 8 with ctranslate2 4.4.0",
                       win_pip(e) + " install ctranslate2==4.4.0"));
    out.push_back(std::move(x));
  }
}

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check win_tf_libraries_entry{
    "win_tf_libraries",
    "the CUDA DLLs TensorFlow loads on Windows",
    win_tf_libraries,
    {FindingId::win_tf_cudart_wrong_cuda_major, FindingId::win_tf_cudnn64_dll_not_found},
    fact_area::cudnn | fact_area::python | fact_area::windows};
extern const Check win_paddle_dso_entry{"win_paddle_dso",
                                        "paddle's third-party DLLs",
                                        win_paddle_dso,
                                        {FindingId::win_paddle_third_party_dso},
                                        fact_area::cudnn | fact_area::python | fact_area::windows};
extern const Check win_ctranslate2_cudnn9_entry{"win_ctranslate2_cudnn9",
                                                "ctranslate2's cuDNN 9 on Windows",
                                                win_ctranslate2_cudnn9,
                                                {FindingId::win_cudnn9_required_by_ctranslate2},
                                                fact_area::python | fact_area::windows};

}  // namespace checks
}  // namespace dlenv
