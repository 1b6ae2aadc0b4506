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
#include "util/strings.h"

namespace dlenv {
namespace {

using namespace rule_helpers;

// A logical path as the user sees it on Windows: "/Program Files/X" -> "C:\\Program Files\\X".
std::string winpath(std::string_view p) {
  std::string s(p);
  if (!s.empty() && s.front() == '/') s = "C:" + s;
  std::replace(s.begin(), s.end(), '/', '\\');
  return s;
}
// A fix step whose command runs in PowerShell.
FixStep ps(std::string text, std::string command = {}) {
  FixStep f = step(std::move(text), std::move(command));
  if (!f.command.empty()) f.shell = "powershell";
  return f;
}

bool is_cudnn(std::string_view name) {
  return starts_with(to_lower(path_basename(name)), "cudnn") ||
         starts_with(path_basename(name), "libcudnn");
}

// ---- Windows: 193 ------------------------------------------------------------------

// ---- Windows: 127 from mixed cuDNN versions --------------------------------------------

// ---- Windows: cuDNN 8's run-time companions that do not resolve ----------------------------

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

// ---- Windows: Python >= 3.8 does not search PATH for extension-module dependencies ----------

// ---- Linux: LD_LIBRARY_PATH entries that are not fixed directories ----------------------

// ---- Linux: LD_PRELOAD ----------------------------------------------------------------

// The copy that `context` (by-name) resolves for `name` when nothing is preloaded:
// the first shadowed one (the preload took the place of the search).
const LoadContext* by_name(const Facts& f, std::string_view root) {
  for (const auto& ctx : f.loader.contexts) {
    if (ctx.kind == "by-name" && ctx.root == root) return &ctx;
  }
  return nullptr;
}

}  // namespace

namespace checks {

void loader_preload_stub(const RuleContext& c, std::vector<Finding>& out) {
  if (c.os != Os::linux) return;
  for (const auto& p : c.f.loader.preload) {
    const bool cuda = starts_with(p.soname, "libcuda.so") ||
                      (p.soname.empty() && starts_with(path_basename(p.entry), "libcuda.so"));
    if (!cuda || !p.stub) continue;
    Finding x = make_finding(FindingId::libcuda_stub_loaded, Severity::error,
                             p.source + " loads the link-time stub " + p.path +
                                 " into every process, ahead of the real driver library");
    x.evidence.push_back(
        ev(p.source + " names '" + p.entry + "' -> " + p.path +
               (p.soname.empty() ? "" : " (soname " + p.soname + ")"),
           p.source == "LD_PRELOAD" ? "LD_PRELOAD (" + c.f.env.source + ")" : p.source));
    for (const auto& f : c.f.driver.libcuda_files) {
      if (!f.is_stub) {
        x.evidence.push_back(ev("the real driver library " + f.path + " is shadowed", f.path));
        break;
      }
    }
    if (p.source == "LD_PRELOAD") {
      x.fix.push_back(step("remove the stub from LD_PRELOAD (the stub only serves the linker)",
                           "unset LD_PRELOAD   # or drop '" + p.entry + "' from it"));
    } else {
      x.fix.push_back(step("remove the stub's line from /etc/ld.so.preload",
                           "sudo sed -i '\\#" + p.entry + "#d' /etc/ld.so.preload"));
    }
    out.push_back(std::move(x));
  }
}

void loader_preload_cudnn(const RuleContext& c, std::vector<Finding>& out) {
  if (c.os != Os::linux) return;
  for (const auto& p : c.f.loader.preload) {
    if (!starts_with(p.soname, "libcudnn") || p.version.empty()) continue;
    auto pv = Version::parse(p.version);
    if (!pv) continue;
    // Copies of the same cuDNN major that something would load instead: each cuDNN copy
    // (wheels included) of another version.
    std::vector<const CudnnCopy*> others;
    for (const auto& k : c.f.cudnn) {
      if (k.major != pv->major() || !k.library_version) continue;
      if (k.library_version->truncated(3) == pv->truncated(3)) continue;
      others.push_back(&k);
    }
    if (others.empty()) continue;
    Finding x = make_finding(
        FindingId::pip_cudnn_vs_system_cudnn_symbols, Severity::error,
        p.source + " forces cuDNN " + p.version + " (" + p.path +
            ") into every process, while cuDNN " + others.front()->library_version->str() + " in " +
            others.front()->dir + " loads its sub-libraries from its own directory");
    x.evidence.push_back(
        ev(p.source + " names '" + p.entry + "' -> " + p.path + " (" + p.soname + ", " + p.version +
               ")",
           p.source == "LD_PRELOAD" ? "LD_PRELOAD (" + c.f.env.source + ")" : p.source));
    if (const auto* bn = by_name(c.f, p.soname); bn && !bn->libs.empty()) {
      const auto& r = bn->libs[0];
      x.evidence.push_back(ev("a program asking for " + p.soname + " gets " + r.path + " (" +
                                  r.rule_detail + ")" +
                                  (r.shadowed.empty() ? "" : " instead of " + r.shadowed.front()),
                              "Linux loader model"));
    }
    for (const auto* k : others) {
      x.evidence.push_back(ev("cuDNN " + k->library_version->str() + " in " + k->dir +
                                  (k->python_site.empty() ? "" : " (pip wheel)"),
                              k->library_version.source));
    }
    x.fix.push_back(step("stop preloading cuDNN: the frameworks find their own copy",
                         p.source == "LD_PRELOAD"
                             ? "unset LD_PRELOAD   # or drop '" + p.entry + "' from it"
                             : "sudo sed -i '\\#" + p.entry + "#d' /etc/ld.so.preload"));
    out.push_back(std::move(x));
  }
}

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

// This file's entries of the check table (rules/check_table.cc).
const Check loader_preload_stub_entry{"loader_preload_stub",
                                      "a stub libcuda.so in LD_PRELOAD or /etc/ld.so.preload",
                                      loader_preload_stub,
                                      {FindingId::libcuda_stub_loaded},
                                      fact_area::driver | fact_area::env | fact_area::loader};
const Check loader_cudnn_incomplete_entry{
    "loader_cudnn_incomplete",
    "cuDNN sub-libraries the main library cannot reach (Linux)",
    loader_cudnn_incomplete,
    {FindingId::cudnn_sublibrary_missing},
    fact_area::cudnn | fact_area::loader};
const Check loader_preload_cudnn_entry{"loader_preload_cudnn",
                                       "a cuDNN in LD_PRELOAD or /etc/ld.so.preload",
                                       loader_preload_cudnn,
                                       {FindingId::pip_cudnn_vs_system_cudnn_symbols},
                                       fact_area::cudnn | fact_area::env | fact_area::loader};
const Check loader_win_cudnn8_sublibraries_entry{
    "loader_win_cudnn8_sublibraries",
    "cuDNN 8 sub-libraries a Windows load cannot resolve (loader model)",
    loader_win_cudnn8_sublibraries,
    {FindingId::win_cudnn8_sublibrary_missing},
    fact_area::cudnn | fact_area::loader | fact_area::windows};
const Check loader_win_zlibwapi_entry{
    "loader_win_zlibwapi",
    "zlibwapi.dll a Windows load of cuDNN 8.3-8.9 cannot resolve (loader model)",
    loader_win_zlibwapi,
    {FindingId::win_zlibwapi_missing},
    fact_area::cudnn | fact_area::loader | fact_area::windows};
const Check wrong_bitness_entry{"wrong_bitness",
                                "32-bit DLLs a 64-bit load takes (193)",
                                wrong_bitness,
                                {FindingId::win_dll_wrong_bitness_193},
                                fact_area::loader};
const Check cudnn_mixed_127_entry{"cudnn_mixed_127",
                                  "cuDNN DLLs of several releases (127)",
                                  cudnn_mixed_127,
                                  {FindingId::win_cudnn_mixed_versions_127},
                                  fact_area::loader};
const Check py38_path_entry{"py38_path",
                            "CUDA DLLs only on PATH for Python >= 3.8 extensions",
                            py38_path,
                            {FindingId::win_py38_path_not_searched},
                            fact_area::loader};
const Check ld_library_path_tokens_entry{"ld_library_path_tokens",
                                         "LD_LIBRARY_PATH entries that are not fixed directories",
                                         ld_library_path_tokens,
                                         {FindingId::ld_library_path_unfixed_entry},
                                         fact_area::env | fact_area::loader};

}  // namespace checks
}  // namespace dlenv
