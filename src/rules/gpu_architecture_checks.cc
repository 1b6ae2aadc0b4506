// Whether a framework build has kernels for the GPU: torch's arch list (SASS and PTX) and
// TensorFlow's compiled architectures against each GPU's compute capability.
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

// "2.1-2.5" / "2.11" contains torch 2.3?
bool torch_range_has(const std::string& range, const Version& mm) {
  auto parts = split(range, '-');
  if (parts.empty()) return false;
  auto lo = Version::parse(parts[0]);
  auto hi = Version::parse(parts.size() > 1 ? parts[1] : parts[0]);
  return lo && hi && !(mm < lo->truncated(2)) && !(hi->truncated(2) < mm);
}

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

// "sm_90" / "compute_80" / "sm_90a" -> 9.0 / 8.0.
std::optional<Version> arch_version(std::string_view a) {
  auto u = a.find('_');
  if (u == std::string_view::npos) return std::nullopt;
  std::string digits;
  for (char ch : a.substr(u + 1)) {
    if (!std::isdigit(static_cast<unsigned char>(ch))) break;
    digits += ch;
  }
  if (digits.size() < 2) return std::nullopt;
  auto n = parse_int(digits);
  if (!n) return std::nullopt;
  return Version{static_cast<int>(*n / 10), static_cast<int>(*n % 10)};
}

}  // namespace

namespace checks {

using namespace pyrules;
using json = nlohmann::json;
namespace py = pyrules;

void torch_gpu_arch(const Ctx& c, Findings& out) {
  json kb = kb_json(c.kb, "pytorch.json");
  for (const auto& e : c.f.python) {
    const auto* t = fw(e, "torch");
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

void tf_archs(const Ctx& c, Findings& out) {
  for (const auto& e : c.f.python) {
    const auto* tf = tf_cuda(e);
    if (!tf || tf->cuda_archs.empty()) continue;
    for (const auto& g : c.f.gpus) {
      if (!g.compute_capability) continue;
      const Version& cc = *g.compute_capability;
      bool sass = false;
      std::optional<Version> ptx;
      for (const auto& a : tf->cuda_archs) {
        auto v = arch_version(a);
        if (!v) continue;
        if (starts_with(a, "sm_") && v->major() == cc.major() && !(cc < *v)) sass = true;
        if (starts_with(a, "compute_") && !(cc < *v) && (!ptx || *ptx < *v)) ptx = v;
      }
      if (sass) continue;
      std::string gpu = g.name ? *g.name : "GPU " + std::to_string(g.index);
      Finding x =
          ptx ? make_finding(FindingId::tf_ptx_jit_new_arch, Severity::warning,
                             "TensorFlow " + tf->version + " in " + env_name(e) +
                                 " has no kernels for the " + gpu + " (compute capability " +
                                 cc.str() + "): they are JIT-compiled from compute_" +
                                 std::to_string(ptx->major()) + std::to_string(ptx->minor()) +
                                 " PTX at start-up (can take 30 minutes or longer)")
              : make_finding(FindingId::no_kernel_image_new_gpu, Severity::error,
                             "TensorFlow " + tf->version + " in " + env_name(e) +
                                 " has no kernels and no usable PTX for the " + gpu +
                                 " (compute capability " + cc.str() + ")");
      x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
      x.evidence.push_back(
          ev("cuda_compute_capabilities: " + join(tf->cuda_archs, ", "), tf->cuda_build.source));
      x.evidence.push_back(ev(gpu + ": compute capability " + cc.str(), g.source));
      x.fix.push_back(step("install a TensorFlow release built for compute capability " + cc.str() +
                               ", or keep the JIT cache between runs",
                           "export CUDA_CACHE_MAXSIZE=4294967296", &c));
      out.push_back(std::move(x));
      break;
    }
  }
}

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check torch_gpu_arch_entry{
    "torch_gpu_arch",
    "the GPU against the torch wheel's architectures",
    torch_gpu_arch,
    {FindingId::gpu_too_old_for_wheel, FindingId::no_kernel_image_new_gpu},
    fact_area::gpus | fact_area::python};
extern const Check tf_archs_entry{
    "tf_archs",
    "the GPU against TensorFlow's kernels",
    tf_archs,
    {FindingId::no_kernel_image_new_gpu, FindingId::tf_ptx_jit_new_arch},
    fact_area::gpus | fact_area::python};

}  // namespace checks
}  // namespace dlenv
