// Rules decided by the loader models (facts from probe/loader_facts.cc): what
// each load context really resolves on the analysed files -- wrong-machine DLLs
// (193), mixed cuDNN DLL versions (127), Python >= 3.8 extension modules whose
// CUDA DLLs are only on PATH, LD_PRELOAD shadowing, LD_LIBRARY_PATH entries
// that are not fixed directories, and (Linux) cuDNN sub-libraries the main
// library cannot reach.
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

// ---- Windows: 193 ------------------------------------------------------------------

// ---- Windows: 127 from mixed cuDNN versions --------------------------------------------

// ---- Windows: cuDNN 8's run-time companions that do not resolve ----------------------------

// ---- Windows: Python >= 3.8 does not search PATH for extension-module dependencies ----------

// ---- Linux: LD_LIBRARY_PATH entries that are not fixed directories ----------------------

// ---- Linux: LD_PRELOAD ----------------------------------------------------------------

}  // namespace

namespace checks {

using namespace windows_common;

using namespace rule_helpers;

void wrong_bitness(const Ctx& c, Findings& out) {
  if (c.os != Os::windows) return;
  std::map<std::string, std::vector<const LoadContext*>> seen;  // file -> contexts
  std::map<std::string, const ResolvedLib*> lib_of;
  for (const auto& ctx : c.f.loader.contexts) {
    for (const auto& l : ctx.libs) {
      if (l.win_error != 193 || l.path.empty()) continue;
      const std::string key = to_lower(l.path);
      if (!lib_of.count(key)) lib_of[key] = &l;
      auto& v = seen[key];
      if (std::find(v.begin(), v.end(), &ctx) == v.end()) v.push_back(&ctx);
    }
  }
  for (const auto& [key, l] : lib_of) {
    const std::string file = winpath(l->path);
    const std::string machine = l->machine.empty() ? "not a loadable image" : l->machine;
    Finding x =
        make_finding(FindingId::win_dll_wrong_bitness_193, Severity::error,
                     path_basename(l->path) + " in " + winpath(path_dirname(l->path)) + " is " +
                         machine + ", not the process's machine: LoadLibrary fails with error 193");
    x.evidence.push_back(ev(file + ": PE machine " + machine, file));
    for (const auto* ctx : seen[key]) {
      x.evidence.push_back(ev("taken by " + ctx->label +
                                  (l->requester.empty() ? "" : ", for " + l->requester) + " (" +
                                  l->rule + ")",
                              winpath(ctx->root)));
    }
    if (!l->problem.empty()) x.evidence.push_back(ev(l->problem, "Windows loader model"));
    bool good_copy = false;
    for (const auto& s : l->shadowed) {
      x.evidence.push_back(ev("another copy further down the search: " + winpath(s), winpath(s)));
      good_copy = true;
    }
    x.fix.push_back(ps(
        "replace " + file + " with the x64 build of " + path_basename(l->path) +
            (good_copy ? ", or remove it so the copy further down the search path is taken"
                       : " (the Windows loader stops at the first file of that name: it does not "
                         "skip a DLL of the wrong machine)"),
        "Remove-Item '" + file + "'   # after checking no other program needs it"));
    out.push_back(std::move(x));
  }
}

void cudnn_mixed_127(const Ctx& c, Findings& out) {
  if (c.os != Os::windows) return;
  std::set<std::string> done;
  for (const auto& ctx : c.f.loader.contexts) {
    std::vector<const ResolvedLib*> mixed, missing_export;
    for (const auto& l : ctx.libs) {
      if (l.path.empty() || !is_cudnn(l.path)) continue;
      if (!l.family_mismatch.empty() && starts_with(l.family_mismatch, "cuDNN")) {
        mixed.push_back(&l);
      } else if (l.win_error == 127) {
        // cuDNN DLLs of one release export what the others import: a function missing
        // from a cuDNN DLL another cuDNN DLL imports is a mixed set.
        for (const auto& [fn, dll] : l.missing_imports) {
          if (is_cudnn(dll)) {
            missing_export.push_back(&l);
            break;
          }
        }
      }
    }
    if (mixed.empty() && missing_export.empty()) continue;
    std::vector<std::string> keyparts;
    for (const auto* l : mixed) keyparts.push_back(to_lower(l->path) + "=" + l->version);
    for (const auto* l : missing_export) keyparts.push_back(to_lower(l->path));
    std::sort(keyparts.begin(), keyparts.end());
    if (!done.insert(join(keyparts, ";")).second) continue;
    std::set<std::string> versions, dirs;
    for (const auto* l : mixed) {
      versions.insert(l->version);
      dirs.insert(winpath(path_dirname(l->path)));
    }
    Finding x =
        make_finding(FindingId::win_cudnn_mixed_versions_127, Severity::error,
                     mixed.empty() ? "A cuDNN DLL that would load lacks a function another DLL "
                                     "imports from it (LoadLibrary error 127)"
                                   : "The cuDNN DLLs that would load come from " +
                                         std::to_string(versions.size()) +
                                         " different releases (LoadLibrary error 127)");
    x.evidence.push_back(ev("loaded by " + ctx.label, winpath(ctx.root)));
    for (const auto* l : mixed) {
      x.evidence.push_back(ev(path_basename(l->path) + " " + l->version + " from " +
                                  winpath(path_dirname(l->path)) + " (" + l->rule + ")",
                              winpath(l->path)));
    }
    for (const auto* l : missing_export) {
      x.evidence.push_back(ev(l->problem, winpath(l->path)));
    }
    x.fix.push_back(
        ps("keep exactly one complete cuDNN release on the search path: remove the older "
           "cudnn*64_*.dll files (or the folder holding them) from PATH and copy every DLL of one "
           "cuDNN archive into one folder"));
    if (!dirs.empty()) {
      std::vector<std::string> d(dirs.begin(), dirs.end());
      x.fix.push_back(
          ps("see which cuDNN DLLs each folder holds", "Get-ChildItem '" + join(d, "','") +
                                                           "' -Filter 'cudnn*.dll' | Select-Object "
                                                           "FullName, @{n='Version';e={$_."
                                                           "VersionInfo.FileVersion}}"));
    }
    out.push_back(std::move(x));
  }
}

void py38_path(const Ctx& c, Findings& out) {
  if (c.os != Os::windows) return;
  // One finding per (interpreter, framework).
  std::map<std::pair<std::string, std::string>, std::vector<const LoadContext*>> groups;
  for (const auto& ctx : c.f.loader.contexts) {
    if (ctx.kind != "python-extension") continue;
    bool hit = false;
    for (const auto& l : ctx.libs) hit |= l.missing && !l.path_copy.empty();
    if (hit) groups[{ctx.python_interpreter, ctx.framework}].push_back(&ctx);
  }
  for (const auto& [key, ctxs] : groups) {
    const auto& [interp, fw] = key;
    std::vector<std::string> dirs;  // PATH dirs to add, in order
    std::set<std::string> names;
    Finding x = make_finding(
        FindingId::win_py38_path_not_searched, Severity::error,
        "Python " + ctxs.front()->python_version + " (" + winpath(interp) + ") cannot load " + fw +
            "'s CUDA DLLs: they are only on PATH, which Python 3.8+ does not search "
            "for extension modules");
    for (const auto* ctx : ctxs) {
      for (const auto& l : ctx->libs) {
        if (!l.missing || l.path_copy.empty()) continue;
        if (!names.insert(to_lower(l.name)).second) continue;
        x.evidence.push_back(
            ev(path_basename(ctx->root) + " needs " + l.name +
                   (l.requester.empty() || l.requester == path_basename(ctx->root)
                        ? ""
                        : " (through " + l.requester + ")") +
                   ": not in the module's folder, System32 or an os.add_dll_directory folder; "
                   "a copy is in " +
                   winpath(path_dirname(l.path_copy.front())) + ", on PATH",
               winpath(ctx->root)));
        const std::string d = path_dirname(l.path_copy.front());
        if (std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
      }
    }
    if (!ctxs.front()->user_dirs.empty()) {
      std::vector<std::string> u;
      for (const auto& d : ctxs.front()->user_dirs) u.push_back(winpath(d));
      x.evidence.push_back(ev(fw + " registers " + join(u, ", ") + " itself (os.add_dll_directory)",
                              winpath(ctxs.front()->root)));
    }
    std::string code;
    for (const auto& d : dirs) code += "os.add_dll_directory(r'" + winpath(d) + "'); ";
    x.fix.push_back(
        ps("register the folders before the import (in your program, or a .pth / "
           "sitecustomize.py of this environment)",
           "& '" + winpath(interp) + "' -c \"import os; " + code + "import " + fw + "\""));
    x.fix.push_back(
        ps("or install the framework build that bundles its CUDA DLLs (a CUDA wheel of the "
           "framework, or the nvidia-* wheels it names), so nothing depends on PATH"));
    out.push_back(std::move(x));
  }
}

void ld_library_path_tokens(const Ctx& c, Findings& out) {
  if (c.os != Os::linux) return;
  const auto& L = c.f.loader;
  if (L.ld_library_path_issues.empty()) return;
  Finding x =
      make_finding(FindingId::ld_library_path_unfixed_entry, Severity::warning,
                   "LD_LIBRARY_PATH has " + std::to_string(L.ld_library_path_issues.size()) +
                       " entr" + (L.ld_library_path_issues.size() == 1 ? "y" : "ies") +
                       " that ld.so does not read as a fixed directory");
  std::vector<std::string> keep;
  std::set<int> bad;
  for (const auto& i : L.ld_library_path_issues) bad.insert(i.position);
  auto parts = split(L.ld_library_path, ':', true);
  for (size_t p = 0; p < parts.size(); ++p) {
    if (!bad.count(static_cast<int>(p + 1))) keep.push_back(parts[p]);
  }
  for (const auto& i : L.ld_library_path_issues) {
    x.evidence.push_back(
        ev("entry " + std::to_string(i.position) + " '" + i.entry + "': " + i.meaning,
           "LD_LIBRARY_PATH (" + c.f.env.source + ")"));
  }
  x.fix.push_back(step(
      "write each directory as an absolute path (expand variables before exporting; for "
      "$ORIGIN, name the directory it was meant to be), and drop empty entries",
      "export LD_LIBRARY_PATH='" + join(keep, ":") + "'   # then add the absolute directories"));
  out.push_back(std::move(x));
}

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check wrong_bitness_entry{"wrong_bitness",
                                       "32-bit DLLs a 64-bit load takes (193)",
                                       wrong_bitness,
                                       {FindingId::win_dll_wrong_bitness_193},
                                       fact_area::loader};
extern const Check cudnn_mixed_127_entry{"cudnn_mixed_127",
                                         "cuDNN DLLs of several releases (127)",
                                         cudnn_mixed_127,
                                         {FindingId::win_cudnn_mixed_versions_127},
                                         fact_area::loader};
extern const Check py38_path_entry{"py38_path",
                                   "CUDA DLLs only on PATH for Python >= 3.8 extensions",
                                   py38_path,
                                   {FindingId::win_py38_path_not_searched},
                                   fact_area::loader};
extern const Check ld_library_path_tokens_entry{
    "ld_library_path_tokens",
    "LD_LIBRARY_PATH entries that are not fixed directories",
    ld_library_path_tokens,
    {FindingId::ld_library_path_unfixed_entry},
    fact_area::env | fact_area::loader};

}  // namespace checks
}  // namespace dlenv
