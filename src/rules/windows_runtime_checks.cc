// Windows run-time libraries: the Visual C++ runtime, an MSVC runtime too old for torch
// (c10.dll, error 1114), fbgemm.dll's libomp140, several OpenMP runtimes in one process.
#include <algorithm>
#include <set>

#include "rules/checks.h"
#include "rules/loader_coverage.h"
#include "rules/python_common.h"
#include "rules/windows_common.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using namespace windows_common;

const WinFile* system_copy(const WindowsFacts& w, std::string_view name) {
  for (const auto& f : w.msvc_runtime) {
    if (f.name == name && to_lower(path_dirname(f.path)) == to_lower(w.system32)) return &f;
  }
  return nullptr;
}

bool any_framework(const Facts& f) {
  for (const auto& e : f.python) {
    if (!e.frameworks.empty()) return true;
  }
  return false;
}

bool has_torch(const Facts& f) {
  for (const auto& e : f.python) {
    if (pyrules::fw(e, "torch")) return true;
  }
  return false;
}

}  // namespace

namespace checks {

using namespace windows_common;

void win_vcredist(const Ctx& c, Findings& out) {
  const WindowsFacts* w = win(c);
  if (!w || !any_framework(c.f)) return;
  std::vector<std::string> missing;
  for (const char* n : {"vcruntime140.dll", "vcruntime140_1.dll", "msvcp140.dll"}) {
    if (!system_copy(*w, n)) missing.push_back(n);
  }
  // Several copies of one DLL with different versions (conda roots, IDE folders, System32).
  std::vector<Evidence> divergent;
  for (const char* n : {"vcruntime140.dll", "vcruntime140_1.dll", "msvcp140.dll"}) {
    std::set<std::string> versions;
    std::vector<const WinFile*> copies;
    for (const auto& f : w->msvc_runtime) {
      if (f.name != n) continue;
      copies.push_back(&f);
      if (f.version) versions.insert(*f.version);
    }
    if (versions.size() < 2) continue;
    for (const auto* f : copies) {
      divergent.push_back(win_ev(
          std::string(n) + " " + (f->version ? *f->version : "?") + " (" + f->found_via + ")",
          f->path));
    }
  }
  if (missing.empty() && divergent.empty()) return;
  Finding x = make_finding(
      FindingId::win_vcredist_not_detected_warning, Severity::warning,
      missing.empty() ? "Copies of the MSVC run-time DLLs with different versions"
                      : "The Microsoft Visual C++ run time is not installed in System32 (" +
                            join(missing, ", ") + " missing)");
  if (!missing.empty())
    x.evidence.push_back(win_ev("missing: " + join(missing, ", "), w->system32));
  for (auto& d : divergent) x.evidence.push_back(std::move(d));
  x.fix.push_back(ps("install (or repair) the latest Microsoft Visual C++ Redistributable x64",
                     "winget install Microsoft.VCRedist.2015+.x64"));
  if (!divergent.empty()) {
    x.fix.push_back(
        ps("remove stale copies that sit before System32 in the search order (beside "
           "python.exe)"));
  }
  out.push_back(std::move(x));
}

void win_msvc_too_old(const Ctx& c, Findings& out) {
  const WindowsFacts* w = win(c);
  if (!w || !has_torch(c.f)) return;
  // Every torch 2.x Windows wheel is built with a VS 2019 16.10+ / VS 2022 toolset (14.29+);
  // a run time older than the toolset fails c10.dll's initialisation (error 1114).
  const Version floor{14, 29};
  for (const auto& e : c.f.python) {
    const auto* torch = pyrules::fw(e, "torch");
    if (!torch) continue;
    std::vector<Evidence> old;
    bool shadowed = false;
    for (const char* n : {"vcruntime140.dll", "msvcp140.dll"}) {
      // The copy that wins: beside python.exe first, then System32.
      const WinFile* winner = nullptr;
      for (const auto& f : w->msvc_runtime) {
        if (f.name == n && to_lower(path_dirname(f.path)) == to_lower(e.prefix)) winner = &f;
      }
      const WinFile* sys = system_copy(*w, n);
      if (!winner) winner = sys;
      if (!winner || !winner->version) continue;
      auto v = Version::parse(*winner->version);
      if (!v) continue;
      bool older_than_system = false;
      if (sys && sys != winner && sys->version) {
        auto sv = Version::parse(*sys->version);
        older_than_system = sv && *v < *sv;
      }
      if (*v < floor || older_than_system) {
        shadowed |= older_than_system;
        old.push_back(
            win_ev(std::string(n) + " " + *winner->version + " (" + winner->found_via + ")" +
                       (older_than_system ? ", older than System32's copy " + *sys->version : ""),
                   winner->path));
      }
    }
    if (old.empty()) continue;
    Finding x = make_finding(
        FindingId::win_torch_c10_dll_init_1114, shadowed ? Severity::error : Severity::warning,
        "torch " + torch->version + " in " + win_env_name(e) +
            " runs with an MSVC run time older than the one it was built with");
    x.evidence.push_back(win_pkg_ev(e, *torch));
    for (auto& o : old) x.evidence.push_back(std::move(o));
    if (!shadowed) {
      x.evidence.push_back(
          win_ev("torch 2.x Windows wheels are built with MSVC toolset 14.29 or "
                 "newer",
                 "dlenv (unconfirmed)"));
      x.confirmed = false;
    }
    x.fix.push_back(ps("install the latest Microsoft Visual C++ Redistributable x64",
                       "winget install Microsoft.VCRedist.2015+.x64"));
    if (shadowed) {
      x.fix.push_back(
          ps("remove (or update) the old copies beside python.exe: they are found "
             "before System32"));
    }
    out.push_back(std::move(x));
  }
}

void win_libomp140(const Ctx& c, Findings& out) {
  const WindowsFacts* w = win(c);
  if (!w) return;
  for (const auto& e : c.f.python) {
    const auto* torch = pyrules::fw(e, "torch");
    if (!torch) continue;
    auto v = Version::parse(torch->version);
    if (!v || *v < Version{2, 4}) continue;
    const std::string name = "libomp140.x86_64.dll";
    if (!in_env(*w, e, name).empty() || !findable(c, *w, e, name).empty()) continue;
    bool system = false;
    for (const auto& f : w->openmp) {
      system |= f.name == name && to_lower(path_dirname(f.path)) == to_lower(w->system32);
    }
    if (system) continue;
    Finding x = make_finding(FindingId::win_torch_fbgemm_libomp140, Severity::error,
                             "torch " + torch->version + " in " + win_env_name(e) +
                                 ": fbgemm.dll needs libomp140.x86_64.dll, which is not installed");
    x.evidence.push_back(win_pkg_ev(e, *torch));
    x.evidence.push_back(win_ev("torch 2.4 and later: fbgemm.dll imports libomp140.x86_64.dll",
                                "failure catalog A9"));
    x.evidence.push_back(win_ev("not in torch\\lib, System32 or on PATH", w->system32));
    x.fix.push_back(
        ps("install the current Microsoft Visual C++ Redistributable x64 (it ships "
           "libomp140.x86_64.dll)",
           "winget install Microsoft.VCRedist.2015+.x64"));
    x.fix.push_back(
        ps("or install the Visual Studio C++ build tools; copying the DLL into "
           "torch\\lib was the reported workaround"));
    out.push_back(std::move(x));
  }
}

void win_duplicate_openmp(const Ctx& c, Findings& out) {
  const WindowsFacts* w = win(c);
  if (!w) return;
  for (const auto& e : c.f.python) {
    std::vector<const WinFile*> copies;
    for (const auto& f : w->openmp) {
      if (f.name == "libiomp5md.dll" && starts_with_ci(f.path, e.prefix + "/")) {
        copies.push_back(&f);
      }
    }
    if (copies.size() < 2) continue;
    Finding x = make_finding(FindingId::win_duplicate_openmp_runtime, Severity::warning,
                             std::to_string(copies.size()) + " copies of libiomp5md.dll in " +
                                 win_env_name(e) + ": loading two aborts with OMP: Error #15");
    for (const auto* f : copies) {
      x.evidence.push_back(win_ev(
          "libiomp5md.dll " + (f->version ? *f->version : std::string("?")) + " in " + f->found_via,
          f->path));
    }
    x.fix.push_back(
        ps("keep one Intel OpenMP: install numpy/MKL and torch from one channel "
           "(all pip, or all conda), or remove the extra copy"));
    x.fix.push_back(
        ps("KMP_DUPLICATE_LIB_OK=TRUE silences it, but Intel calls that unsafe and "
           "unsupported"));
    out.push_back(std::move(x));
  }
}

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check win_vcredist_entry{"win_vcredist",
                                      "the Visual C++ runtime",
                                      win_vcredist,
                                      {FindingId::win_vcredist_not_detected_warning},
                                      fact_area::python | fact_area::windows};
extern const Check win_msvc_too_old_entry{"win_msvc_too_old",
                                          "an MSVC runtime too old for torch (c10.dll, 1114)",
                                          win_msvc_too_old,
                                          {FindingId::win_torch_c10_dll_init_1114},
                                          fact_area::python | fact_area::windows};
extern const Check win_libomp140_entry{"win_libomp140",
                                       "fbgemm.dll's libomp140",
                                       win_libomp140,
                                       {FindingId::win_torch_fbgemm_libomp140},
                                       fact_area::python | fact_area::windows};
extern const Check win_duplicate_openmp_entry{"win_duplicate_openmp",
                                              "several OpenMP runtimes",
                                              win_duplicate_openmp,
                                              {FindingId::win_duplicate_openmp_runtime},
                                              fact_area::python | fact_area::windows};

}  // namespace checks
}  // namespace dlenv
