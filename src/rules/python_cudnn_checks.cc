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

using namespace pyrules;
using rule_helpers::llp_without;
using rule_helpers::rule_text;
using rule_helpers::strip_slash;

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

// The copy that `context` (by-name) resolves for `name` when nothing is preloaded:
// the first shadowed one (the preload took the place of the search).
const LoadContext* by_name(const Facts& f, std::string_view root) {
  for (const auto& ctx : f.loader.contexts) {
    if (ctx.kind == "by-name" && ctx.root == root) return &ctx;
  }
  return nullptr;
}
bool in_ld_library_path(const Facts& f, const std::string& dir) {
  for (const auto& d : f.env.ld_library_path) {
    if (path_normalize(d) == path_normalize(dir)) return true;
  }
  return false;
}
// Which finding an older cuDNN is for a framework distribution.
FindingId older_cudnn_id(std::string_view dist) {
  return starts_with(dist, "jax") ? FindingId::jax_cudnn_version_mismatch
                                  : FindingId::torch_cudnn_runtime_older_than_build;
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

// From found_via strings, for environments where the loader model resolved no cuDNN
// (loader_framework_cudnn_mix decides the others, on the real files).
void pip_vs_system_cudnn(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    if (loader_resolves_cudnn(c.f, e)) continue;
    for (const auto& l : e.cuda_libs) {
      if (l.library != "cudnn" || l.version.empty()) continue;
      auto wv = Version::parse(l.version);
      if (!wv) continue;
      for (const auto& copy : c.f.cudnn) {
        if (!copy.python_site.empty() || copy.major != l.major || !copy.library_version) continue;
        bool ld = std::find(copy.found_via.begin(), copy.found_via.end(), "LD_LIBRARY_PATH") !=
                  copy.found_via.end();
        if (!ld) continue;
        if (copy.library_version->truncated(3) == wv->truncated(3)) continue;
        Finding x = make_finding(FindingId::pip_cudnn_vs_system_cudnn_symbols, Severity::error,
                                 "LD_LIBRARY_PATH puts cuDNN " + copy.library_version->str() +
                                     " (" + copy.dir + ") ahead of the cuDNN " + l.version +
                                     " wheel of " + env_name(e));
        x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
        x.evidence.push_back(ev("wheel " + l.package + " " + l.version + ": " + l.path, l.path));
        x.evidence.push_back(ev("system cuDNN " + copy.library_version->str() + " in " + copy.dir +
                                    ", on LD_LIBRARY_PATH",
                                copy.library_version.source));
        x.fix.push_back(step("remove " + copy.dir +
                                 " from LD_LIBRARY_PATH (the frameworks find their wheel cuDNN "
                                 "themselves)",
                             "export LD_LIBRARY_PATH=$(echo \"$LD_LIBRARY_PATH\" | tr ':' '\\n' "
                             "| grep -vx '" +
                                 copy.dir + "' | paste -sd:)",
                             &c));
        x.fix.push_back(step("or make the versions equal",
                             pip(e) + " install " + l.package + "==" + copy.library_version->str(),
                             &c));
        out.push_back(std::move(x));
      }
    }
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

void wheel_pins(const Ctx& c, Findings& out) {
  if (c.os != Os::linux) return;
  for (const auto& e : c.f.python) {
    for (const auto& owner : e.packages) {
      bool torch = owner.name == "torch";
      bool jax = owner.name == "jaxlib" || starts_with(owner.name, "jax-cuda");
      if (!torch && !jax) continue;
      for (const auto& text : owner.requires_nvidia) {
        auto r = parse_requirement(text);
        if (!r || !starts_with(r->name, "nvidia-cudnn-cu")) continue;
        auto lo = lower_bound(*r);
        if (!lo) continue;
        const auto* have = pkg(e, r->name);
        std::string so = "libcudnn.so." + std::to_string(lo->major());
        // Not installed at all: the import fails with "libcudnn.so.N: cannot open shared
        // object file", which --deep reports; from files alone a CPU-only use is possible.
        if (!have) continue;
        auto hv = Version::parse(have->version);
        if (!hv) continue;
        if (hv->major() != lo->major()) {
          // The loader model decides where it resolved the framework's cuDNN itself.
          if (loader_looks_for_libcudnn(c.f, e, torch ? "torch" : "jax")) continue;
          Finding x =
              make_finding(FindingId::libcudnn8_not_found, Severity::error,
                           owner.name + " " + owner.version + " in " + env_name(e) + " needs " +
                               so + ", but " + have->name + " " + have->version + " provides " +
                               "libcudnn.so." + std::to_string(hv->major()));
          x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
          x.evidence.push_back(pkg_ev(owner));
          x.evidence.push_back(ev("Requires-Dist: " + r->text, owner.source));
          x.evidence.push_back(pkg_ev(*have));
          x.fix.push_back(
              step("reinstall the cuDNN wheel it was built with (another package "
                   "replaced it), or keep the two in separate environments",
                   pip(e) + " install \"" + r->text.substr(0, r->text.find(';')) + "\"", &c));
          out.push_back(std::move(x));
          continue;
        }
        if (*hv < *lo) {
          Finding x =
              make_finding(older_cudnn_id(owner.name), Severity::error,
                           owner.name + " " + owner.version + " in " + env_name(e) +
                               " was built for " + r->text.substr(0, r->text.find(';')) + ", but " +
                               have->name + " " + have->version + " is installed");
          x.evidence.push_back(pkg_ev(owner));
          x.evidence.push_back(ev("Requires-Dist: " + r->text, owner.source));
          x.evidence.push_back(pkg_ev(*have));
          for (const auto& o : e.packages) {
            if (&o == &owner || (o.name != "torch" && !starts_with(o.name, "jax"))) continue;
            for (const auto& t2 : o.requires_nvidia) {
              auto r2 = parse_requirement(t2);
              if (r2 && r2->name == r->name) {
                x.evidence.push_back(ev(o.name + " " + o.version + " wants " + t2, o.source));
              }
            }
          }
          x.fix.push_back(
              step("install the cuDNN wheel it was built for (or keep torch and JAX "
                   "in separate environments when their pins conflict)",
                   pip(e) + " install \"" + r->text.substr(0, r->text.find(';')) + "\"", &c));
          out.push_back(std::move(x));
          continue;
        }
        // The wheel is right; a system cuDNN of the same major on LD_LIBRARY_PATH comes first.
        // Where the loader model resolved this environment's cuDNN, it decides that case
        // (pip-cudnn-vs-system-cudnn-symbols names every file): one finding per cause.
        if (loader_resolves_cudnn(c.f, e)) continue;
        for (const auto& copy : c.f.cudnn) {
          if (!copy.python_site.empty() || copy.major != lo->major() ||
              !in_ld_library_path(c.f, copy.dir) || !copy.library_version ||
              !(copy.library_version->truncated(2) < hv->truncated(2))) {
            continue;
          }
          Finding x =
              make_finding(older_cudnn_id(owner.name), Severity::error,
                           "LD_LIBRARY_PATH puts cuDNN " + copy.library_version->str() + " (" +
                               copy.dir + ") ahead of the cuDNN " + have->version + " wheel " +
                               owner.name + " in " + env_name(e) + " was built for");
          x.evidence.push_back(ev("LD_LIBRARY_PATH contains " + copy.dir, c.f.env.source));
          x.evidence.push_back(
              ev("cuDNN " + copy.library_version->str(), copy.library_version.source));
          x.evidence.push_back(pkg_ev(*have));
          x.evidence.push_back(ev("Requires-Dist: " + r->text, owner.source));
          x.fix.push_back(
              step("remove " + copy.dir + " from LD_LIBRARY_PATH (the wheels find their own cuDNN)",
                   "export LD_LIBRARY_PATH=$(echo \"$LD_LIBRARY_PATH\" | tr ':' "
                   "'\\n' | grep -vx '" +
                       copy.dir + "' | paste -sd:)",
                   &c));
          out.push_back(std::move(x));
          break;
        }
      }
    }
  }
}

// --deep: the cuDNN torch loaded vs the one it was compiled against.
void torch_deep_cudnn(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    if (!e.deep) continue;
    for (const auto& d : e.deep->frameworks) {
      if (d.name != "torch" || d.cudnn.empty() || d.cudnn_compiled.empty()) continue;
      auto n = parse_int(d.cudnn);
      auto compiled = Version::parse(d.cudnn_compiled);
      if (!n || !compiled) continue;
      Version runtime = Version::from_cudnn_int(*n);
      if (runtime.major() == compiled->major() && !(runtime.truncated(2) < compiled->truncated(2)))
        continue;
      Finding x = make_finding(FindingId::torch_cudnn_runtime_older_than_build, Severity::error,
                               "torch in " + env_name(e) + " loaded cuDNN " + runtime.str() +
                                   " but was compiled against cuDNN " + compiled->str());
      x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
      x.evidence.push_back(ev("torch.backends.cudnn.version() = " + d.cudnn +
                                  ", torch._C._cudnn.getCompileVersion() = " + d.cudnn_compiled,
                              e.deep->status.source));
      for (const auto& l : deep_loaded(e, "cudnn")) {
        x.evidence.push_back(ev("loaded " + l, deep_loaded_source(e)));
      }
      if (!deep_windows(e)) {
        x.fix.push_back(
            step("remove foreign cuDNN directories from LD_LIBRARY_PATH so torch "
                 "finds the cuDNN wheel it was built with",
                 "unset LD_LIBRARY_PATH", &c));
        out.push_back(std::move(x));
        continue;
      }
      // Windows: torch loads cudnn64_N.dll from torch\lib, unless a DLL of that name is
      // already in the process or sits in an earlier place (beside python.exe, System32).
      std::string foreign;
      for (const auto& l : deep_loaded(e, "cudnn")) {
        std::string lp = to_lower(l);
        std::replace(lp.begin(), lp.end(), '\\', '/');
        const std::string b = lp.substr(lp.find_last_of('/') + 1);
        if (b.starts_with("cudnn64_") && !contains(lp, "/site-packages/torch/lib/")) {
          foreign = l;
          break;
        }
      }
      if (!foreign.empty()) {
        const std::string b = foreign.substr(foreign.find_last_of("/\\") + 1);
        const std::string why =
            "move the cuDNN that was loaded instead of torch's own out of "
            "the way (Windows takes a " +
            b + " already loaded, or one beside python.exe, before torch\\lib's)";
        x.fix.push_back(
            step(why, "Rename-Item -LiteralPath '" + foreign + "' '" + b + ".bak'", &c));
      } else {
        x.fix.push_back(step("reinstall torch so the cuDNN DLLs in torch\\lib are its own",
                             pip(e) + " install --force-reinstall torch==" + d.version, &c));
      }
      out.push_back(std::move(x));
    }
  }
}

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check loader_framework_cudnn_mix_entry{
    "loader_framework_cudnn_mix",
    "a framework loading cuDNN/cuBLAS of two releases (loader model)",
    loader_framework_cudnn_mix,
    {FindingId::pip_cudnn_vs_system_cudnn_symbols},
    fact_area::env | fact_area::loader | fact_area::python};
extern const Check loader_cudnn_not_found_entry{
    "loader_cudnn_not_found",
    "a libcudnn.so.N a framework needs and the loader finds nowhere",
    loader_cudnn_not_found,
    {FindingId::libcudnn8_not_found},
    fact_area::cudnn | fact_area::driver | fact_area::gpus | fact_area::loader | fact_area::python};

extern const Check pip_vs_system_cudnn_entry{
    "pip_vs_system_cudnn",
    "a system cuDNN on LD_LIBRARY_PATH against the wheel's (metadata)",
    pip_vs_system_cudnn,
    {FindingId::pip_cudnn_vs_system_cudnn_symbols},
    fact_area::cudnn | fact_area::loader | fact_area::python};
extern const Check loader_preload_cudnn_entry{
    "loader_preload_cudnn",
    "a cuDNN in LD_PRELOAD or /etc/ld.so.preload",
    loader_preload_cudnn,
    {FindingId::pip_cudnn_vs_system_cudnn_symbols},
    fact_area::cudnn | fact_area::env | fact_area::loader};
extern const Check wheel_pins_entry{
    "wheel_pins",
    "NVIDIA wheels against the versions a framework pins",
    wheel_pins,
    {FindingId::jax_cudnn_version_mismatch, FindingId::libcudnn8_not_found,
     FindingId::torch_cudnn_runtime_older_than_build},
    fact_area::cudnn | fact_area::env | fact_area::loader | fact_area::python};
extern const Check torch_deep_cudnn_entry{"torch_deep_cudnn",
                                          "torch's runtime cuDNN against its build's (--deep)",
                                          torch_deep_cudnn,
                                          {FindingId::torch_cudnn_runtime_older_than_build},
                                          fact_area::python | fact_area::windows};

}  // namespace checks
}  // namespace dlenv
