// PyTorch: a CPU-only build where a GPU is present, torch and its companions from different
// indexes, the driver against the wheel's CUDA, the toolkit extensions build with, prebuilt
// extensions built for another torch, and the cuBLAS wheel torch pins.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "kb/error_signature.h"
#include "rules/checks.h"
#include "rules/loader_coverage.h"
#include "rules/python_common.h"
#include "rules/rule_helpers.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using namespace pyrules;
using json = nlohmann::json;
namespace py = pyrules;

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

// "torch2.6" (flash-attn wheel names), "pt25" / "pt2.5" (PyG, detectron2 local labels).
std::optional<Version> torch_tag(std::string_view s) {
  for (const char* key : {"torch", "pt"}) {
    for (size_t p = s.find(key); p != std::string_view::npos; p = s.find(key, p + 1)) {
      std::string_view rest = s.substr(p + std::string_view(key).size());
      if (rest.empty() || !std::isdigit(static_cast<unsigned char>(rest[0]))) continue;
      if (rest.size() > 1 && rest[1] == '.') {
        if (auto v = Version::parse(rest)) return v->truncated(2);
        continue;
      }
      // "pt25" -> 2.5, "pt210" -> 2.10
      size_t n = 0;
      while (n < rest.size() && std::isdigit(static_cast<unsigned char>(rest[n]))) ++n;
      if (n < 2) continue;
      auto minor = parse_int(rest.substr(1, n - 1));
      if (minor) return Version{rest[0] - '0', static_cast<int>(*minor)};
    }
  }
  return std::nullopt;
}

}  // namespace

namespace checks {

using namespace pyrules;
using json = nlohmann::json;
namespace py = pyrules;

void torch_cpu_build(const Ctx& c, Findings& out) {
  if (!gpu_present(c.f)) return;  // a CPU build on a CPU-only machine is right
  json kb = kb_json(c.kb, "pytorch.json");
  for (const auto& e : c.f.python) {
    const auto* t = fw(e, "torch");
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
    const auto* t = fw(e, "torch");
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

void toolkit_vs_torch(const Ctx& c, Findings& out) {
  // torch.utils.cpp_extension: CUDA_HOME/CUDA_PATH, else nvcc on PATH, else /usr/local/cuda.
  const ToolkitFacts* pick = nullptr;
  std::string why;
  for (const auto& t : c.f.toolkits) {
    if (t.active_cuda_home) {
      pick = &t;
      why = "CUDA_HOME/CUDA_PATH";
      break;
    }
  }
  for (const auto& t : c.f.toolkits) {
    if (!pick && t.active_path) {
      pick = &t;
      why = "the first nvcc on PATH";
    }
  }
  for (const auto& t : c.f.toolkits) {
    if (!pick && t.is_default_link) {
      pick = &t;
      why = "/usr/local/cuda";
    }
  }
  if (!pick) return;
  auto tv = pick->nvcc_version
                ? std::optional<Version>(*pick->nvcc_version)
                : (pick->version ? std::optional<Version>(*pick->version) : std::nullopt);
  if (!tv) return;
  for (const auto& e : c.f.python) {
    const auto* t = fw(e, "torch");
    if (!t || !t->cuda) continue;
    auto cv = Version::parse(*t->cuda);
    if (!cv || cv->major() == tv->major()) continue;
    Finding x = make_finding(FindingId::toolkit_vs_torch_cuda_mismatch, Severity::warning,
                             "building CUDA extensions for torch " + t->version + " in " +
                                 env_name(e) + " would use CUDA " + tv->str() + " (" + pick->root +
                                 "), but torch is built with CUDA " + *t->cuda);
    x.evidence.push_back(ev("torch.version.cuda = " + *t->cuda, t->cuda.source));
    x.evidence.push_back(ev("torch.utils.cpp_extension picks " + pick->root + " through " + why,
                            pick->version.source));
    x.fix.push_back(step("point CUDA_HOME at a CUDA " + std::to_string(cv->major()) +
                         ".x toolkit before building (pip install of packages that compile), "
                         "or install the torch build for CUDA " +
                         std::to_string(tv->major())));
    for (const auto& other : c.f.toolkits) {
      if (other.version && other.version->major() == cv->major()) {
        x.fix.push_back(
            step("use the installed CUDA " + other.version->str(),
                 "export CUDA_HOME=" + other.root + " PATH=" + other.root + "/bin:$PATH", &c));
        break;
      }
    }
    out.push_back(std::move(x));
  }
}

void extension_abi(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    const auto* torch = pkg(e, "torch");
    if (!torch) continue;
    auto tv = Version::parse(torch->version);
    if (!tv) continue;
    for (const auto& p : e.packages) {
      if (p.name == "torch" || p.name == "torchvision" || p.name == "torchaudio" ||
          starts_with(p.name, "nvidia-") || p.name == "triton" || p.name == "pytorch-triton")
        continue;
      std::string why, source;
      for (const auto& text : p.requires_torch) {
        auto r = parse_requirement(text);
        if (!r || r->name != "torch" || r->extra_only) continue;
        bool pinned = false;
        for (const auto& [op, v] : r->specs) pinned |= op == "==";
        if (pinned && !satisfies(*r, *tv)) {
          why = "requires " + text.substr(0, text.find(';'));
          source = p.source;
        }
      }
      if (why.empty()) {
        for (const std::string& s : {p.version, p.direct_url}) {
          std::string local = s == p.version && s.find('+') != std::string::npos
                                  ? s.substr(s.find('+') + 1)
                                  : (s == p.direct_url ? path_basename(s) : std::string());
          auto want = torch_tag(local);
          if (want && !(want->truncated(2) == tv->truncated(2))) {
            why = "was built for torch " + want->str() + " (" + local + ")";
            source = s == p.version ? p.source : "direct_url.json of " + p.name;
            break;
          }
        }
      }
      if (why.empty()) continue;
      Finding x = make_finding(
          FindingId::prebuilt_extension_abi_mismatch, Severity::error,
          p.name + " " + p.version + " in " + env_name(e) + " " + why + ", but torch " +
              torch->version + " is installed: its compiled modules fail with 'undefined symbol'");
      x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
      x.evidence.push_back(pkg_ev(p));
      x.evidence.push_back(ev(why, source));
      x.evidence.push_back(pkg_ev(*torch));
      x.fix.push_back(step("reinstall " + p.name +
                               " built for this torch (or rebuild it "
                               "against it)",
                           pip(e) + " install --force-reinstall --no-build-isolation " + p.name,
                           &c));
      out.push_back(std::move(x));
    }
  }
}

void cublas_pin(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    const auto* torch = py::pkg(e, "torch");
    if (!torch) continue;
    for (const auto& text : torch->requires_nvidia) {
      auto r = py::parse_requirement(text);
      if (!r || r->extra_only || !starts_with(r->name, "nvidia-cublas")) continue;
      bool pinned = std::any_of(r->specs.begin(), r->specs.end(),
                                [](const auto& s) { return s.first == "=="; });
      if (!pinned) continue;
      const auto* have = py::pkg(e, r->name);
      if (!have) continue;  // absent: the import fails to open libcublas (another finding)
      auto hv = Version::parse(have->version);
      if (!hv || py::satisfies(*r, *hv)) continue;
      std::string want(trim(r->text.substr(0, r->text.find(';'))));
      Finding x = make_finding(FindingId::cublas_gemm_invalid_value_mismatch, Severity::warning,
                               have->name + " " + have->version + " in " + py::env_name(e) +
                                   " is not the cuBLAS torch " + torch->version + " pins (" + want +
                                   "): GEMMs may fail with CUBLAS_STATUS_INVALID_VALUE");
      x.evidence.push_back(py::pkg_ev(*torch));
      x.evidence.push_back(ev("Requires-Dist: " + r->text, torch->source));
      x.evidence.push_back(py::pkg_ev(*have));
      for (const auto& l : py::deep_loaded(e, "cublas")) {
        x.evidence.push_back(ev("loaded " + l, py::deep_loaded_source(e)));
      }
      x.fix.push_back(
          py::step("restore the cuBLAS wheel torch was built with (another package "
                   "or a manual upgrade replaced it)",
                   py::pip(e) + " install \"" + want + "\"", &c));
      x.fix.push_back(py::step("see which installed package wanted the other version",
                               py::pip(e) + " check", &c));
      out.push_back(std::move(x));
    }
  }
}

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check torch_cpu_build_entry{"torch_cpu_build",
                                         "a CPU-only torch build",
                                         torch_cpu_build,
                                         {FindingId::torch_cpu_build_installed},
                                         fact_area::driver | fact_area::gpus | fact_area::python};
extern const Check torch_companions_mixed_entry{
    "torch_companions_mixed",
    "torch and its companions from different indexes",
    torch_companions_mixed,
    {FindingId::pip_replaced_cuda_torch_with_pypi_build},
    fact_area::driver | fact_area::python};
extern const Check torch_driver_too_old_entry{"torch_driver_too_old",
                                              "the driver against the torch wheel's CUDA",
                                              torch_driver_too_old,
                                              {FindingId::torch_driver_too_old},
                                              fact_area::driver | fact_area::python};
extern const Check toolkit_vs_torch_entry{"toolkit_vs_torch",
                                          "the toolkit against torch's CUDA (extension builds)",
                                          toolkit_vs_torch,
                                          {FindingId::toolkit_vs_torch_cuda_mismatch},
                                          fact_area::python | fact_area::toolkits};
extern const Check extension_abi_entry{"extension_abi",
                                       "prebuilt extensions against torch's ABI",
                                       extension_abi,
                                       {FindingId::prebuilt_extension_abi_mismatch},
                                       fact_area::python};
extern const Check cublas_pin_entry{"cublas_pin",
                                    "the cuBLAS wheel against torch's pin",
                                    cublas_pin,
                                    {FindingId::cublas_gemm_invalid_value_mismatch},
                                    fact_area::python | fact_area::windows};

}  // namespace checks
}  // namespace dlenv
