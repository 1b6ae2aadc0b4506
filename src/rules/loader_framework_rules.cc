// Linux rules decided by the loader model on the frameworks of each Python
// environment (LoadContext kinds "framework" / "framework-dlopen", filled by
// probe/loader_facts.cc) and on the "by-name" dlopen of libcuda.so.1:
//   pip-cudnn-vs-system-cudnn-symbols  cuDNN / cuBLAS family members resolved from two
//                                      releases (LD_LIBRARY_PATH before DT_RUNPATH $ORIGIN)
//   libcudnn8-not-found                the libcudnn.so.N a framework needs resolves nowhere
//   libcuda-stub-loaded                dlopen("libcuda.so.1") picks the toolkit's stub
// The checks working from wheel metadata and found_via strings step aside where the model
// decided (rules/loader_coverage.h); a cuDNN header/library mismatch in a directory a mix
// finding covers is superseded by it (kb/findings.json, rules/resolve.h).
#include <algorithm>
#include <map>
#include <set>

#include "rules/loader_coverage.h"
#include "rules/python_common.h"
#include "rules/rule_helpers.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using rule_helpers::ev;
using rule_helpers::step;

const PythonEnv* env_of(const Facts& f, const LoadContext& c) {
  for (const auto& e : f.python) {
    if (e.prefix == c.python_prefix) return &e;
  }
  return nullptr;
}

// "cuDNN" for libcudnn*, "cuBLAS" for libcublas / libcublasLt; "" otherwise.
std::string family_of(std::string_view name) {
  if (starts_with(name, "libcudnn")) return "cuDNN";
  if (starts_with(name, "libcublas")) return "cuBLAS";
  return "";
}

// The wheel copies of a family in an environment: directory -> wheel version.
std::map<std::string, std::string> wheel_dirs(const PythonEnv& e, const std::string& family) {
  std::map<std::string, std::string> out;
  for (const auto& l : e.cuda_libs) {
    if ((family == "cuDNN" && l.library == "cudnn") ||
        (family == "cuBLAS" && starts_with(l.library, "cublas"))) {
      out.emplace(path_dirname(l.path), l.version);
    }
  }
  return out;
}

// A resolved library's version: the wheel's version for a file in a wheel directory (wheel
// files are named by soname only), else the version in its real file name.
std::string version_of(const ResolvedLib& l, const std::map<std::string, std::string>& wheels) {
  if (auto it = wheels.find(path_dirname(l.path)); it != wheels.end() && !it->second.empty()) {
    return it->second;
  }
  return l.version;
}

// Comparable release: the first three components, when at least two are known.
std::optional<Version> release(const std::string& v) {
  auto p = Version::parse(v);
  if (!p || p->parts().size() < 2) return std::nullopt;
  return p->truncated(3);
}

std::string strip_slash(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// LD_LIBRARY_PATH without the entries naming `dirs`: the exact command that sets it.
std::string llp_without(const Facts& f, const std::set<std::string>& dirs) {
  std::vector<std::string> keep;
  for (const auto& p : split(f.loader.ld_library_path, ':', true)) {
    if (!dirs.count(strip_slash(p))) keep.push_back(p);
  }
  if (keep.empty()) return "unset LD_LIBRARY_PATH";
  return "export LD_LIBRARY_PATH='" + join(keep, ":") + "'";
}

std::string rule_text(const ResolvedLib& l) {
  return l.rule_detail.empty() || l.rule_detail == l.rule ? l.rule : l.rule_detail;
}

}  // namespace

// ---- pip-cudnn-vs-system-cudnn-symbols ---------------------------------------------

namespace {

// What mixes in one environment: the members of a family the frameworks there would load
// from two releases (or from outside their wheel while the wheel's copy comes later).
struct MixHit {
  std::vector<std::string> frameworks;
  std::vector<std::string> lines;
  std::set<std::string> llp_dirs;          // LD_LIBRARY_PATH entries that chose a member
  std::set<std::string> cudnn_wheel_dirs;  // wheel directories cuDNN members were taken from
  std::string family, wheel_version, other_version, other_dir, wheel_package;
};

struct Mixes {
  std::map<std::string, MixHit> by_env;  // prefix -> what mixes there
  std::vector<std::string> order;
};

Mixes find_mixes(const Facts& f) {
  Mixes m;
  auto& by_env = m.by_env;
  auto& order = m.order;
  for (const auto& ctx : f.loader.contexts) {
    if (!framework_context(ctx)) continue;
    const PythonEnv* e = env_of(f, ctx);
    if (!e) continue;
    for (const std::string family : {"cuDNN", "cuBLAS"}) {
      const auto wheels = wheel_dirs(*e, family);
      std::vector<const ResolvedLib*> members;
      std::set<std::string> names;
      for (const auto& l : ctx.libs) {
        if (family_of(l.name) != family || l.path.empty() || !names.insert(l.name).second) continue;
        members.push_back(&l);
      }
      if (members.empty()) continue;
      std::set<Version> versions;
      for (const auto* l : members) {
        if (auto r = release(version_of(*l, wheels))) versions.insert(*r);
      }
      // Members taken from outside the wheel while the wheel's own copy comes later.
      std::vector<const ResolvedLib*> outside;
      for (const auto* l : members) {
        if (wheels.count(path_dirname(l->path))) continue;
        for (const auto& s : l->shadowed) {
          auto w = wheels.find(path_dirname(s));
          if (w == wheels.end()) continue;
          auto a = release(l->version), b = release(w->second);
          if (!a || !b || *a != *b) outside.push_back(l);
          break;
        }
      }
      if (versions.size() < 2 && outside.empty()) continue;
      if (!by_env.count(e->prefix)) order.push_back(e->prefix);
      MixHit& h = by_env[e->prefix];
      if (h.family.empty()) h.family = family;
      if (std::find(h.frameworks.begin(), h.frameworks.end(), ctx.framework) ==
          h.frameworks.end()) {
        h.frameworks.push_back(ctx.framework);
      }
      for (const auto* l : members) {
        const std::string v = version_of(*l, wheels);
        const bool in_wheel = wheels.count(path_dirname(l->path)) > 0;
        std::string line = ctx.framework + " (" + path_basename(ctx.root) + "): " + l->name +
                           (v.empty() ? "" : " " + v) + " from " + l->path + " (" + rule_text(*l) +
                           (in_wheel ? ", the wheel's copy" : "") + ")";
        if (std::find(h.lines.begin(), h.lines.end(), line) == h.lines.end()) {
          h.lines.push_back(line);
        }
        if (in_wheel) {
          if (family == "cuDNN") h.cudnn_wheel_dirs.insert(path_dirname(l->path));
          if (h.wheel_version.empty()) h.wheel_version = v;
          for (const auto& p : e->cuda_libs) {
            if (path_dirname(p.path) == path_dirname(l->path) && !p.package.empty()) {
              h.wheel_package = p.package;
            }
          }
        } else {
          if (h.other_dir.empty()) h.other_dir = path_dirname(l->path);
          if (h.other_version.empty()) h.other_version = v;
          if (l->rule == "LD_LIBRARY_PATH") h.llp_dirs.insert(path_dirname(l->path));
        }
      }
      if (h.wheel_version.empty() && !wheels.empty()) h.wheel_version = wheels.begin()->second;
    }
  }
  return m;
}

}  // namespace

namespace checks {

void loader_framework_cudnn_mix(const RuleContext& c, std::vector<Finding>& out) {
  if (c.os != Os::linux) return;
  const Mixes m = find_mixes(c.f);
  for (const auto& prefix : m.order) {
    const MixHit& h = m.by_env.at(prefix);
    const PythonEnv* e = nullptr;
    for (const auto& x : c.f.python) {
      if (x.prefix == prefix) e = &x;
    }
    if (!e) continue;
    const std::string fws = join(h.frameworks, ", ");
    const std::string other = h.family + (h.other_version.empty() ? "" : " " + h.other_version) +
                              " (" + h.other_dir + ")";
    const std::string wheel =
        h.family + (h.wheel_version.empty() ? "" : " " + h.wheel_version) + " wheel";
    std::string title =
        !h.llp_dirs.empty()
            ? "LD_LIBRARY_PATH puts " + other + " ahead of the " + wheel + " of " +
                  pyrules::env_name(*e) + ": " + fws + " would load " + h.family +
                  " libraries of two releases (undefined symbol / sub-library version mismatch)"
            : fws + " in " + pyrules::env_name(*e) + " would load " + h.family +
                  " libraries of two releases: " + other + " with the " + wheel;
    Finding x = make_finding(FindingId::pip_cudnn_vs_system_cudnn_symbols, Severity::error, title,
                             e->prefix);
    // The cuDNN wheel directories it explains (a header/library mismatch there is this cause).
    for (const auto& d : h.cudnn_wheel_dirs) x.covers.push_back(rule_helpers::path_subject(d));
    for (const auto& l : h.lines) x.evidence.push_back(ev(l, "Linux loader model"));
    if (!h.llp_dirs.empty()) {
      x.evidence.push_back(ev("LD_LIBRARY_PATH=" + c.f.loader.ld_library_path +
                                  " is searched before a library's DT_RUNPATH (but after DT_RPATH)",
                              "LD_LIBRARY_PATH (" + c.f.env.source + ")"));
      x.fix.push_back(step(
          "remove " + join(std::vector<std::string>(h.llp_dirs.begin(), h.llp_dirs.end()), ", ") +
              " from LD_LIBRARY_PATH (the frameworks find their wheel's " + h.family +
              " themselves)",
          llp_without(c.f, h.llp_dirs)));
    } else {
      x.fix.push_back(step("install one complete " + h.family + " release where " + fws +
                           " looks first (its wheel directory), or remove the other copy"));
    }
    if (!h.wheel_package.empty() && !h.other_version.empty()) {
      x.fix.push_back(pyrules::step(
          "or make the versions equal",
          pyrules::pip(*e) + " install " + h.wheel_package + "==" + h.other_version, &c));
    }
    out.push_back(std::move(x));
  }
}

// ---- libcudnn8-not-found --------------------------------------------------------------

void loader_cudnn_not_found(const RuleContext& c, std::vector<Finding>& out) {
  if (c.os != Os::linux) return;
  std::set<std::pair<std::string, std::string>> done;  // env prefix, soname
  for (const auto& ctx : c.f.loader.contexts) {
    // ONNX Runtime's CUDA provider: ort-cuda-provider-load-failure names its missing sonames.
    if (!framework_context(ctx) || ctx.framework == "onnxruntime") continue;
    const PythonEnv* e = env_of(c.f, ctx);
    if (!e) continue;
    // paddle-cannot-load-cudnn (with a GPU) reports paddle's unresolved cuDNN with the exact
    // release of its build: one finding per cause.
    const FrameworkFacts* paddle = nullptr;
    if (ctx.framework == "paddle" && pyrules::gpu_present(c.f)) {
      for (const auto& fw : e->frameworks) {
        if (fw.name == "paddle" && !fw.needed.empty() && fw.needed.front().resolved.empty()) {
          paddle = &fw;
        }
      }
    }
    for (const auto& l : ctx.libs) {
      if (!starts_with(l.name, "libcudnn.so.") || !l.missing) continue;
      if (paddle && paddle->needed.front().name == l.name) continue;
      if (!done.insert({e->prefix, l.name}).second) continue;
      const std::string major = l.name.substr(std::string_view("libcudnn.so.").size());
      Finding x = make_finding(
          FindingId::libcudnn8_not_found, Severity::error,
          ctx.framework + " in " + pyrules::env_name(*e) + " needs " + l.name +
              ", which the loader finds nowhere: the first GPU operation fails with \"" + l.name +
              ": cannot open shared object file\"");
      x.covers.push_back(e->prefix);  // a --deep finding of this id joins it
      x.evidence.push_back(ev((l.requester.empty() ? ctx.framework : l.requester) +
                                  (ctx.kind == "framework-dlopen" || l.companion
                                       ? " opens " + l.name + " at run time (dlopen)"
                                       : " lists " + l.name + " as DT_NEEDED"),
                              ctx.root));
      if (!l.searched.empty()) {
        x.evidence.push_back(
            ev("searched (DT_RPATH / LD_LIBRARY_PATH / DT_RUNPATH / default "
               "directories, in order): " +
                   join(l.searched, ", ") + "; no ld.so.cache entry",
               "Linux loader model"));
      }
      // A copy of that major that dlenv found elsewhere.
      std::string elsewhere;
      for (const auto& k : c.f.cudnn) {
        if (std::to_string(k.major) == major && path_basename(k.library) == l.name) {
          elsewhere = k.dir;
          x.evidence.push_back(
              ev("a copy exists in " + k.dir + ", which this search does not reach", k.library));
          break;
        }
      }
      const int cuda_major = Version::parse(ctx.cuda).value_or(Version{12}).major();
      const std::string cu = major == "8" ? (cuda_major <= 11 ? "11" : "12")
                                          : std::to_string(std::max(cuda_major, 12));
      // The wheel's directory: whether the search above reaches it (a DT_RPATH / DT_RUNPATH
      // into site-packages/nvidia, as torch's and paddle's have); CuPy's module and ctranslate2
      // have none, so the wheel alone changes nothing there.
      std::string wheel_dir;
      bool reached = false;
      for (const auto& site : e->site_packages) {
        const std::string d = path_join(site, "nvidia/cudnn/lib");
        if (wheel_dir.empty()) wheel_dir = d;
        for (const auto& s : l.searched) {  // "dir  (rule)"
          reached |= strip_slash(path_normalize(s.substr(0, s.find("  (")))) == d;
        }
      }
      const std::string install = pyrules::pip(*e) + " install 'nvidia-cudnn-cu" + cu +
                                  "==" + (major == "8" ? "8.9" : major) + ".*'";
      const std::string cur = c.f.loader.ld_library_path;
      if (reached || wheel_dir.empty()) {
        x.fix.push_back(pyrules::step(
            "install the cuDNN " + major + " wheel for CUDA " + cu + " into this environment",
            install, &c));
      } else {
        x.fix.push_back(
            pyrules::step("install the cuDNN " + major + " wheel for CUDA " + cu +
                              " into this environment and put its directory on LD_LIBRARY_PATH (" +
                              path_basename(ctx.root) + " does not search " + wheel_dir + ")",
                          install + " && export LD_LIBRARY_PATH='" + wheel_dir +
                              (cur.empty() ? "" : ":" + cur) + "'",
                          &c));
      }
      if (!elsewhere.empty()) {
        x.fix.push_back(
            step("or put the copy dlenv found on the loader path",
                 "export LD_LIBRARY_PATH='" + elsewhere + (cur.empty() ? "" : ":" + cur) + "'"));
      }
      out.push_back(std::move(x));
    }
  }
}

// ---- libcuda-stub-loaded ----------------------------------------------------------------

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

// This file's entries of the check table (rules/check_table.cc).
const Check loader_libcuda_stub_entry{
    "loader_libcuda_stub",
    "the stub libcuda.so that dlopen(\"libcuda.so.1\") picks (loader model)",
    loader_libcuda_stub,
    {FindingId::libcuda_stub_loaded},
    fact_area::env | fact_area::loader};
const Check loader_framework_cudnn_mix_entry{
    "loader_framework_cudnn_mix",
    "a framework loading cuDNN/cuBLAS of two releases (loader model)",
    loader_framework_cudnn_mix,
    {FindingId::pip_cudnn_vs_system_cudnn_symbols},
    fact_area::env | fact_area::loader | fact_area::python};
const Check loader_cudnn_not_found_entry{
    "loader_cudnn_not_found",
    "a libcudnn.so.N a framework needs and the loader finds nowhere",
    loader_cudnn_not_found,
    {FindingId::libcudnn8_not_found},
    fact_area::cudnn | fact_area::driver | fact_area::gpus | fact_area::loader | fact_area::python};

}  // namespace checks
}  // namespace dlenv
