// Is each cuDNN copy complete where it is loaded: its sub-libraries (cuDNN 8's six, cuDNN 9's
// engines), the CUDA DLLs they import, and zlibwapi.dll for cuDNN 8.3 to 8.9 on Windows.
//   - Linux: a sub-library counts as missing when the loader model cannot resolve it from the
//     main library (RUNPATH $ORIGIN, LD_LIBRARY_PATH, ld.so.cache, default dirs);
//   - Windows, copies a modelled load takes (cudnn64_8.dll by name with the machine's PATH, or
//     through a framework's extension module): what the Windows loader model cannot resolve;
//   - Windows, the other copies: what their folder and the DLL search path hold.
#include <algorithm>
#include <map>
#include <set>

#include "rules/checks.h"
#include "rules/loader_coverage.h"
#include "rules/rule_helpers.h"
#include "rules/windows_common.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using namespace rule_helpers;
using namespace windows_common;

// For each cuDNN 8 copy some context loads (cudnn64_8.dll by name with the machine's PATH,
// or through a framework's extension module): the companions it loads at run time -- its
// sub-libraries, and zlibwapi.dll for 8.3 to 8.9 -- and the DLLs they import, resolved with
// the loader's search order. `zlib` picks zlibwapi.dll, else everything else. Companions
// resolving to another cuDNN release are win-cudnn-mixed-versions-127's; DLLs only on PATH
// for a Python extension load are win-py38-path-not-searched's.
void win_cudnn8_unresolved(const Ctx& c, Findings& out, bool zlib) {
  if (c.os != Os::windows) return;
  struct Miss {
    const ResolvedLib* lib;
    const LoadContext* ctx;
  };
  std::map<std::string, std::vector<Miss>> by_copy;  // main DLL (lower) -> what is missing
  std::map<std::string, const ResolvedLib*> main_of;
  for (const auto& ctx : c.f.loader.contexts) {
    if (ctx.kind != "by-name" && ctx.kind != "python-extension") continue;
    const ResolvedLib* m = cudnn8_dll_loaded_by(ctx);
    if (!m) continue;
    // zlibwapi.dll is cuDNN 8.3 to 8.9's (the catalog entry's range).
    if (auto v = Version::parse(m->version); zlib && (!v || *v < Version{8, 3})) continue;
    const std::string key = to_lower(m->path);
    main_of.emplace(key, m);
    for (const auto& l : ctx.libs) {
      if (!l.missing || !l.path_copy.empty()) continue;
      const std::string name = to_lower(path_basename(l.name));
      const bool z = name == "zlibwapi.dll";
      if (z != zlib) continue;
      // Only what cuDNN's DLLs need (their companions and imports).
      if (!is_cudnn(l.requester) && !(z && l.companion)) continue;
      auto& v = by_copy[key];
      if (std::none_of(v.begin(), v.end(),
                       [&](const Miss& x) { return to_lower(x.lib->name) == to_lower(l.name); })) {
        v.push_back({&l, &ctx});
      }
    }
  }
  for (const auto& [key, misses] : by_copy) {
    if (misses.empty()) continue;
    const ResolvedLib* m = main_of[key];
    const std::string dir = winpath(path_dirname(m->path));
    std::vector<std::string> names;
    for (const auto& x : misses) names.push_back(x.lib->name);
    Finding x = make_finding(
        zlib ? FindingId::win_zlibwapi_missing : FindingId::win_cudnn8_sublibrary_missing,
        Severity::error,
        "cuDNN " + m->version + " in " + dir + " cannot load " + join(names, ", ") +
            (zlib ? " (cuDNN 8.3 to 8.9 load it at run time)"
                  : ": the loader finds " + std::string(names.size() == 1 ? "it" : "them") +
                        " nowhere on its search path (LoadLibrary error 126 at the "
                        "first convolution)"));
    std::set<std::string> have_copy;
    std::string first_copy;
    for (const auto& [lib, ctx] : misses) {
      x.evidence.push_back(ev(lib->name + ": " +
                                  (lib->companion ? "loaded at run time by " : "imported by ") +
                                  lib->requester + "; looked for in " +
                                  (lib->searched.empty() ? std::string("the standard search order")
                                                         : join(lib->searched, "; ")),
                              "Windows loader model"));
      // Where a copy exists that this search does not reach.
      std::vector<std::string> copies;
      if (zlib && c.f.windows) {
        for (const auto& zc : c.f.windows->zlibwapi) copies.push_back(zc.path);
      } else {
        for (const auto& k : c.f.cudnn) {
          for (const auto& p : k.sublibraries_present) {
            if (to_lower(p) == to_lower(lib->name)) copies.push_back(path_join(k.dir, p));
          }
        }
      }
      for (const auto& cp : copies) {
        if (!have_copy.insert(to_lower(cp)).second) continue;
        if (first_copy.empty()) first_copy = cp;
        x.evidence.push_back(
            ev("a copy exists at " + winpath(cp) + ", off this search path", winpath(cp)));
      }
    }
    x.evidence.push_back(ev("cudnn64_8.dll " + m->version + " taken from " + dir + " (" + m->rule +
                                ") by " + misses.front().ctx->label,
                            winpath(m->path)));
    if (zlib) {
      x.fix.push_back(
          ps("put a 64-bit zlibwapi.dll (ZLIB 1.2.3 WINAPI build, as NVIDIA's cuDNN 8 install "
             "guide describes) into " +
                 dir + ", or move to cuDNN 9, which does not need it",
             first_copy.empty() ? std::string()
                                : "Copy-Item '" + winpath(first_copy) + "' '" + dir + "'"));
    } else {
      x.fix.push_back(ps("copy every cudnn*64_8.dll from the bin folder of the cuDNN " +
                         m->version + " archive into " + dir +
                         " (cudnn64_8.dll loads the others by name, from its own folder or the "
                         "search path)"));
    }
    out.push_back(std::move(x));
  }
}

bool copy_on_search_path(const WindowsFacts& w, const CudnnCopy& k) {
  auto paths = on_search_path(w, path_basename(k.library));
  for (const auto& p : paths) {
    if (to_lower(path_dirname(p)) == to_lower(k.dir)) return true;
  }
  return false;
}

// The CUDA DLLs that copy `k`'s DLLs import and the search path does not find.
std::vector<const WinMissingImport*> missing_imports_of(const WindowsFacts& w, const CudnnCopy& k) {
  std::vector<const WinMissingImport*> out;
  for (const auto& m : w.cudnn_missing_imports) {
    if (to_lower(path_dirname(m.dll)) == to_lower(k.dir)) out.push_back(&m);
  }
  return out;
}

}  // namespace

namespace checks {

using namespace rule_helpers;
using namespace windows_common;

// Linux cuDNN copies: a sub-library counts as missing when the loader model cannot
// resolve it from the main library (RUNPATH $ORIGIN, LD_LIBRARY_PATH, ld.so.cache,
// default dirs) -- a file in the directory that the main library cannot reach is as
// good as absent, and one resolved from elsewhere is there. Copies whose main library
// the model cannot read fall back to what the directory holds.
void loader_cudnn_incomplete(const RuleContext& c, std::vector<Finding>& out) {
  if (c.os != Os::linux) return;
  for (const auto& k : c.f.cudnn) {
    const LoadContext* model = nullptr;
    for (const auto& ctx : c.f.loader.contexts) {
      if (ctx.kind == "cudnn-copy" && ctx.root == k.library && ctx.error.empty() &&
          !ctx.libs.empty()) {
        model = &ctx;
      }
    }
    std::vector<std::string> missing, unreachable, elsewhere;
    const std::string main = path_basename(k.library);
    if (model) {
      for (const auto& want : c.kb.cudnn_library_files(k.major, Os::linux)) {
        if (want == main) continue;
        const ResolvedLib* got = nullptr;
        for (const auto& l : model->libs) {
          if (l.name == want) got = &l;
        }
        if (!got) continue;  // the model does not load it from this main library
        if (got->path.empty()) {
          bool here = std::find(k.sublibraries_present.begin(), k.sublibraries_present.end(),
                                want) != k.sublibraries_present.end();
          (here ? unreachable : missing).push_back(want);
        } else if (path_dirname(got->path) != k.dir) {
          elsewhere.push_back(want + " from " + got->path + " (" + got->rule + ")");
        }
      }
    } else {
      missing = k.sublibraries_missing;
    }
    if (missing.empty() && unreachable.empty()) continue;
    Finding x =
        make_finding(FindingId::cudnn_sublibrary_missing, Severity::error,
                     "cuDNN " + std::to_string(k.major) + " in " + k.dir +
                         " is incomplete: " + std::to_string(missing.size() + unreachable.size()) +
                         " of its libraries " +
                         (missing.empty() ? "cannot be found by the loader" : "are missing"));
    if (!missing.empty()) x.evidence.push_back(ev("missing: " + join(missing, ", "), k.dir));
    if (!unreachable.empty()) {
      x.evidence.push_back(
          ev("present in " + k.dir + " but not resolvable from " + main +
                 " (no DT_RUNPATH "
                 "$ORIGIN, and the directory is not on LD_LIBRARY_PATH or in ld.so.cache): " +
                 join(unreachable, ", "),
             model ? "Linux loader model of " + k.library : k.dir));
    }
    if (!elsewhere.empty()) {
      x.evidence.push_back(ev("resolved from elsewhere: " + join(elsewhere, ", "), k.library));
    }
    if (model == nullptr && !k.sublibraries_present.empty()) {
      x.evidence.push_back(ev("present: " + join(k.sublibraries_present, ", "), k.dir));
    }
    if (!missing.empty()) {
      x.fix.push_back(step("copy every lib/libcudnn*.so* file of the same cuDNN archive into " +
                           k.dir +
                           " (the main library loads the others at run time: the first convolution "
                           "fails otherwise)"));
    }
    if (!unreachable.empty()) {
      x.fix.push_back(
          step("make " + k.dir +
                   " searchable: add it to /etc/ld.so.conf.d and refresh "
                   "the cache (or to LD_LIBRARY_PATH)",
               "echo '" + k.dir + "' | sudo tee /etc/ld.so.conf.d/cudnn.conf && sudo ldconfig"));
    }
    out.push_back(std::move(x));
  }
}

void loader_win_cudnn8_sublibraries(const RuleContext& c, std::vector<Finding>& out) {
  win_cudnn8_unresolved(c, out, false);
}

void loader_win_zlibwapi(const RuleContext& c, std::vector<Finding>& out) {
  win_cudnn8_unresolved(c, out, true);
}

// A3: sub-libraries missing from the folder, or a CUDA DLL the cuDNN DLLs import
// (cuBLASLt, cuBLAS, cudart) that the DLL search path cannot find.
void win_cudnn_incomplete(const Ctx& c, Findings& out) {
  const WindowsFacts* w = win(c);
  if (!w) return;
  for (const auto& k : c.f.cudnn) {
    // cuDNN 8 copies a modelled load takes: decided by the loader model (this file, above).
    if (k.major == 8 && loader_loads_win_cudnn8(c.f, k.library)) continue;
    const auto imports = missing_imports_of(*w, k);
    if (k.sublibraries_missing.empty() && imports.empty()) continue;
    bool v8 = k.major == 8;
    std::string title = "cuDNN " + std::to_string(k.major) + " in " + winpath(k.dir);
    if (!k.sublibraries_missing.empty()) {
      title += " is incomplete: " + std::to_string(k.sublibraries_missing.size()) +
               " of its DLLs are missing";
    } else {
      std::set<std::string> names;
      for (const auto* m : imports) names.insert(m->needs);
      title += " cannot load: it needs " +
               join(std::vector<std::string>(names.begin(), names.end()), ", ") +
               ", which is not on the DLL search path (LoadLibrary error 126)";
    }
    Finding x = make_finding(
        v8 ? FindingId::win_cudnn8_sublibrary_missing : FindingId::cudnn_sublibrary_missing,
        Severity::error, title);
    if (!k.sublibraries_missing.empty()) {
      x.evidence.push_back(win_ev("missing: " + join(k.sublibraries_missing, ", "), k.dir));
    }
    if (!k.sublibraries_present.empty()) {
      x.evidence.push_back(win_ev("present: " + join(k.sublibraries_present, ", "), k.dir));
    }
    for (const auto* m : imports) {
      x.evidence.push_back(win_ev(path_basename(m->dll) + " imports " + m->needs +
                                      ": not beside it, not in System32 and not on PATH",
                                  m->dll));
    }
    if (copy_on_search_path(*w, k)) {
      x.evidence.push_back(win_ev("this folder is on the DLL search path", k.dir));
    }
    if (!k.sublibraries_missing.empty()) {
      x.fix.push_back(ps("copy every cudnn*64_" + std::to_string(k.major) +
                         ".dll from the bin folder of the same cuDNN archive into " +
                         winpath(k.dir) + " (cudnn64_" + std::to_string(k.major) +
                         ".dll loads the others by name at the first convolution)"));
    }
    std::set<std::string> fixed;
    for (const auto* m : imports) {
      if (!fixed.insert(m->needs).second) continue;
      if (!m->copies.empty()) {
        x.fix.push_back(ps("copy " + m->needs + " from " + winpath(m->copies.front()) + " into " +
                               winpath(k.dir) + ", or put " + winpath(m->copies.front()) +
                               " on PATH; then open a new terminal",
                           "Copy-Item '" + winpath(path_join(m->copies.front(), m->needs)) + "' '" +
                               winpath(k.dir) + "'"));
      } else {
        x.fix.push_back(ps(m->needs +
                           " is part of the CUDA toolkit this cuDNN was built for: "
                           "reinstall (or repair) that toolkit's cuBLAS / runtime so that " +
                           m->needs + " is in " + winpath(k.dir) +
                           " or in a folder on PATH; then open a new terminal"));
      }
    }
    if (v8) {
      x.fix.push_back(ps("cuDNN 8.3 and later also need zlibwapi.dll (x64) on PATH"));
    }
    out.push_back(std::move(x));
  }
}

void win_zlibwapi(const Ctx& c, Findings& out) {
  const WindowsFacts* w = win(c);
  if (!w) return;
  for (const auto& k : c.f.cudnn) {
    auto v = copy_version(k);
    if (k.major != 8 || !v || *v < Version{8, 3} || loader_loads_win_cudnn8(c.f, k.library))
      continue;
    bool used = copy_on_search_path(*w, k) || !k.toolkit_root.empty();
    if (!used) continue;
    auto on_path = on_search_path(*w, "zlibwapi.dll");
    bool beside = false;
    for (const auto& z : w->zlibwapi) beside |= to_lower(path_dirname(z.path)) == to_lower(k.dir);
    if (!on_path.empty() || beside) continue;
    Finding x = make_finding(FindingId::win_zlibwapi_missing, Severity::error,
                             "cuDNN " + v->str() + " in " + winpath(k.dir) +
                                 " needs zlibwapi.dll, which is not on the DLL search path");
    x.evidence.push_back(
        win_ev("cuDNN " + v->str() + " (8.3 to 8.9 load zlibwapi.dll)",
               k.library_version ? k.library_version.source : k.header_version.source));
    x.evidence.push_back(win_ev(
        "no zlibwapi.dll in System32, on PATH or beside " + path_basename(k.library), k.dir));
    for (const auto& z : w->zlibwapi) {
      x.evidence.push_back(win_ev("a copy in " + winpath(path_dirname(z.path)) + " (" +
                                      z.found_via + ") is not searched for other programs",
                                  z.path));
    }
    x.fix.push_back(
        ps("put a 64-bit zlibwapi.dll (ZLIB 1.2.3 WINAPI build, as NVIDIA's cuDNN 8 "
           "install guide describes) into " +
           winpath(k.dir) + ", or move to cuDNN 9, which does not need it"));
    out.push_back(std::move(x));
  }
}

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check loader_cudnn_incomplete_entry{
    "loader_cudnn_incomplete",
    "cuDNN sub-libraries the main library cannot reach (Linux)",
    loader_cudnn_incomplete,
    {FindingId::cudnn_sublibrary_missing},
    fact_area::cudnn | fact_area::loader};
extern const Check loader_win_cudnn8_sublibraries_entry{
    "loader_win_cudnn8_sublibraries",
    "cuDNN 8 sub-libraries a Windows load cannot resolve (loader model)",
    loader_win_cudnn8_sublibraries,
    {FindingId::win_cudnn8_sublibrary_missing},
    fact_area::cudnn | fact_area::loader | fact_area::windows};
extern const Check loader_win_zlibwapi_entry{
    "loader_win_zlibwapi",
    "zlibwapi.dll a Windows load of cuDNN 8.3-8.9 cannot resolve (loader model)",
    loader_win_zlibwapi,
    {FindingId::win_zlibwapi_missing},
    fact_area::cudnn | fact_area::loader | fact_area::windows};
extern const Check win_cudnn_incomplete_entry{
    "win_cudnn_incomplete",
    "cuDNN 8 copies no modelled load takes, missing sub-libraries",
    win_cudnn_incomplete,
    {FindingId::cudnn_sublibrary_missing, FindingId::win_cudnn8_sublibrary_missing},
    fact_area::cudnn | fact_area::loader | fact_area::windows};
extern const Check win_zlibwapi_entry{
    "win_zlibwapi",
    "cuDNN 8.3-8.9 copies no modelled load takes, without zlibwapi.dll",
    win_zlibwapi,
    {FindingId::win_zlibwapi_missing},
    fact_area::cudnn | fact_area::loader | fact_area::windows};

}  // namespace checks
}  // namespace dlenv
