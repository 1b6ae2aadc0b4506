// Whether a Python environment can run its wheels: the Python version and the glibc a wheel
// needs, a 32-bit Python on Windows, nvJitLink against cuSPARSE, ctranslate2's cuDNN major.
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

std::string base_version(const std::string& v) {
  return v.substr(0, v.find('+'));
}

// The glibc a platform tag needs: manylinux_2_28_x86_64 -> 2.28, manylinux2014 -> 2.17.
std::optional<Version> manylinux_glibc(std::string_view platform) {
  if (starts_with(platform, "manylinux1")) return Version{2, 5};
  if (starts_with(platform, "manylinux2010")) return Version{2, 12};
  if (starts_with(platform, "manylinux2014")) return Version{2, 17};
  if (!starts_with(platform, "manylinux_")) return std::nullopt;
  auto parts = split(platform.substr(10), '_');
  if (parts.size() < 2) return std::nullopt;
  auto a = parse_int(parts[0]);
  auto b = parse_int(parts[1]);
  if (!a || !b) return std::nullopt;
  return Version{static_cast<int>(*a), static_cast<int>(*b)};
}

}  // namespace

namespace checks {

using namespace pyrules;
using json = nlohmann::json;
namespace py = pyrules;

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

void wheel_tags(const Ctx& c, Findings& out) {
  auto glibc = c.f.host.glibc ? Version::parse(*c.f.host.glibc) : std::nullopt;
  for (const auto& e : c.f.python) {
    auto pv = e.version ? Version::parse(*e.version) : std::nullopt;
    for (const auto& p : e.packages) {
      if (p.wheel_tags.empty()) continue;
      std::optional<Version> need;  // the lowest glibc any of its tags accepts
      bool any_cp = false, cp_ok = false, abi_any = false;
      std::string cp_tag;
      for (const auto& tag : p.wheel_tags) {
        auto parts = split(tag, '-');
        if (parts.size() != 3) continue;
        if (auto g = manylinux_glibc(parts[2]); g && (!need || *g < *need)) need = g;
        if (parts[1] == "abi3" || parts[1] == "none" || !starts_with(parts[0], "cp")) {
          abi_any = true;
          continue;
        }
        any_cp = true;
        cp_tag = parts[0];
        if (pv && parts[0] == "cp" + std::to_string(pv->major()) + std::to_string(pv->minor())) {
          cp_ok = true;
        }
      }
      if (c.os == Os::linux && glibc && need && *glibc < *need) {
        Finding x = make_finding(FindingId::glibc_too_old_for_wheel, Severity::error,
                                 p.name + " " + p.version + " in " + env_name(e) + " needs glibc " +
                                     need->str() + ", but this system has glibc " + glibc->str());
        x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
        x.evidence.push_back(ev("wheel tags: " + join(p.wheel_tags, ", "), p.wheel_source));
        x.evidence.push_back(ev("glibc " + glibc->str(), c.f.host.glibc.source));
        x.fix.push_back(
            step("run it on a newer distribution or in a container with glibc >= " + need->str() +
                 ", or install an older release built for glibc " + glibc->str()));
        out.push_back(std::move(x));
      }
      if (pv && any_cp && !cp_ok && !abi_any) {
        Finding x =
            make_finding(FindingId::python_version_unsupported_by_framework, Severity::error,
                         p.name + " " + p.version + " in " + env_name(e) + " is a " + cp_tag +
                             " wheel, but the interpreter is Python " + *e.version +
                             ": its compiled modules do not import");
        x.evidence.push_back(ev("wheel tags: " + join(p.wheel_tags, ", "), p.wheel_source));
        x.evidence.push_back(ev("Python " + *e.version, e.version.source));
        x.fix.push_back(step(
            "reinstall it for this Python (the environment was upgraded or "
            "copied from another Python)",
            pip(e) + " install --force-reinstall " + p.name + "==" + base_version(p.version), &c));
        out.push_back(std::move(x));
      }
    }
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

void nvjitlink_cusparse(const Ctx& c, Findings& out) {
  if (c.os != Os::linux) return;
  for (const auto& e : c.f.python) {
    for (const auto& sp : e.cuda_libs) {
      if (sp.library != "cusparse" || sp.needs_nvjitlink.empty()) continue;
      auto need = Version::parse(sp.needs_nvjitlink);
      if (!need) continue;
      // The wheel's libnvJitLink.so.N (what cuSPARSE's RUNPATH finds).
      for (const auto& j : e.cuda_libs) {
        if (j.library != "nvJitLink" || j.major != need->major()) continue;
        auto have = Version::parse(j.version);
        if (!have || !(have->truncated(2) < *need)) continue;
        Finding x = make_finding(
            FindingId::nvjitlink_older_than_cusparse, Severity::error,
            j.package + " " + j.version + " in " + env_name(e) + " is older than the nvJitLink " +
                need->str() + " that " + sp.package + " " + sp.version +
                " needs: undefined symbol "
                "__nvJitLink*_" +
                std::to_string(need->major()) + "_" + std::to_string(need->minor()));
        x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
        x.evidence.push_back(ev("libcusparse imports __nvJitLink*_" +
                                    std::to_string(need->major()) + "_" +
                                    std::to_string(need->minor()),
                                sp.path));
        x.evidence.push_back(ev(j.package + " " + j.version, j.path));
        x.fix.push_back(step("upgrade the nvJitLink wheel to at least the cuSPARSE CUDA minor",
                             pip(e) + " install -U \"" + j.package + ">=" + need->str() + "\"",
                             &c));
        out.push_back(std::move(x));
      }
      // A toolkit on LD_LIBRARY_PATH comes before the wheel's RUNPATH.
      for (const auto& t : c.f.toolkits) {
        if (!t.active_ld_library_path || !t.version || t.version->major() != need->major() ||
            !(t.version->truncated(2) < *need)) {
          continue;
        }
        Finding x =
            make_finding(FindingId::nvjitlink_older_than_cusparse, Severity::error,
                         "LD_LIBRARY_PATH puts CUDA " + t.version->str() + "'s libnvJitLink.so." +
                             std::to_string(need->major()) + " ahead of the wheels; " + sp.package +
                             " in " + env_name(e) + " needs nvJitLink " + need->str());
        x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
        x.evidence.push_back(ev("libcusparse imports __nvJitLink*_" +
                                    std::to_string(need->major()) + "_" +
                                    std::to_string(need->minor()),
                                sp.path));
        x.evidence.push_back(
            ev("CUDA toolkit " + t.version->str() + " at " + t.root + " is on LD_LIBRARY_PATH",
               c.f.env.source));
        x.fix.push_back(
            step("drop the toolkit's lib directory from LD_LIBRARY_PATH before "
                 "starting Python",
                 "unset LD_LIBRARY_PATH", &c));
        out.push_back(std::move(x));
      }
    }
  }
}

void ctranslate2_cudnn(const Ctx& c, Findings& out) {
  if (!gpu_present(c.f) || c.os == Os::windows) return;
  for (const auto& e : c.f.python) {
    const auto* ct = fw(e, "ctranslate2");
    // Where the loader model resolved (or missed) the cuDNN ctranslate2 opens, it decides
    // (libcudnn8-not-found, rules/python_cudnn_checks.cc).
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

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check python_version_unsupported_entry{
    "python_version_unsupported",
    "the Python version against the framework's wheels",
    python_version_unsupported,
    {FindingId::python_version_unsupported_by_framework},
    fact_area::python};
extern const Check wheel_tags_entry{
    "wheel_tags",
    "a wheel's glibc tag against the system glibc",
    wheel_tags,
    {FindingId::glibc_too_old_for_wheel, FindingId::python_version_unsupported_by_framework},
    fact_area::host | fact_area::python};
extern const Check win_32bit_python_entry{"win_32bit_python",
                                          "a 32-bit Python on Windows",
                                          win_32bit_python,
                                          {FindingId::win_32bit_python_no_torch},
                                          fact_area::python};
extern const Check nvjitlink_cusparse_entry{
    "nvjitlink_cusparse",
    "nvJitLink older than cuSPARSE",
    nvjitlink_cusparse,
    {FindingId::nvjitlink_older_than_cusparse},
    fact_area::env | fact_area::python | fact_area::toolkits};
extern const Check ctranslate2_cudnn_entry{
    "ctranslate2_cudnn",
    "ctranslate2's cuDNN major",
    ctranslate2_cudnn,
    {FindingId::ctranslate2_cudnn8_vs_9},
    fact_area::cudnn | fact_area::driver | fact_area::gpus | fact_area::loader | fact_area::python};

}  // namespace checks
}  // namespace dlenv
