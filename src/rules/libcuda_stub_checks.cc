// The link-time stub libcuda.so where programs load the driver's libcuda.so.1: what
// dlopen("libcuda.so.1") picks in the Linux loader model (by name and for each framework), a
// stub in LD_PRELOAD or /etc/ld.so.preload, and -- where the model has not decided it -- the
// stub a live load reported or the file scan found on the search path.
#include <algorithm>
#include <map>
#include <set>

#include "rules/checks.h"
#include "rules/loader_coverage.h"
#include "rules/rule_helpers.h"
#include "util/strings.h"

namespace dlenv::checks {

using namespace rule_helpers;

// The stub libcuda.so from the live load and the file scan. Where the Linux loader model
// decided what dlopen("libcuda.so.1") takes (loader_libcuda_stub reports that), only a live
// load that reports the stub still counts; about the stub's directory, so that the resolver
// merges it with the model's finding for the same directory.
void stub_loaded(const Ctx& c, Findings& out) {
  const auto& d = c.f.driver;
  const bool live_only = c.os == Os::linux && loader_resolves_libcuda(c.f);
  Finding x = make_finding(FindingId::libcuda_stub_loaded, Severity::error,
                           "The link-time stub libcuda.so is on the run-time search path");
  bool loaded_stub = false;
  if (d.libcuda_library.ok() && contains(*d.libcuda_library, "/stubs/")) {
    loaded_stub = true;
    x.subject = path_subject(path_dirname(*d.libcuda_library));
  }
  if (d.libcuda_error.ok() && contains(to_lower(*d.libcuda_error), "stub")) loaded_stub = true;
  if (loaded_stub) {
    x.evidence.push_back(ev("libcuda loaded from " + d.libcuda_library.value.value_or("?") +
                                (d.libcuda_error.ok() ? " (" + *d.libcuda_error + ")" : ""),
                            "dlopen libcuda.so.1"));
  }
  for (const auto& lf : d.libcuda_files) {
    if (lf.is_stub && lf.found_via != "directory scan") {
      x.evidence.push_back(ev("stub " + lf.path + " found via " + lf.found_via, lf.found_via));
    }
  }
  for (const auto& dir : d.ld_conf_stub_dirs) {
    x.evidence.push_back(ev("ld.so.conf lists " + dir, "/etc/ld.so.conf"));
  }
  if (x.evidence.empty() || (live_only && !loaded_stub)) return;
  if (!loaded_stub) {
    x.severity = Severity::warning;
    x.title = "A stub libcuda.so is on the loader's search path and can shadow the real driver";
  }
  x.fix.push_back(
      step("remove the .../stubs directory from LD_LIBRARY_PATH and /etc/ld.so.conf.d, "
           "then refresh the cache",
           "sudo ldconfig"));
  x.fix.push_back(step("make sure the driver's real libcuda.so.1 is installed",
                       "ls -l /usr/lib/x86_64-linux-gnu/libcuda.so.1"));
  out.push_back(std::move(x));
}

void loader_libcuda_stub(const RuleContext& c, std::vector<Finding>& out) {
  if (c.os != Os::linux) return;
  // One finding per stubs directory: who takes which file from it.
  std::map<std::string, std::vector<std::string>> picked;  // stubs dir -> lines
  std::map<std::string, const ResolvedLib*> lib_of;        // stubs dir -> first pick
  std::map<std::string, std::set<std::string>> names;      // stubs dir -> names asked
  std::map<std::string, std::vector<const ResolvedLib*>> all_of;
  for (const auto& ctx : c.f.loader.contexts) {
    if (ctx.kind != "by-name" && !framework_context(ctx)) continue;
    for (const auto& l : ctx.libs) {
      if ((l.name != "libcuda.so.1" && l.name != "libcuda.so") || l.path.empty()) continue;
      if (!l.stub || l.rule == "already loaded") continue;  // preloads: loader_preload_stub
      const std::string dir = path_dirname(l.path);
      lib_of.emplace(dir, &l);
      all_of[dir].push_back(&l);
      names[dir].insert(l.name);
      const std::string line = ctx.label + " takes " + l.path + " (" + rule_text(l) + ")";
      auto& who = picked[dir];
      if (std::find(who.begin(), who.end(), line) == who.end()) who.push_back(line);
    }
  }
  for (const auto& [dir, l] : lib_of) {
    std::vector<std::string> asked;
    for (const auto& n : names[dir]) asked.push_back("dlopen(\"" + n + "\")");
    Finding x = make_finding(
        FindingId::libcuda_stub_loaded, Severity::error,
        join(asked, " and ") + (asked.size() == 1 ? " picks" : " pick") +
            " the link-time stub in " + dir + " (" + rule_text(*l) +
            "), ahead of the real driver library: CUDA reports no driver / \"CUDA driver version "
            "is insufficient\"",
        rule_helpers::path_subject(dir));
    for (const auto& line : picked[dir]) x.evidence.push_back(ev(line, "Linux loader model"));
    std::set<std::string> real;  // shadowed copies of every name taken from this directory
    for (const auto* k : all_of[dir]) real.insert(k->shadowed.begin(), k->shadowed.end());
    for (const auto& r : real) {
      x.evidence.push_back(ev("the real driver library " + r + " comes later in the search", r));
    }
    if (l->rule == "LD_LIBRARY_PATH") {
      x.evidence.push_back(ev("LD_LIBRARY_PATH=" + c.f.loader.ld_library_path + " names " + dir,
                              "LD_LIBRARY_PATH (" + c.f.env.source + ")"));
      x.fix.push_back(step("remove the stubs directory " + dir +
                               " from LD_LIBRARY_PATH (the stub only serves the linker)",
                           llp_without(c.f, {strip_slash(dir)})));
    } else if (l->rule == "ld.so.cache") {
      x.evidence.push_back(ev("ld.so.cache maps " + l->name + " to " + l->path +
                                  " (a directory listed by /etc/ld.so.conf)",
                              "/etc/ld.so.cache"));
      x.fix.push_back(step("remove " + dir + " from /etc/ld.so.conf.d and rebuild the cache",
                           "sudo grep -rl '" + dir +
                               "' /etc/ld.so.conf /etc/ld.so.conf.d; "
                               "sudo ldconfig   # after deleting that line"));
    } else {
      x.fix.push_back(step("delete the stub copy " + l->path + " (it only serves the linker)"));
    }
    out.push_back(std::move(x));
  }
}

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

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check loader_libcuda_stub_entry{
    "loader_libcuda_stub",
    "the stub libcuda.so that dlopen(\"libcuda.so.1\") picks (loader model)",
    loader_libcuda_stub,
    {FindingId::libcuda_stub_loaded},
    fact_area::env | fact_area::loader};
extern const Check stub_loaded_entry{
    "stub_loaded",
    "a stub libcuda.so loaded or on the search path (live load, file scan)",
    stub_loaded,
    {FindingId::libcuda_stub_loaded},
    fact_area::driver | fact_area::loader};
extern const Check loader_preload_stub_entry{
    "loader_preload_stub",
    "a stub libcuda.so in LD_PRELOAD or /etc/ld.so.preload",
    loader_preload_stub,
    {FindingId::libcuda_stub_loaded},
    fact_area::driver | fact_area::env | fact_area::loader};

}  // namespace dlenv::checks
