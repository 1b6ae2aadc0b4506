// Rules over Python environments and frameworks (issue: "cuda available: False").
// They read Facts::python (probe/python.cc) and the framework tables of the KB
// (kb/pytorch.json, kb/tensorflow.json through Kb::file_text).
#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "kb/error_signature.h"
#include "rules/checks.h"
#include "rules/loader_coverage.h"
#include "rules/python_common.h"
#include "util/strings.h"

namespace dlenv {
namespace pyrules {

Evidence ev(std::string fact, std::string source) {
  return {std::move(fact), std::move(source)};
}
FixStep step(std::string text, std::string command, const Ctx* c) {
  std::string shell = command.empty() ? "" : (c && c->os == Os::windows ? "powershell" : "sh");
  return {std::move(text), std::move(command), shell};
}

std::string env_name(const PythonEnv& e) {
  return e.interpreter ? *e.interpreter : e.prefix;
}
// `<python> -m pip`, quoted when needed.
std::string pip(const PythonEnv& e) {
  std::string p = env_name(e);
  if (p.find(' ') != std::string::npos) p = "\"" + p + "\"";
  return p + " -m pip";
}

const PythonPackage* pkg(const PythonEnv& e, std::string_view name) {
  for (const auto& p : e.packages) {
    if (p.name == name) return &p;
  }
  return nullptr;
}
Evidence pkg_ev(const PythonPackage& p) {
  std::string s = p.name + " " + p.version + " installed in " + p.location;
  if (!p.installer.empty()) s += " (installer: " + p.installer + ")";
  return ev(s, p.source);
}

bool gpu_present(const Facts& f) {
  return !f.gpus.empty() || f.driver.kernel_module_version.ok() ||
         f.driver.nvml_driver_version.ok();
}

std::optional<DriverCuda> driver_cuda(const Ctx& c) {
  auto dv = c.f.driver.version();
  if (!dv) return std::nullopt;
  DriverCuda d;
  d.driver = *dv;
  auto support = c.kb.max_cuda_for_driver(*dv, c.os);
  if (support) {
    d.cuda = support->max_cuda;
    d.source = "knowledge base: " + support->ref.source;
    d.minor_compat_majors = support->minor_compat_majors;
    d.confirmed = support->ref.confirmed;
  }
  if (c.f.driver.cuda_driver_version) {
    d.cuda = Version::from_cuda_int(*c.f.driver.cuda_driver_version);
    d.source = c.f.driver.cuda_driver_version.source;
    d.confirmed = true;
  }
  if (d.cuda.empty()) return std::nullopt;
  return d;
}

const FrameworkFacts* fw(const PythonEnv& e, std::string_view name) {
  for (const auto& f : e.frameworks) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

}  // namespace pyrules

namespace {
using namespace pyrules;
using json = nlohmann::json;

// "cu130" -> 13.0, "cu118" -> 11.8.
std::optional<Version> variant_cuda(std::string_view v) {
  if (!starts_with(v, "cu") || v.size() < 5) return std::nullopt;
  auto n = parse_int(v.substr(2));
  if (!n) return std::nullopt;
  return Version{static_cast<int>(*n / 10), static_cast<int>(*n % 10)};
}
std::string variant_of(const Version& cuda) {
  return "cu" + std::to_string(cuda.major()) + std::to_string(cuda.minor());
}

json kb_json(const Kb& kb, std::string_view name) {
  auto text = kb.file_text(name);
  if (!text) return json();
  return json::parse(*text, nullptr, false);
}

// "2.1-2.5" / "2.11" contains torch 2.3?
bool torch_range_has(const std::string& range, const Version& mm) {
  auto parts = split(range, '-');
  if (parts.empty()) return false;
  auto lo = Version::parse(parts[0]);
  auto hi = Version::parse(parts.size() > 1 ? parts[1] : parts[0]);
  return lo && hi && !(mm < lo->truncated(2)) && !(hi->truncated(2) < mm);
}

// The torch release row (kb/pytorch.json releases[]) of a torch version.
json torch_release(const json& kb, const Version& torch) {
  if (!kb.is_object() || !kb.contains("releases")) return json();
  std::string mm = std::to_string(torch.major()) + "." + std::to_string(torch.minor());
  for (const auto& r : kb["releases"]) {
    if (r.value("torch", "") == mm) return r;
  }
  return json();
}

// The CUDA variant to reinstall torch from: the newest the release publishes that the
// driver runs (minor-version compatibility counts), else the newest of any release.
std::string pick_torch_variant(const Ctx& c, const json& kb, const Version& torch) {
  auto dc = driver_cuda(c);
  json rel = torch_release(kb, torch);
  std::vector<std::string> variants;
  if (rel.is_object()) {
    for (const auto& v : rel.value("cuda_variants", json::array())) variants.push_back(v);
  } else if (kb.is_object() && kb.contains("releases") && !kb["releases"].empty()) {
    for (const auto& v : kb["releases"][0].value("cuda_variants", json::array())) {
      variants.push_back(v);
    }
  }
  std::string best;
  Version best_v;
  for (const auto& v : variants) {
    auto cv = variant_cuda(v);
    if (!cv) continue;
    bool runs = !dc || !(dc->cuda < *cv) ||
                std::find(dc->minor_compat_majors.begin(), dc->minor_compat_majors.end(),
                          cv->major()) != dc->minor_compat_majors.end();
    if (runs && (best.empty() || best_v < *cv)) {
      best = v;
      best_v = *cv;
    }
  }
  if (best.empty()) best = dc ? variant_of(dc->cuda) : "cu126";
  return best;
}

std::string torch_reinstall(const PythonEnv& e, const std::string& torch_version,
                            const std::string& variant) {
  std::string base = torch_version.substr(0, torch_version.find('+'));
  return pip(e) + " install --force-reinstall torch==" + base +
         " torchvision torchaudio --index-url https://download.pytorch.org/whl/" + variant;
}

const FrameworkFacts* framework(const PythonEnv& e, std::string_view name) {
  for (const auto& f : e.frameworks) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// ---- torch ------------------------------------------------------------------

struct ArchList {
  std::vector<Version> sass;
  std::optional<Version> ptx;
  std::string text;
  std::string source;
  bool confirmed = false;
};

// "5.0;6.0;9.0 (aarch64 ...)" / "7.5;...;12.0+PTX": the x86-64 list.
ArchList parse_arch_list(std::string text) {
  ArchList a;
  a.text = text;
  if (auto p = text.find(" ("); p != std::string::npos) text = text.substr(0, p);
  if (auto p = text.find("aarch64"); p != std::string::npos) text = text.substr(0, p);
  for (const auto& tok : split(text, ';')) {
    std::string t(trim(tok));
    bool ptx = ends_with(t, "+PTX");
    if (ptx) t = t.substr(0, t.size() - 4);
    auto v = Version::parse(t);
    if (!v) continue;
    a.sass.push_back(*v);
    if (ptx) a.ptx = *v;
  }
  std::sort(a.sass.begin(), a.sass.end());
  return a;
}

std::optional<ArchList> torch_arch_list(const json& kb, const Version& torch,
                                        const std::string& variant) {
  if (!kb.is_object() || !kb.contains("wheel_arch_lists")) return std::nullopt;
  Version mm = torch.truncated(2);
  for (const auto& r : kb["wheel_arch_lists"]) {
    if (!torch_range_has(r.value("torch", ""), mm)) continue;
    auto vs = split(r.value("variant", ""), '/');
    if (std::find(vs.begin(), vs.end(), variant) == vs.end()) continue;
    ArchList a = parse_arch_list(r.value("arch_list", ""));
    a.source = r.value("source", "kb/pytorch.json");
    a.confirmed = r.value("confirmed", false);
    return a;
  }
  return std::nullopt;
}

bool arch_runs(const ArchList& a, const Version& cc) {
  for (const auto& s : a.sass) {
    if (s.major() == cc.major() && s.minor() <= cc.minor()) return true;
  }
  return a.ptx && !(cc < *a.ptx);
}

// "python": ">=3.10, <=3.14 (3.14t experimental)" -> [3.10, 3.14]
std::optional<std::pair<Version, Version>> python_range(const std::string& s) {
  std::optional<Version> lo, hi;
  for (const auto& part : split(s, ',')) {
    std::string p(trim(part));
    if (starts_with(p, ">=")) lo = Version::parse(p.substr(2));
    if (starts_with(p, "<=")) hi = Version::parse(p.substr(2));
  }
  if (!lo || !hi) {
    auto d = split(s, '-');  // "3.10-3.13"
    if (d.size() == 2) {
      lo = Version::parse(d[0]);
      hi = Version::parse(d[1]);
    }
  }
  if (!lo || !hi) return std::nullopt;
  return std::make_pair(lo->truncated(2), hi->truncated(2));
}

// ---- TensorFlow, JAX, Paddle, ONNX Runtime, CuPy, CTranslate2 ---------------

// System CUDA/cuDNN library directories that LD_LIBRARY_PATH puts first.
std::vector<Evidence> ld_library_path_cuda_dirs(const Facts& f) {
  std::vector<Evidence> out;
  for (const auto& copy : f.cudnn) {
    if (!copy.python_site.empty()) continue;
    if (std::find(copy.found_via.begin(), copy.found_via.end(), "LD_LIBRARY_PATH") !=
        copy.found_via.end()) {
      std::string v = copy.library_version ? copy.library_version->str() : "?";
      out.push_back(
          ev("LD_LIBRARY_PATH puts cuDNN " + v + " in " + copy.dir + " first",
             copy.library_version.source.empty() ? copy.dir : copy.library_version.source));
    }
  }
  for (const auto& t : f.toolkits) {
    if (t.active_ld_library_path) {
      out.push_back(ev("LD_LIBRARY_PATH includes the CUDA " +
                           (t.version ? t.version->str() : std::string("?")) + " libraries of " +
                           t.root,
                       f.env.source));
    }
  }
  return out;
}

// ---- IDE vs shell -------------------------------------------------------------

bool found_by(const PythonEnv& e, std::string_view prefix) {
  for (const auto& v : e.found_via) {
    if (starts_with(v, prefix)) return true;
  }
  return false;
}

// The GPU builds of an environment: "torch 2.11.0+cu130", ...
std::vector<std::string> gpu_builds(const PythonEnv& e) {
  std::vector<std::string> out;
  for (const auto& f : e.frameworks) {
    if (f.cuda_build.ok() && *f.cuda_build) out.push_back(f.package + " " + f.version);
  }
  return out;
}

// ---- Windows, TensorFlow libraries, ONNX Runtime libraries ------------------------

// CUDA library majors this environment can load: its own wheels, system cuDNN copies
// and toolkits.
struct Available {
  std::set<int> cudnn;
  std::set<int> cudart;
  std::vector<Evidence> evidence;
};
Available available_libs(const Ctx& c, const PythonEnv& e) {
  Available a;
  for (const auto& l : e.cuda_libs) {
    if (l.library == "cudnn") a.cudnn.insert(l.major);
    if (l.library == "cudart") a.cudart.insert(l.major);
    if (l.library == "cudnn" || l.library == "cudart") {
      a.evidence.push_back(
          ev("wheel lib" + l.library + " major " + std::to_string(l.major), l.path));
    }
  }
  for (const auto& copy : c.f.cudnn) {
    if (!copy.python_site.empty() && copy.python_site.find(e.prefix) != 0) continue;
    a.cudnn.insert(copy.major);
    a.evidence.push_back(
        ev("cuDNN " + std::to_string(copy.major) + " in " + copy.dir, copy.library));
  }
  for (const auto& t : c.f.toolkits) {
    if (!t.version) continue;
    a.cudart.insert(t.version->major());
    a.evidence.push_back(
        ev("CUDA toolkit " + t.version->str() + " at " + t.root, t.version.source));
  }
  return a;
}

// The provider library's own dependency list, resolved by the loader model: the exact
// sonames (DLL names) that are missing, and the wheel copies the loader does not search.
void ort_provider_needed(const Ctx& c, const PythonEnv& e, const PythonPackage& ort,
                         const FrameworkFacts& f, Findings& out) {
  std::vector<const NeededLibrary*> missing;
  for (const auto& n : f.needed) {
    if (n.resolved.empty()) missing.push_back(&n);
  }
  if (missing.empty()) return;
  std::vector<std::string> names;
  std::set<std::string> wheel_dirs;
  bool all_in_wheels = true;
  for (const auto* n : missing) {
    names.push_back(n->name);
    if (n->wheel_copy.empty()) {
      all_in_wheels = false;
    } else {
      wheel_dirs.insert(path_dirname(n->wheel_copy));
    }
  }
  const bool win = c.os == Os::windows;
  Finding x = make_finding(
      FindingId::ort_cuda_provider_load_failure, Severity::error,
      "onnxruntime-gpu " + ort.version + " in " + env_name(e) +
          ": the CUDA provider cannot load, " + join(names, ", ") +
          (names.size() == 1 ? " is" : " are") + " not found" +
          (all_in_wheels ? " on the loader path (only in pip wheel directories)" : ""));
  x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
  x.evidence.push_back(pkg_ev(ort));
  for (const auto& n : f.needed) {
    if (!n.resolved.empty()) {
      x.evidence.push_back(ev(f.gpu_library + " needs " + n.name + ": " + n.resolved, n.via));
    } else if (!n.wheel_copy.empty()) {
      x.evidence.push_back(
          ev(f.gpu_library + " needs " + n.name +
                 ": not on the loader path; a pip wheel copy is at " + n.wheel_copy,
             win ? "PE imports of " + f.gpu_library : "DT_NEEDED of " + f.gpu_library));
    } else {
      x.evidence.push_back(
          ev(f.gpu_library + " needs " + n.name + ": not found anywhere",
             win ? "PE imports of " + f.gpu_library : "DT_NEEDED of " + f.gpu_library));
    }
  }
  if (!wheel_dirs.empty()) {
    std::vector<std::string> dirs(wheel_dirs.begin(), wheel_dirs.end());
    x.fix.push_back(
        step("let ONNX Runtime preload the NVIDIA wheels before creating the "
             "session (onnxruntime >= 1.21), or import torch first",
             env_name(e) + " -c \"import onnxruntime as ort; ort.preload_dlls(); "
                           "print(ort.get_available_providers())\"",
             &c));
    x.fix.push_back(step("or put the wheel directories on the loader path",
                         win ? "$env:PATH = \"" + join(dirs, ";") + ";$env:PATH\""
                             : "export LD_LIBRARY_PATH=" + join(dirs, ":") + ":$LD_LIBRARY_PATH",
                         &c));
  }
  if (!all_in_wheels) {
    bool cudnn8 = false, cuda11 = false;
    for (const auto* n : missing) {
      cudnn8 |=
          contains(n->name, "cudnn") && (ends_with(n->name, ".so.8") || contains(n->name, "64_8"));
      cuda11 |= ends_with(n->name, ".so.11") || contains(n->name, "64_11");
    }
    if (cudnn8 || cuda11) {
      x.fix.push_back(
          step("this onnxruntime-gpu is built for CUDA 11 / cuDNN 8: install those, "
               "or upgrade to onnxruntime-gpu >= 1.19 (CUDA 12, cuDNN 9)",
               pip(e) + " install -U \"onnxruntime-gpu[cuda,cudnn]\"", &c));
    } else {
      x.fix.push_back(step("install the CUDA and cuDNN wheels it links against",
                           pip(e) + " install \"onnxruntime-gpu[cuda,cudnn]==" + ort.version + "\"",
                           &c));
    }
  }
  out.push_back(std::move(x));
}

// ---- --deep: what the frameworks said when imported ----------------------------

}  // namespace

namespace checks {

using namespace pyrules;

void torch_cpu_build(const Ctx& c, Findings& out) {
  if (!gpu_present(c.f)) return;  // a CPU build on a CPU-only machine is right
  json kb = kb_json(c.kb, "pytorch.json");
  for (const auto& e : c.f.python) {
    const auto* t = framework(e, "torch");
    if (!t) continue;
    bool cpu = t->local_tag == "cpu" || (t->cuda_build.ok() && !*t->cuda_build);
    if (!cpu || starts_with(t->local_tag, "rocm")) continue;
    Finding x = make_finding(FindingId::torch_cpu_build_installed, Severity::error,
                             "torch " + t->version + " in " + env_name(e) +
                                 " is a CPU-only build: torch.cuda.is_available() is False");
    x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
    if (const auto* p = pkg(e, "torch")) x.evidence.push_back(pkg_ev(*p));
    if (!t->cuda.ok() && !t->cuda.source.empty()) {
      x.evidence.push_back(
          ev("torch.version.cuda is None (" + t->cuda.reason + ")", t->cuda.source));
    }
    if (!c.f.gpus.empty() && c.f.gpus[0].name) {
      x.evidence.push_back(ev("NVIDIA GPU present: " + *c.f.gpus[0].name, c.f.gpus[0].source));
    }
    std::string variant =
        pick_torch_variant(c, kb, Version::parse(t->version).value_or(Version{2, 11}));
    x.fix.push_back(
        step("remove the CPU build", pip(e) + " uninstall -y torch torchvision torchaudio", &c));
    x.fix.push_back(step("install the CUDA build (" + variant + ", which this driver runs)",
                         torch_reinstall(e, t->version, variant), &c));
    out.push_back(std::move(x));
  }
}

void torch_companions_mixed(const Ctx& c, Findings& out) {
  json kb = kb_json(c.kb, "pytorch.json");
  for (const auto& e : c.f.python) {
    const auto* torch = pkg(e, "torch");
    if (!torch) continue;
    std::vector<const PythonPackage*> set = {torch};
    for (const char* n : {"torchvision", "torchaudio"}) {
      if (const auto* p = pkg(e, n)) set.push_back(p);
    }
    if (set.size() < 2) continue;
    std::set<std::string> tags;
    for (const auto* p : set) {
      std::string v = p->version;
      auto plus = v.find('+');
      tags.insert(plus == std::string::npos ? "" : v.substr(plus + 1));
    }
    if (tags.size() < 2) continue;
    bool cpu_vs_cuda = tags.contains("cpu");
    Finding x = make_finding(FindingId::pip_replaced_cuda_torch_with_pypi_build,
                             cpu_vs_cuda ? Severity::error : Severity::warning,
                             "torch, torchvision and torchaudio in " + env_name(e) +
                                 " come from different builds (" + torch->version + " vs " +
                                 set[1]->version + ")");
    for (const auto* p : set) x.evidence.push_back(pkg_ev(*p));
    std::string variant;
    for (const auto& t : tags) {
      if (starts_with(t, "cu")) variant = t;
    }
    if (variant.empty()) {
      variant = pick_torch_variant(c, kb, Version::parse(torch->version).value_or(Version{2, 11}));
    }
    x.fix.push_back(step("reinstall all three from the same PyTorch index",
                         torch_reinstall(e, torch->version, variant), &c));
    x.fix.push_back(step(
        "later installs must keep that index, or pip replaces torch with the PyPI build again: "
        "add `--index-url https://download.pytorch.org/whl/" +
        variant + "` (or pin torch in a constraints file)"));
    out.push_back(std::move(x));
  }
}

void torch_driver_too_old(const Ctx& c, Findings& out) {
  auto dc = driver_cuda(c);
  if (!dc) return;
  json kb = kb_json(c.kb, "pytorch.json");
  for (const auto& e : c.f.python) {
    const auto* t = framework(e, "torch");
    if (!t || !t->cuda) continue;
    auto tv = Version::parse(*t->cuda);
    if (!tv) continue;
    Version need = tv->truncated(2);
    if (!(dc->cuda < need)) continue;
    bool minor = std::find(dc->minor_compat_majors.begin(), dc->minor_compat_majors.end(),
                           need.major()) != dc->minor_compat_majors.end();
    Finding x = make_finding(
        FindingId::torch_driver_too_old, minor ? Severity::warning : Severity::error,
        minor ? "torch " + t->version + " (CUDA " + need.str() + ") runs on driver " +
                    dc->driver.str() + " (CUDA " + dc->cuda.str() +
                    ") only through minor-version compatibility"
              : "torch " + t->version + " in " + env_name(e) + " needs CUDA " + need.str() +
                    ", driver " + dc->driver.str() + " supports only CUDA " + dc->cuda.str());
    x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
    if (!dc->confirmed && x.severity == Severity::error) x.severity = Severity::warning;
    x.confirmed = dc->confirmed;
    x.evidence.push_back(ev("torch.version.cuda = " + *t->cuda, t->cuda.source));
    x.evidence.push_back(
        ev("driver " + dc->driver.str() + " supports CUDA " + dc->cuda.str(), dc->source));
    if (auto need_drv = c.kb.min_driver_for_cuda(need, c.os, false)) {
      x.fix.push_back(
          step("install driver " + need_drv->str() + " or newer (CUDA " + need.str() + ")"));
    }
    std::string variant =
        pick_torch_variant(c, kb, Version::parse(t->version).value_or(Version{2, 11}));
    auto vc = variant_cuda(variant);
    bool runs = vc && (!(dc->cuda < *vc) ||
                       std::find(dc->minor_compat_majors.begin(), dc->minor_compat_majors.end(),
                                 vc->major()) != dc->minor_compat_majors.end());
    if (runs && vc->truncated(2) != need) {
      x.fix.push_back(
          step("or install the torch build for CUDA " + vc->str() + " that this driver runs",
               torch_reinstall(e, t->version, variant), &c));
    }
    out.push_back(std::move(x));
  }
}

void torch_gpu_arch(const Ctx& c, Findings& out) {
  json kb = kb_json(c.kb, "pytorch.json");
  for (const auto& e : c.f.python) {
    const auto* t = framework(e, "torch");
    if (!t || !t->cuda) continue;
    auto tv = Version::parse(t->version);
    auto cv = Version::parse(*t->cuda);
    if (!tv || !cv) continue;
    std::string variant = starts_with(t->local_tag, "cu") ? t->local_tag : variant_of(*cv);
    auto arch = torch_arch_list(kb, *tv, variant);
    if (!arch || arch->sass.empty()) continue;
    for (const auto& g : c.f.gpus) {
      if (!g.visible || !g.compute_capability) continue;
      const Version& cc = *g.compute_capability;
      if (arch_runs(*arch, cc)) continue;
      bool too_old = cc < arch->sass.front();
      std::string gname = g.name ? *g.name : "GPU " + std::to_string(g.index);
      Finding x = make_finding(
          too_old ? FindingId::gpu_too_old_for_wheel : FindingId::no_kernel_image_new_gpu,
          arch->confirmed ? Severity::error : Severity::warning,
          gname + " (sm_" + std::to_string(cc.major()) + std::to_string(cc.minor()) +
              ") is not in the architectures of torch " + t->version + " (" + variant + ")");
      x.confirmed = arch->confirmed;
      x.evidence.push_back(
          ev(gname + " compute capability " + cc.str(), g.compute_capability.source));
      x.evidence.push_back(
          ev("torch " + t->version + " " + variant + " wheels are built for " + arch->text,
             "knowledge base kb/pytorch.json wheel_arch_lists: " + arch->source));
      // Variants of the same release whose list includes this GPU.
      std::vector<std::string> good;
      json rel = torch_release(kb, *tv);
      if (rel.is_object()) {
        for (const auto& v : rel.value("cuda_variants", json::array())) {
          auto a = torch_arch_list(kb, *tv, v.get<std::string>());
          if (a && arch_runs(*a, cc)) good.push_back(v.get<std::string>());
        }
      }
      if (!good.empty()) {
        x.fix.push_back(step("install a torch " + tv->truncated(2).str() +
                                 " build that includes sm_" + std::to_string(cc.major()) +
                                 std::to_string(cc.minor()) + " (" + join(good, ", ") + ")",
                             torch_reinstall(e, t->version, good.back()), &c));
      } else if (too_old) {
        x.fix.push_back(
            step("use an older torch whose wheels still include this GPU (e.g. the cu126 builds "
                 "cover 5.0-9.0), build torch from source with TORCH_CUDA_ARCH_LIST=" +
                 cc.str() + ", or run on the CPU"));
      } else {
        x.fix.push_back(
            step("install a newer torch built with a CUDA that supports this GPU "
                 "(e.g. cu128 or newer for Blackwell)",
                 pip(e) + " install --upgrade torch torchvision torchaudio "
                          "--index-url https://download.pytorch.org/whl/cu130",
                 &c));
      }
      out.push_back(std::move(x));
    }
  }
}

void python_version_unsupported(const Ctx& c, Findings& out) {
  json pt = kb_json(c.kb, "pytorch.json");
  json tf = kb_json(c.kb, "tensorflow.json");
  for (const auto& e : c.f.python) {
    if (!e.version) continue;
    auto pv = Version::parse(*e.version);
    if (!pv || pv->parts().size() < 2) continue;
    Version py = pv->truncated(2);
    for (const auto& fw : e.frameworks) {
      auto fv = Version::parse(fw.version);
      if (!fv) continue;
      std::string range, source;
      if (fw.name == "torch") {
        json rel = torch_release(pt, *fv);
        if (rel.is_object() && rel["python"].is_string()) {
          range = rel["python"];
          source = rel.value("source", "kb/pytorch.json");
        }
      } else if (fw.name == "tensorflow" && tf.is_object() && tf.contains("linux_gpu")) {
        for (const auto& r : tf["linux_gpu"]) {
          auto rv = Version::parse(r.value("tf_version", ""));
          if (rv && rv->truncated(2) == fv->truncated(2) && r["python"].is_string()) {
            range = r["python"];
            source = r.value("source", "kb/tensorflow.json");
            break;
          }
        }
      }
      auto rr = python_range(range);
      if (!rr || (!(py < rr->first) && !(rr->second < py))) continue;
      Finding x = make_finding(
          FindingId::python_version_unsupported_by_framework, Severity::warning,
          fw.name + " " + fw.version + " supports Python " + rr->first.str() + "-" +
              rr->second.str() + ", but " + env_name(e) + " is Python " + e.version.value.value());
      x.evidence.push_back(ev("Python " + *e.version, e.version.source));
      x.evidence.push_back(ev(fw.name + " " + fw.version + " supports Python " + range,
                              "knowledge base: " + source));
      x.fix.push_back(step("use a Python in " + rr->first.str() + "-" + rr->second.str() +
                           " for this " + fw.name + " (a new venv or conda env), or upgrade " +
                           fw.name + " to a release that supports Python " + py.str()));
      out.push_back(std::move(x));
    }
  }
}

void tf_gpu_package(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    const auto* p = pkg(e, "tensorflow-gpu");
    if (!p) continue;
    Finding x = make_finding(FindingId::tensorflow_gpu_package_removed, Severity::warning,
                             "tensorflow-gpu " + p->version + " in " + env_name(e) +
                                 " is the discontinued package name");
    x.evidence.push_back(pkg_ev(*p));
    x.evidence.push_back(
        ev("since Dec 2022 tensorflow-gpu on PyPI is an empty package that "
           "fails to install; tensorflow itself has GPU support",
           "failure catalog D20"));
    x.fix.push_back(step("replace it",
                         pip(e) + " uninstall -y tensorflow-gpu && " + pip(e) +
                             (c.os == Os::windows ? " install \"tensorflow<2.11\""
                                                  : " install 'tensorflow[and-cuda]'"),
                         &c));
    x.fix.push_back(step("and change tensorflow-gpu to tensorflow in requirements files"));
    out.push_back(std::move(x));
  }
}

void jax_cpu_only(const Ctx& c, Findings& out) {
  if (!gpu_present(c.f)) return;
  for (const auto& e : c.f.python) {
    const auto* j = framework(e, "jax");
    if (!j || !j->cuda_build.ok() || *j->cuda_build) continue;
    Finding x = make_finding(FindingId::jax_cpu_only_jaxlib, Severity::error,
                             "JAX " + j->version + " in " + env_name(e) +
                                 " has no CUDA plugin: it falls back to the CPU");
    x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
    if (const auto* p = pkg(e, "jax")) x.evidence.push_back(pkg_ev(*p));
    if (const auto* p = pkg(e, "jaxlib")) x.evidence.push_back(pkg_ev(*p));
    x.evidence.push_back(ev("no jax-cuda12-plugin / jax-cuda13-plugin installed",
                            e.site_packages.empty() ? e.prefix : e.site_packages[0]));
    if (c.os == Os::windows) {
      x.fix.push_back(
          step("JAX publishes no CUDA builds for native Windows: use WSL2 and "
               "install jax[cuda12] there"));
    } else {
      auto dc = driver_cuda(c);
      std::string extra = dc && dc->cuda.major() >= 13 ? "cuda13" : "cuda12";
      x.fix.push_back(step("install the CUDA plugin matching the driver",
                           pip(e) + " install -U \"jax[" + extra + "]\"", &c));
    }
    out.push_back(std::move(x));
  }
}

void jax_ld_library_path(const Ctx& c, Findings& out) {
  if (c.os == Os::windows) return;
  for (const auto& e : c.f.python) {
    const auto* j = framework(e, "jax");
    if (!j || !j->cuda_build.ok() || !*j->cuda_build || e.cuda_libs.empty()) continue;
    auto dirs = ld_library_path_cuda_dirs(c.f);
    if (dirs.empty()) continue;
    Finding x =
        make_finding(FindingId::jax_ld_library_path_overrides_wheels, Severity::warning,
                     "LD_LIBRARY_PATH puts system CUDA libraries ahead of the NVIDIA wheels JAX " +
                         j->version + " in " + env_name(e) + " uses");
    x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
    for (const auto& cp : j->cuda_packages) x.evidence.push_back(ev(cp + " installed", e.prefix));
    x.evidence.push_back(ev("wheel copy " + e.cuda_libs[0].path, e.cuda_libs[0].path));
    for (auto& d : dirs) x.evidence.push_back(std::move(d));
    x.fix.push_back(step(
        "start Python without the system CUDA directories",
        "env -u LD_LIBRARY_PATH " + env_name(e) + " -c 'import jax; print(jax.devices())'", &c));
    x.fix.push_back(
        step("or remove the CUDA/cuDNN directories from LD_LIBRARY_PATH in your "
             "shell profile / module setup"));
    out.push_back(std::move(x));
  }
}

void paddle_cpu(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    const auto* cpu = pkg(e, "paddlepaddle");
    const auto* gpu = pkg(e, "paddlepaddle-gpu");
    const auto* fw = framework(e, "paddle");
    if (!fw) continue;
    bool both = cpu && gpu;
    bool cpu_only = (cpu && !gpu) || (fw->cuda_build.ok() && !*fw->cuda_build);
    if (!both && !(cpu_only && gpu_present(c.f))) continue;
    Finding x =
        make_finding(FindingId::paddle_cpu_package_installed, Severity::error,
                     both ? "paddlepaddle (CPU) and paddlepaddle-gpu are both installed in " +
                                env_name(e) + ": one overwrites the other's paddle module"
                          : "the CPU build of PaddlePaddle is installed in " + env_name(e));
    x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
    if (cpu) x.evidence.push_back(pkg_ev(*cpu));
    if (gpu) x.evidence.push_back(pkg_ev(*gpu));
    if (fw->cuda_build.ok()) {
      x.evidence.push_back(
          ev(std::string("paddle/version: with_gpu = ") + (*fw->cuda_build ? "ON" : "OFF"),
             fw->cuda_build.source));
    }
    auto dc = driver_cuda(c);
    std::string variant = dc && dc->cuda.major() >= 13 ? "cu130" : "cu126";
    x.fix.push_back(
        step("remove both packages", pip(e) + " uninstall -y paddlepaddle paddlepaddle-gpu", &c));
    x.fix.push_back(step("install only the GPU package from Paddle's index (" + variant + ")",
                         pip(e) +
                             " install paddlepaddle-gpu -i "
                             "https://www.paddlepaddle.org.cn/packages/stable/" +
                             variant + "/",
                         &c));
    out.push_back(std::move(x));
  }
}

void ort_both(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    const auto* cpu = pkg(e, "onnxruntime");
    const auto* gpu = pkg(e, "onnxruntime-gpu");
    if (!cpu || !gpu) continue;
    Finding x = make_finding(FindingId::ort_cpu_and_gpu_packages_coexist, Severity::error,
                             "onnxruntime and onnxruntime-gpu are both installed in " +
                                 env_name(e) + ": the CPU package can shadow the CUDA provider");
    x.evidence.push_back(pkg_ev(*cpu));
    x.evidence.push_back(pkg_ev(*gpu));
    x.fix.push_back(step("uninstall both, then install only the GPU package",
                         pip(e) + " uninstall -y onnxruntime onnxruntime-gpu && " + pip(e) +
                             " install onnxruntime-gpu==" + gpu->version,
                         &c));
    out.push_back(std::move(x));
  }
}

void cupy_multiple(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    const auto* cp = framework(e, "cupy");
    if (!cp || cp->cuda_packages.size() < 2) continue;
    Finding x = make_finding(FindingId::cupy_multiple_packages, Severity::error,
                             "several CuPy packages are installed in " + env_name(e) + ": " +
                                 join(cp->cuda_packages, ", "));
    for (const auto& p : e.packages) {
      if (p.name == "cupy" || starts_with(p.name, "cupy-cuda")) x.evidence.push_back(pkg_ev(p));
    }
    auto dc = driver_cuda(c);
    std::string keep = dc && dc->cuda.major() >= 13 ? "cupy-cuda13x" : "cupy-cuda12x";
    std::string all;
    for (const auto& p : e.packages) {
      if (p.name == "cupy" || starts_with(p.name, "cupy-cuda")) all += " " + p.name;
    }
    x.fix.push_back(
        step("uninstall all of them, then install exactly one for the driver's CUDA major",
             pip(e) + " uninstall -y" + all + " && " + pip(e) + " install " + keep, &c));
    out.push_back(std::move(x));
  }
}

void cupy_major(const Ctx& c, Findings& out) {
  auto dc = driver_cuda(c);
  for (const auto& e : c.f.python) {
    const auto* cp = framework(e, "cupy");
    if (!cp || !cp->cuda) continue;
    auto major = parse_int(*cp->cuda);
    if (!major) continue;
    int m = static_cast<int>(*major);
    bool driver_short = dc && dc->cuda.major() < m;
    bool runtime = false;
    std::vector<Evidence> have;
    for (const auto& l : e.cuda_libs) {
      if (l.library == "cudart") {
        runtime |= l.major == m;
        have.push_back(ev("wheel libcudart.so." + std::to_string(l.major), l.path));
      }
    }
    for (const auto& t : c.f.toolkits) {
      if (!t.version) continue;
      runtime |= t.version->major() == m;
      have.push_back(ev("CUDA toolkit " + t.version->str() + " at " + t.root, t.version.source));
    }
    if (!driver_short && runtime) continue;
    if (!driver_short && !gpu_present(c.f)) continue;
    Finding x = make_finding(
        FindingId::cupy_cuda_major_mismatch, Severity::error,
        driver_short ? cp->package + " in " + env_name(e) + " needs CUDA " + std::to_string(m) +
                           ", driver " + dc->driver.str() + " supports only CUDA " + dc->cuda.str()
                     : cp->package + " in " + env_name(e) + " needs a CUDA " + std::to_string(m) +
                           " runtime and none is installed");
    x.evidence.push_back(
        ev(cp->package + " " + cp->version + " is built for CUDA " + std::to_string(m) + ".x",
           cp->cuda.source));
    if (driver_short)
      x.evidence.push_back(ev("driver supports CUDA " + dc->cuda.str(), dc->source));
    for (auto& h : have) x.evidence.push_back(std::move(h));
    if (have.empty()) {
      x.evidence.push_back(ev("no CUDA toolkit and no nvidia-cuda-runtime wheel found", e.prefix));
    }
    if (driver_short) {
      std::string fit = "cupy-cuda" + std::to_string(dc->cuda.major()) + "x";
      x.fix.push_back(
          step("install the CuPy package of the driver's CUDA major",
               pip(e) + " uninstall -y " + cp->package + " && " + pip(e) + " install " + fit, &c));
    } else {
      x.fix.push_back(step("install the CUDA " + std::to_string(m) + " runtime libraries as wheels",
                           pip(e) + " install \"" + cp->package + "[ctk]\"", &c));
      x.fix.push_back(step("or install a CUDA " + std::to_string(m) +
                           ".x toolkit and put its lib directory on the loader path"));
    }
    out.push_back(std::move(x));
  }
}

void ctranslate2_cudnn(const Ctx& c, Findings& out) {
  if (!gpu_present(c.f) || c.os == Os::windows) return;
  for (const auto& e : c.f.python) {
    const auto* ct = framework(e, "ctranslate2");
    // Where the loader model resolved (or missed) the cuDNN ctranslate2 opens, it decides
    // (libcudnn8-not-found, rules/loader_framework_rules.cc).
    if (!ct || loader_looks_for_libcudnn(c.f, e, "ctranslate2")) continue;
    auto v = Version::parse(ct->version);
    if (!v) continue;
    int need = *v < Version{4, 5} ? 8 : 9;
    bool system = false, wheel = false;
    std::vector<Evidence> have;
    for (const auto& copy : c.f.cudnn) {
      if (!copy.python_site.empty()) continue;
      system |= copy.major == need;
      have.push_back(
          ev("system cuDNN " + std::to_string(copy.major) + " at " + copy.dir, copy.library));
    }
    std::string wheel_dir;
    for (const auto& l : e.cuda_libs) {
      if (l.library != "cudnn") continue;
      if (l.major == need) {
        wheel = true;
        wheel_dir = path_dirname(l.path);
      }
      have.push_back(
          ev("wheel cuDNN " + std::to_string(l.major) + " (" + l.package + " " + l.version + ")",
             l.path));
    }
    if (system) continue;
    Finding x = make_finding(
        FindingId::ctranslate2_cudnn8_vs_9, wheel ? Severity::warning : Severity::error,
        "ctranslate2 " + ct->version + " in " + env_name(e) + " needs cuDNN " +
            std::to_string(need) +
            (wheel ? ", which is only in a pip wheel directory the loader does not search"
                   : ", which is not installed"));
    x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
    if (const auto* p = pkg(e, "ctranslate2")) x.evidence.push_back(pkg_ev(*p));
    x.evidence.push_back(ev(std::string("ctranslate2 ") + (need == 8 ? "< 4.5" : ">= 4.5") +
                                " loads cuDNN " + std::to_string(need),
                            "failure catalog D17"));
    for (auto& h : have) x.evidence.push_back(std::move(h));
    if (wheel) {
      x.fix.push_back(step("put the wheel's cuDNN on the loader path",
                           "export LD_LIBRARY_PATH=" + wheel_dir + ":$LD_LIBRARY_PATH", &c));
    } else if (need == 9) {
      x.fix.push_back(step("install cuDNN 9 for CUDA 12 as a wheel and put it on the loader path",
                           pip(e) + " install nvidia-cudnn-cu12", &c));
    } else {
      x.fix.push_back(step("use ctranslate2 >= 4.5 with cuDNN 9, or install cuDNN 8",
                           pip(e) + " install -U 'ctranslate2>=4.5' nvidia-cudnn-cu12", &c));
    }
    out.push_back(std::move(x));
  }
}

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

void ide_vs_shell(const Ctx& c, Findings& out) {
  const PythonEnv* shell = nullptr;
  for (const auto& e : c.f.python) {
    if (found_by(e, "PATH")) {
      shell = &e;
      break;
    }
  }
  if (!shell) return;
  for (const auto& e : c.f.python) {
    if (&e == shell || !e.interpreter) continue;
    std::string ide = found_by(e, "PyCharm") ? "PyCharm" : found_by(e, "VS Code") ? "VS Code" : "";
    if (ide.empty()) continue;
    auto a = gpu_builds(*shell);
    auto b = gpu_builds(e);
    if (a.empty() == b.empty()) continue;
    Finding x = make_finding(FindingId::ide_interpreter_differs_from_shell, Severity::warning,
                             ide + " runs " + env_name(e) + (b.empty() ? " (no GPU build)" : "") +
                                 ", the shell runs " + env_name(*shell) +
                                 (a.empty() ? " (no GPU build)" : "") +
                                 ": only one of them can use the GPU");
    x.evidence.push_back(
        ev(ide + " interpreter " + env_name(e) + ": " +
               (b.empty() ? std::string("no CUDA framework build") : join(b, ", ")),
           e.found_via.empty() ? "" : e.found_via[0]));
    x.evidence.push_back(
        ev("shell interpreter " + env_name(*shell) + ": " +
               (a.empty() ? std::string("no CUDA framework build") : join(a, ", ")),
           shell->found_via.empty() ? "" : shell->found_via[0]));
    const PythonEnv& good = a.empty() ? e : *shell;
    x.fix.push_back(step("point " + ide +
                         " and the shell at the same interpreter, the one with "
                         "the GPU build: " +
                         env_name(good) +
                         (ide == "PyCharm" ? " (Settings > Project > Python Interpreter)"
                                           : " (Python: Select Interpreter, or "
                                             "python.defaultInterpreterPath in "
                                             ".vscode/settings.json)")));
    out.push_back(std::move(x));
  }
}

// An IDE's project interpreter that does not exist (the probe keeps it as a not-found
// interpreter with the IDE setting as its source).
void ide_interpreter_stale(const Ctx& c, Findings& out) {
  const PythonEnv* usable = nullptr;  // an existing interpreter to point the IDE at
  for (const auto& e : c.f.python) {
    if (!e.interpreter) continue;
    if (!usable || (gpu_builds(*usable).empty() && !gpu_builds(e).empty())) usable = &e;
  }
  for (const auto& e : c.f.python) {
    if (e.interpreter || e.interpreter.status != FactStatus::not_found) continue;
    const std::string ide = found_by(e, "PyCharm")   ? "PyCharm"
                            : found_by(e, "VS Code") ? "VS Code"
                                                     : "";
    if (ide.empty()) continue;
    Finding x = make_finding(
        FindingId::ide_interpreter_stale, Severity::warning,
        ide + "'s interpreter for this project does not exist (" + e.interpreter.reason + ")");
    x.evidence.push_back(ev(e.interpreter.reason, e.interpreter.source));
    const std::string where = ide == "PyCharm" ? " (Settings > Project > Python Interpreter)"
                                               : " (Python: Select Interpreter)";
    x.fix.push_back(step(usable ? "point " + ide + " at an interpreter that exists, " +
                                      env_name(*usable) +
                                      (gpu_builds(*usable).empty()
                                           ? std::string()
                                           : " (it has " + join(gpu_builds(*usable), ", ") + ")") +
                                      where
                                : "point " + ide +
                                      " at an interpreter that exists, the environment with your "
                                      "GPU framework" +
                                      where));
    out.push_back(std::move(x));
  }
}

void win_32bit_python(const Ctx& c, Findings& out) {
  if (c.os != Os::windows) return;
  for (const auto& e : c.f.python) {
    if (!e.bits || *e.bits != 32) continue;
    Finding x =
        make_finding(FindingId::win_32bit_python_no_torch, Severity::error,
                     env_name(e) + " is a 32-bit Python: no GPU framework publishes 32-bit wheels");
    x.evidence.push_back(ev("32-bit interpreter", e.bits.source));
    x.fix.push_back(
        step("install the 64-bit Python (Windows installer (64-bit)) and create the "
             "environment with it; then install the framework there",
             "py -3.12-64 -m venv .venv", &c));
    out.push_back(std::move(x));
  }
}

void win_tf_after_210(const Ctx& c, Findings& out) {
  if (c.os != Os::windows) return;
  for (const auto& e : c.f.python) {
    const auto* tf = framework(e, "tensorflow");
    if (!tf) continue;
    auto v = Version::parse(tf->version);
    if (!v || *v < Version{2, 11}) continue;
    Finding x = make_finding(FindingId::win_tf_gpu_after_2_10,
                             gpu_present(c.f) ? Severity::error : Severity::warning,
                             "TensorFlow " + tf->version + " in " + env_name(e) +
                                 " has no GPU support on native Windows (2.10 was the last)");
    if (const auto* p = pkg(e, tf->package)) x.evidence.push_back(pkg_ev(*p));
    x.fix.push_back(step("run TensorFlow in WSL2 with the Linux GPU build",
                         "wsl -- python3 -m pip install 'tensorflow[and-cuda]'", &c));
    x.fix.push_back(
        step("or stay native with TensorFlow 2.10 (Python <= 3.10, CUDA 11.2, cuDNN 8.1)",
             pip(e) + " install \"tensorflow<2.11\"", &c));
    out.push_back(std::move(x));
  }
}

void tf_gpu_libraries(const Ctx& c, Findings& out) {
  if (c.os != Os::linux || !gpu_present(c.f)) return;
  for (const auto& e : c.f.python) {
    const auto* tf = framework(e, "tensorflow");
    if (!tf || !tf->cuda_build.ok() || !*tf->cuda_build || !tf->cuda) continue;
    auto cuda = Version::parse(*tf->cuda);
    auto cudnn = tf->cudnn ? Version::parse(*tf->cudnn) : std::nullopt;
    if (!cuda) continue;
    Available a = available_libs(c, e);
    std::vector<std::string> missing;
    if (!a.cudart.contains(cuda->major()))
      missing.push_back("CUDA " + std::to_string(cuda->major()) + " runtime");
    // Where the loader model resolved (or missed) TF's libcudnn.so.N, it decides: a miss is
    // libcudnn8-not-found, with the directories searched (one finding per cause).
    if (cudnn && !a.cudnn.contains(cudnn->major()) &&
        !loader_looks_for_libcudnn(c.f, e, "tensorflow"))
      missing.push_back("cuDNN " + std::to_string(cudnn->major()));
    if (missing.empty()) continue;
    Finding x =
        make_finding(FindingId::tf_cannot_dlopen_gpu_libraries, Severity::error,
                     "TensorFlow " + tf->version + " in " + env_name(e) + " will not find " +
                         join(missing, " and ") + ": it falls back to the CPU");
    x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
    x.evidence.push_back(
        ev("built for CUDA " + *tf->cuda + (tf->cudnn ? ", cuDNN " + *tf->cudnn : std::string()),
           tf->cuda.source));
    for (auto& h : a.evidence) x.evidence.push_back(std::move(h));
    if (a.evidence.empty())
      x.evidence.push_back(ev("no CUDA runtime or cuDNN found anywhere", e.prefix));
    std::string base = tf->version.substr(0, tf->version.find('+'));
    x.fix.push_back(step("install TensorFlow with its CUDA wheels",
                         pip(e) + " install 'tensorflow[and-cuda]==" + base + "'", &c));
    out.push_back(std::move(x));
  }
}

void ort_cuda_libraries(const Ctx& c, Findings& out) {
  if (!gpu_present(c.f)) return;
  for (const auto& e : c.f.python) {
    const auto* ort = pkg(e, "onnxruntime-gpu");
    if (!ort) continue;
    auto v = Version::parse(ort->version);
    if (!v) continue;
    if (const auto* f = fw(e, "onnxruntime"); f && !f->gpu_library.empty() && !f->needed.empty()) {
      ort_provider_needed(c, e, *ort, *f, out);
      continue;
    }
    bool new_ort = !(*v < Version{1, 19});
    int cuda = new_ort ? 12 : 11;
    int cudnn = new_ort ? 9 : 8;
    Available a = available_libs(c, e);
    std::vector<std::string> missing;
    if (!a.cudart.contains(cuda)) missing.push_back("CUDA " + std::to_string(cuda) + " runtime");
    if (!a.cudnn.contains(cudnn)) missing.push_back("cuDNN " + std::to_string(cudnn));
    if (missing.empty()) continue;
    Finding x =
        make_finding(FindingId::ort_cuda_provider_load_failure, Severity::warning,
                     "onnxruntime-gpu " + ort->version + " in " + env_name(e) + " needs " +
                         join(missing, " and ") + ", not found: the CUDA provider will not load");
    x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
    x.evidence.push_back(pkg_ev(*ort));
    x.evidence.push_back(ev("onnxruntime-gpu " + std::string(new_ort ? ">= 1.19" : "< 1.19") +
                                " (PyPI) is built for CUDA " + std::to_string(cuda) +
                                ".x and cuDNN " + std::to_string(cudnn) + ".x",
                            "https://onnxruntime.ai/docs/execution-providers/"
                            "CUDA-ExecutionProvider.html#requirements"));
    for (auto& h : a.evidence) x.evidence.push_back(std::move(h));
    if (new_ort) {
      x.fix.push_back(
          step("install the CUDA 12 / cuDNN 9 wheels it can preload",
               pip(e) + " install \"onnxruntime-gpu[cuda,cudnn]==" + ort->version + "\"", &c));
    } else {
      x.fix.push_back(
          step("install CUDA 11.8 and cuDNN 8 and put their lib directories on the "
               "loader path, or upgrade to onnxruntime-gpu >= 1.19 (CUDA 12, cuDNN 9)",
               pip(e) + " install -U onnxruntime-gpu", &c));
    }
    out.push_back(std::move(x));
  }
}

void deep_results(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    if (!e.deep) continue;
    if (!e.deep->status.ok()) {
      Finding x = make_finding(FindingId::python_deep_probe_failed, Severity::warning,
                               "dlenv could not run " + env_name(e) + " to import its frameworks");
      x.evidence.push_back(ev(e.deep->status.reason, e.deep->status.source));
      x.fix.push_back(step("run it by hand to see why",
                           env_name(e) + " -c 'import sys; print(sys.version)'", &c));
      out.push_back(std::move(x));
      continue;
    }
    for (const auto& f : e.deep->frameworks) {
      bool unavailable = !f.imported || (f.gpu_available.ok() && !*f.gpu_available) ||
                         (!f.gpu_op.empty() && f.gpu_op != "ok");
      if (!unavailable || (!gpu_present(c.f) && f.imported)) continue;
      std::string text = f.error.empty() ? f.gpu_op : f.error;
      // The catalog's error signatures name the failure (kb/findings.json `signatures`).
      const ErrorSignature* sig = longest_error_signature(text);
      const FindingId id = sig ? sig->id : FindingId::python_framework_gpu_unavailable;
      // About the environment: where a file-based check reports the same id for it, the
      // resolver merges the two (this one's evidence joins that finding).
      // A CPU-only package (onnxruntime, not onnxruntime-gpu) has no GPU by design.
      bool cpu_package = false;
      std::string package = f.name;
      for (const auto& fw : e.frameworks) {
        if (fw.name == f.name && fw.cuda_build.ok() && !*fw.cuda_build) {
          cpu_package = true;
          package = fw.package.empty() ? fw.name : fw.package;
        }
      }
      if (cpu_package && f.imported && f.error.empty()) {
        Finding x = make_finding(FindingId::python_framework_gpu_unavailable, Severity::info,
                                 f.name + " in " + env_name(e) + " is the CPU package (" + package +
                                     "): it runs on the CPU by design");
        x.layer = "python";
        x.evidence.push_back(
            ev(f.name + " " + f.version + " imported, GPU available: no", e.deep->status.source));
        x.fix.push_back(
            step("for GPU execution install the GPU package instead of " + package,
                 env_name(e) + " -m pip install " +
                     (f.name == "onnxruntime" ? std::string("onnxruntime-gpu") : package + "-gpu"),
                 &c));
        out.push_back(std::move(x));
        continue;
      }
      Finding x = make_finding(id, Severity::error,
                               f.name + " in " + env_name(e) +
                                   (f.imported ? " cannot use the GPU" : " fails to import") +
                                   (text.empty() ? std::string() : ": " + text.substr(0, 200)),
                               e.prefix);
      x.layer = "python";
      x.evidence.push_back(
          ev(f.name + " " + f.version + (f.imported ? " imported" : " import failed") +
                 (f.gpu_available.ok()
                      ? std::string(", GPU available: ") + (*f.gpu_available ? "yes" : "no")
                      : std::string()),
             e.deep->status.source));
      if (!text.empty()) x.evidence.push_back(ev(text, e.deep->status.source));
      // The CUDA libraries the process really mapped: the first few, then a count.
      constexpr size_t kShown = 6;
      for (size_t i = 0; i < e.deep->loaded_libraries.size() && i < kShown; ++i) {
        x.evidence.push_back(ev("loaded " + e.deep->loaded_libraries[i], deep_loaded_source(e)));
      }
      if (e.deep->loaded_libraries.size() > kShown) {
        x.evidence.push_back(
            ev("... and " + std::to_string(e.deep->loaded_libraries.size() - kShown) +
                   " more CUDA libraries (dlenv doctor --deep --json lists them all)",
               deep_loaded_source(e)));
      }
      x.fix.push_back(
          step("`dlenv explain " + std::string(finding_name(id)) + "` has the cause and the fix"));
      out.push_back(std::move(x));
    }
  }
}

// This file's entries of the check table (rules/check_table.cc).
const Check torch_cpu_build_entry{"torch_cpu_build",
                                  "a CPU-only torch build",
                                  torch_cpu_build,
                                  {FindingId::torch_cpu_build_installed},
                                  fact_area::driver | fact_area::gpus | fact_area::python};
const Check torch_companions_mixed_entry{"torch_companions_mixed",
                                         "torch and its companions from different indexes",
                                         torch_companions_mixed,
                                         {FindingId::pip_replaced_cuda_torch_with_pypi_build},
                                         fact_area::driver | fact_area::python};
const Check torch_driver_too_old_entry{"torch_driver_too_old",
                                       "the driver against the torch wheel's CUDA",
                                       torch_driver_too_old,
                                       {FindingId::torch_driver_too_old},
                                       fact_area::driver | fact_area::python};
const Check torch_gpu_arch_entry{
    "torch_gpu_arch",
    "the GPU against the torch wheel's architectures",
    torch_gpu_arch,
    {FindingId::gpu_too_old_for_wheel, FindingId::no_kernel_image_new_gpu},
    fact_area::gpus | fact_area::python};
const Check python_version_unsupported_entry{"python_version_unsupported",
                                             "the Python version against the framework's wheels",
                                             python_version_unsupported,
                                             {FindingId::python_version_unsupported_by_framework},
                                             fact_area::python};
const Check tf_gpu_package_entry{"tf_gpu_package",
                                 "the removed tensorflow-gpu package",
                                 tf_gpu_package,
                                 {FindingId::tensorflow_gpu_package_removed},
                                 fact_area::python};
const Check jax_cpu_only_entry{"jax_cpu_only",
                               "a CPU-only jaxlib",
                               jax_cpu_only,
                               {FindingId::jax_cpu_only_jaxlib},
                               fact_area::driver | fact_area::gpus | fact_area::python};
const Check jax_ld_library_path_entry{
    "jax_ld_library_path",
    "LD_LIBRARY_PATH over JAX's CUDA wheels",
    jax_ld_library_path,
    {FindingId::jax_ld_library_path_overrides_wheels},
    fact_area::cudnn | fact_area::env | fact_area::python | fact_area::toolkits};
const Check paddle_cpu_entry{"paddle_cpu",
                             "the CPU paddlepaddle package",
                             paddle_cpu,
                             {FindingId::paddle_cpu_package_installed},
                             fact_area::driver | fact_area::gpus | fact_area::python};
const Check ort_both_entry{"ort_both",
                           "onnxruntime and onnxruntime-gpu together",
                           ort_both,
                           {FindingId::ort_cpu_and_gpu_packages_coexist},
                           fact_area::python};
const Check cupy_multiple_entry{"cupy_multiple",
                                "several CuPy packages",
                                cupy_multiple,
                                {FindingId::cupy_multiple_packages},
                                fact_area::driver | fact_area::python};
const Check cupy_major_entry{
    "cupy_major",
    "CuPy's CUDA major against the driver",
    cupy_major,
    {FindingId::cupy_cuda_major_mismatch},
    fact_area::driver | fact_area::gpus | fact_area::python | fact_area::toolkits};
const Check ctranslate2_cudnn_entry{
    "ctranslate2_cudnn",
    "ctranslate2's cuDNN major",
    ctranslate2_cudnn,
    {FindingId::ctranslate2_cudnn8_vs_9},
    fact_area::cudnn | fact_area::driver | fact_area::gpus | fact_area::loader | fact_area::python};
const Check pip_vs_system_cudnn_entry{
    "pip_vs_system_cudnn",
    "a system cuDNN on LD_LIBRARY_PATH against the wheel's (metadata)",
    pip_vs_system_cudnn,
    {FindingId::pip_cudnn_vs_system_cudnn_symbols},
    fact_area::cudnn | fact_area::loader | fact_area::python};
const Check ide_vs_shell_entry{"ide_vs_shell",
                               "the IDE's interpreter against the shell's",
                               ide_vs_shell,
                               {FindingId::ide_interpreter_differs_from_shell},
                               fact_area::python};
const Check ide_interpreter_stale_entry{"ide_interpreter_stale",
                                        "an IDE interpreter that no longer exists",
                                        ide_interpreter_stale,
                                        {FindingId::ide_interpreter_stale},
                                        fact_area::python};
const Check win_32bit_python_entry{"win_32bit_python",
                                   "a 32-bit Python on Windows",
                                   win_32bit_python,
                                   {FindingId::win_32bit_python_no_torch},
                                   fact_area::python};
const Check win_tf_after_210_entry{"win_tf_after_210",
                                   "TensorFlow > 2.10 on native Windows",
                                   win_tf_after_210,
                                   {FindingId::win_tf_gpu_after_2_10},
                                   fact_area::driver | fact_area::gpus | fact_area::python};
const Check tf_gpu_libraries_entry{"tf_gpu_libraries",
                                   "the CUDA libraries TensorFlow dlopens",
                                   tf_gpu_libraries,
                                   {FindingId::tf_cannot_dlopen_gpu_libraries},
                                   fact_area::cudnn | fact_area::driver | fact_area::gpus |
                                       fact_area::loader | fact_area::python | fact_area::toolkits};
const Check ort_cuda_libraries_entry{"ort_cuda_libraries",
                                     "the CUDA libraries ONNX Runtime's CUDA provider needs",
                                     ort_cuda_libraries,
                                     {FindingId::ort_cuda_provider_load_failure},
                                     fact_area::cudnn | fact_area::driver | fact_area::gpus |
                                         fact_area::python | fact_area::toolkits |
                                         fact_area::windows};
const Check deep_results_entry{
    "deep_results",
    "what importing each framework showed (--deep)",
    deep_results,
    {FindingId::python_deep_probe_failed, FindingId::python_framework_gpu_unavailable},
    fact_area::driver | fact_area::gpus | fact_area::python,
    true};

}  // namespace checks
}  // namespace dlenv
