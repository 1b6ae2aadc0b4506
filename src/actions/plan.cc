#include "actions/plan.h"

#include <algorithm>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "util/safe_text.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------- small helpers

std::string lower(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

// Compares two versions on the components both have ("1.13.1" vs "1.13" -> equal).
int cmp_common(const Version& a, const Version& b) {
  size_t n = std::min(a.parts().size(), b.parts().size());
  if (n == 0) n = 1;
  auto c = a.truncated(n) <=> b.truncated(n);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// "cu117" / "post117" / "cuda11x" -> 11.7 (last digit is the minor).
std::optional<Version> cuda_from_tag(std::string_view tag) {
  std::string digits;
  for (char c : tag) {
    if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
  }
  if (digits.size() < 2) return std::nullopt;
  int minor = digits.back() - '0';
  auto major = parse_int(digits.substr(0, digits.size() - 1));
  if (!major) return std::nullopt;
  return Version{static_cast<int>(*major), minor};
}

std::string jstr(const json& row, const char* key) {
  auto it = row.find(key);
  if (it == row.end() || !it->is_string()) return {};
  return it->get<std::string>();
}
bool jconfirmed(const json& row) {
  auto it = row.find("confirmed");
  return it != row.end() && it->is_boolean() && it->get<bool>();
}

// A Python range as the tables write it: "3.7-3.10", ">=3.10, <=3.14 (3.14t experimental)",
// "2.7, 3.5-3.7". Operator terms are ANDed, bare versions/ranges ORed. nullopt: not stated.
std::optional<bool> python_matches(const std::string& range, const Version& py) {
  if (range.empty()) return std::nullopt;
  Version p = py.truncated(2);
  std::string text = range.substr(0, range.find('('));
  bool any_bare = false, bare_hit = false, ops_ok = true;
  for (auto& raw : split(text, ',')) {
    std::string t(trim(raw));
    if (t.empty()) continue;
    if (t.starts_with(">=") || t.starts_with("<=")) {
      auto v = Version::parse(trim(std::string_view(t).substr(2)));
      if (!v) continue;
      if (t[0] == '>' && p < v->truncated(2)) ops_ok = false;
      if (t[0] == '<' && p > v->truncated(2)) ops_ok = false;
      continue;
    }
    any_bare = true;
    auto dash = t.find('-');
    auto lo = Version::parse(t.substr(0, dash));
    auto hi = dash == std::string::npos ? lo : Version::parse(t.substr(dash + 1));
    if (lo && hi && p >= lo->truncated(2) && p <= hi->truncated(2)) bare_hit = true;
  }
  return ops_ok && (!any_bare || bare_hit);
}

// ---------------------------------------------------------------- candidates

struct Candidate {
  std::string framework;
  std::string version;  // display
  Version lo, hi;       // versions the row covers
  std::string build;
  Version cuda_lo, cuda_hi;  // CUDA the build targets (lo == hi for one version)
  std::string cuda_text;
  std::string cudnn;
  int cudnn_major = 0;
  bool bundles = false;
  int preference = 1;                               // 2: default/stable, 1: other, 0: experimental
  std::string python;                               // range text ("" unknown)
  std::vector<std::pair<Version, bool>> arch_list;  // (cc, +PTX) when the wheel list is known
  bool arch_list_confirmed = true;
  std::optional<Version> min_cc;        // framework-imposed
  std::optional<Version> driver_floor;  // framework-imposed
  bool windows = true;                  // has native Windows GPU builds
  std::string windows_note;
  bool confirmed = true;
  std::string source;
  std::vector<std::string> unconfirmed;
  std::vector<std::string> notes;
  // Fills install commands once the exact version is known.
  std::function<std::vector<std::string>(const std::string& version, PlanOs os)> install;
};

std::string display_version(const Candidate& c, const FrameworkSpec& spec) {
  if (spec.op == "==" && spec.version && spec.version->parts().size() > 2) {
    return spec.version->str();
  }
  return c.version;
}

bool spec_matches(const FrameworkSpec& s, const Candidate& c) {
  if (!s.version || s.op.empty()) return true;
  const Version& v = *s.version;
  if (s.op == "==") return cmp_common(c.lo, v) <= 0 && cmp_common(c.hi, v) >= 0;
  if (s.op == ">=") return cmp_common(c.hi, v) >= 0;
  if (s.op == ">") return cmp_common(c.hi, v) > 0;
  if (s.op == "<=") return cmp_common(c.lo, v) <= 0;
  if (s.op == "<") return cmp_common(c.lo, v) < 0;
  return true;
}

Result<json> load_json(const Kb& kb, const char* name) {
  auto text = kb.file_text(name);
  if (!text)
    return fail(std::string(name) + ": not in the knowledge base (run with the built-in KB)");
  try {
    return json::parse(*text);
  } catch (const std::exception& e) {
    return fail(std::string(name) + ": " + e.what());
  }
}

struct TorchArch {
  Version lo, hi;
  std::vector<std::string> variants;
  std::vector<std::pair<Version, bool>> list;
  bool confirmed;
};

std::vector<std::pair<Version, bool>> parse_arch_list(const std::string& text) {
  std::vector<std::pair<Version, bool>> out;
  std::string t = text.substr(0, text.find('('));
  for (auto& raw : split(t, ';')) {
    std::string e(trim(raw));
    bool ptx = e.find("+PTX") != std::string::npos;
    if (auto v = Version::parse(e)) out.emplace_back(v->truncated(2), ptx);
  }
  return out;
}

std::pair<Version, Version> parse_range(const std::string& text) {
  auto dash = text.find('-');
  auto lo = Version::parse(text.substr(0, dash)).value_or(Version{});
  auto hi = dash == std::string::npos ? lo : Version::parse(text.substr(dash + 1)).value_or(lo);
  return {lo, hi};
}

Result<std::vector<Candidate>> torch_candidates(const Kb& kb) {
  auto j = load_json(kb, "pytorch.json");
  if (!j) return std::unexpected(j.error());
  std::vector<TorchArch> arches;
  for (const auto& a : (*j)["wheel_arch_lists"]) {
    TorchArch ta;
    std::tie(ta.lo, ta.hi) = parse_range(jstr(a, "torch"));
    ta.variants = split(jstr(a, "variant"), '/');
    ta.list = parse_arch_list(jstr(a, "arch_list"));
    ta.confirmed = jconfirmed(a);
    arches.push_back(std::move(ta));
  }
  std::vector<Candidate> out;
  int idx = 0;
  for (const auto& r : (*j)["releases"]) {
    std::string ver = jstr(r, "torch");
    auto v = Version::parse(ver);
    if (!v) return fail("pytorch.json: releases[" + std::to_string(idx) + "].torch: not a version");
    std::set<std::string> stable, experimental;
    if (r.contains("stable_cuda") && r["stable_cuda"].is_array()) {
      for (const auto& s : r["stable_cuda"]) stable.insert(s.get<std::string>());
    }
    if (r.contains("experimental_cuda") && r["experimental_cuda"].is_array()) {
      for (const auto& s : r["experimental_cuda"]) experimental.insert(s.get<std::string>());
    }
    std::string pypi = jstr(r, "pypi_default_cuda");
    for (const auto& var : r["cuda_variants"]) {
      std::string variant = var.get<std::string>();
      auto cuda = cuda_from_tag(variant);
      if (!cuda) continue;
      Candidate c;
      c.framework = "torch";
      c.version = ver;
      c.lo = c.hi = *v;
      c.build = variant;
      c.cuda_lo = c.cuda_hi = *cuda;
      c.cuda_text = cuda->str();
      if (r.contains("cudnn_by_variant") && r["cudnn_by_variant"].contains(variant)) {
        c.cudnn = r["cudnn_by_variant"][variant].get<std::string>();
        c.cudnn_major = Version::parse(c.cudnn).value_or(Version{}).major();
      }
      c.bundles = true;
      std::string cs = cuda->str();
      c.preference = variant == pypi             ? 3
                     : stable.contains(cs)       ? 2
                     : experimental.contains(cs) ? 0
                                                 : 1;
      if (experimental.contains(cs))
        c.notes.push_back(variant + " is an experimental build of " + ver);
      c.python = jstr(r, "python");
      c.confirmed = jconfirmed(r);
      c.source = jstr(r, "source");
      if (!c.confirmed)
        c.unconfirmed.push_back("pytorch.json torch " + ver + " (" + c.source + ")");
      if (*v >= Version{1, 11} && variant == "cu102") {
        c.windows = false;
        c.windows_note = "torch " + ver + " has no CUDA 10.2 build for Windows";
      }
      for (const auto& a : arches) {
        if (*v < a.lo.truncated(2) || *v > a.hi.truncated(2)) continue;
        if (std::find(a.variants.begin(), a.variants.end(), variant) == a.variants.end()) continue;
        c.arch_list = a.list;
        c.arch_list_confirmed = a.confirmed;
      }
      c.install = [variant, v = *v](const std::string& exact, PlanOs) {
        std::string version = exact.empty() ? v.str() + ".*" : exact;
        if (v >= Version{2, 0}) {
          return std::vector<std::string>{"pip install torch==" + version +
                                          " --index-url https://download.pytorch.org/whl/" +
                                          variant};
        }
        if (v >= Version{1, 11}) {
          return std::vector<std::string>{"pip install torch==" + version + "+" + variant +
                                          " --extra-index-url https://download.pytorch.org/whl/" +
                                          variant};
        }
        return std::vector<std::string>{"pip install torch==" + version + "+" + variant +
                                        " -f https://download.pytorch.org/whl/torch_stable.html"};
      };
      out.push_back(std::move(c));
    }
    ++idx;
  }
  return out;
}

Result<std::vector<Candidate>> tensorflow_candidates(const Kb& kb, PlanOs os) {
  auto j = load_json(kb, "tensorflow.json");
  if (!j) return std::unexpected(j.error());
  std::vector<Candidate> out;
  const char* table = os == PlanOs::windows ? "windows_native_gpu" : "linux_gpu";
  for (const auto& r : (*j)[table]) {
    std::string ver = jstr(r, "tf_version");
    auto v = Version::parse(ver);
    auto cuda = Version::parse(jstr(r, "cuda"));
    if (!v || !cuda) continue;
    Candidate c;
    c.framework = "tensorflow";
    c.version = ver;
    c.lo = c.hi = v->truncated(2);
    c.cuda_lo = c.cuda_hi = cuda->truncated(2);
    c.cuda_text = cuda->truncated(2).str();
    c.build = "cuda" + c.cuda_text;
    c.cudnn = jstr(r, "cudnn");
    c.cudnn_major = Version::parse(c.cudnn).value_or(Version{}).major();
    c.python = jstr(r, "python");
    c.confirmed = jconfirmed(r);
    c.source = jstr(r, "source");
    c.preference = 2;
    bool linuxish = os != PlanOs::windows;
    // `tensorflow[and-cuda]` (NVIDIA pip wheels) exists from 2.14 on Linux.
    c.bundles = linuxish && *v >= Version{2, 14};
    if (c.bundles) {
      c.unconfirmed.push_back(
          "tensorflow[and-cuda] first published with 2.14 (the KB states the extra without a "
          "first version)");
    }
    std::string pkg =
        jstr(r, "package") == "tensorflow_gpu" && v->major() < 2 ? "tensorflow-gpu" : "tensorflow";
    std::string cud = c.cudnn, cu = c.cuda_text;
    bool bundles = c.bundles;
    std::string minor = v->truncated(2).str();
    c.install = [pkg, cud, cu, bundles, minor](const std::string& exact, PlanOs o) {
      std::vector<std::string> cmds;
      std::string vs = exact.empty() ? minor + ".*" : exact;
      if (bundles) {
        cmds.push_back("pip install \"tensorflow[and-cuda]==" + vs + "\"");
      } else {
        if (o == PlanOs::windows) {
          cmds.push_back("conda install -c conda-forge cudatoolkit=" + cu + " cudnn=" + cud);
        }
        cmds.push_back("pip install \"" + pkg + "==" + vs + "\"");
      }
      return cmds;
    };
    out.push_back(std::move(c));
  }
  return out;
}

Result<std::vector<Candidate>> other_candidates(const Kb& kb, const std::string& fw, PlanOs os) {
  auto j = load_json(kb, "others.json");
  if (!j) return std::unexpected(j.error());
  std::vector<Candidate> out;
  if (fw == "jax") {
    for (const auto& r : (*j)["jax"]["variants"]) {
      Candidate c;
      c.framework = "jax";
      c.version = "current";
      c.lo = Version{0};
      c.hi = Version{999};
      c.build = jstr(r, "extra");
      auto lo = Version::parse(
          std::string(trim(jstr(r["compatible_with"], "cuda"))).substr(2));  // ">=12.1"
      if (!lo) continue;
      c.cuda_lo = lo->truncated(2);
      c.cuda_hi = Version{lo->major(), 99};
      c.cuda_text = ">=" + c.cuda_lo.str();
      std::string cudnn_req = jstr(r["compatible_with"], "cudnn");
      c.cudnn = cudnn_req;
      c.cudnn_major = Version::parse(cudnn_req.substr(2)).value_or(Version{}).major();
      c.bundles = true;
      c.preference = 2;
      c.min_cc = Version::parse(jstr(r, "min_cc"));
      auto d = jstr(r, "min_driver_linux");
      if (d.starts_with(">=")) c.driver_floor = Version::parse(d.substr(2));
      c.windows = false;
      c.windows_note = "JAX has no native Windows GPU wheels";
      c.confirmed = jconfirmed(r);
      c.source = jstr(r, "source");
      c.notes.push_back(
          "the KB describes the current JAX release only (older jax[cuda11_pip] "
          "extras are not captured)");
      std::string extra = c.build;
      c.install = [extra](const std::string&, PlanOs) {
        return std::vector<std::string>{"pip install -U \"" + extra + "\""};
      };
      out.push_back(std::move(c));
    }
  } else if (fw == "onnxruntime-gpu") {
    for (const char* group : {"cuda12", "cuda11"}) {
      for (const auto& r : (*j)["onnxruntime_gpu"][group]) {
        std::string ort = jstr(r, "ort");
        Candidate c;
        c.framework = fw;
        if (ort.starts_with(">=")) {
          auto v = Version::parse(ort.substr(2));
          if (!v) continue;
          c.lo = *v;
          c.hi = Version{v->major(), 99};
        } else {
          auto v = Version::parse(ort);
          if (!v) continue;  // "recent (>=1.23?)": no usable version
          std::tie(c.lo, c.hi) = parse_range(ort);
          c.lo = c.lo.truncated(2);
          c.hi = c.hi.truncated(2);
        }
        c.version = ort;
        std::string cu = jstr(r, "cuda");
        if (cu.ends_with(".x")) {
          int m = static_cast<int>(parse_int(cu.substr(0, cu.size() - 2)).value_or(0));
          c.cuda_lo = Version{m, 0};
          c.cuda_hi = Version{m, 99};
        } else {
          c.cuda_lo = c.cuda_hi = Version::parse(cu).value_or(Version{}).truncated(2);
        }
        c.cuda_text = cu;
        c.build = std::string("cuda") + cu;
        std::string cudnn = jstr(r, "cudnn");
        auto slash = cudnn.find(" / ");
        if (slash != std::string::npos) {
          std::string l = cudnn.substr(0, slash), w = cudnn.substr(slash + 3);
          cudnn = os == PlanOs::windows ? w : l;
          cudnn = cudnn.substr(0, cudnn.find(" ("));
        }
        c.cudnn = cudnn;
        c.cudnn_major = static_cast<int>(parse_int(cudnn.substr(0, cudnn.find('.'))).value_or(0));
        c.bundles = false;
        c.preference = 2;
        c.confirmed = jconfirmed(r);
        c.source = jstr(r, "source");
        std::string note = jstr(r, "note");
        if (!note.empty()) c.notes.push_back("onnxruntime-gpu " + ort + ": " + note);
        bool not_pypi = note.find("not on PyPI") != std::string::npos;
        c.install = [not_pypi, lo = c.lo](const std::string& version, PlanOs) {
          std::string v = Version::parse(version).value_or(Version{}).parts().size() > 2
                              ? version
                              : lo.str() + ".*";
          if (not_pypi) {
            return std::vector<std::string>{
                "# onnxruntime-gpu " + v +
                " for CUDA 11 is not on PyPI: install it from ONNX Runtime's CUDA 11 feed "
                "(URL not in the KB)"};
          }
          return std::vector<std::string>{"pip install onnxruntime-gpu==" + v};
        };
        out.push_back(std::move(c));
      }
    }
  } else if (fw == "cupy") {
    for (const auto& r : (*j)["cupy"]["packages"]) {
      std::string pkg = jstr(r, "package");
      if (pkg.find('/') != std::string::npos) continue;  // "cupy-cuda111 / cupy-cuda110"
      std::string cu = jstr(r, "cuda");
      Candidate c;
      c.framework = fw;
      c.build = pkg;
      if (cu.ends_with(".x")) {
        int m = static_cast<int>(parse_int(cu.substr(0, cu.size() - 2)).value_or(0));
        c.cuda_lo = Version{m, 0};
        c.cuda_hi = Version{m, 99};
      } else {
        std::tie(c.cuda_lo, c.cuda_hi) = parse_range(cu);
      }
      c.cuda_text = cu;
      std::string vers = jstr(r, "cupy_versions");  // "12.x-14.x", "<=12.x", "13.6+ / 14.x"
      std::string first = vers.substr(0, vers.find(' '));
      if (first.starts_with("<=")) {
        c.lo = Version{0};
        c.hi = Version::parse(first.substr(2)).value_or(Version{0});
      } else {
        auto dash = first.find('-');
        c.lo = Version::parse(first.substr(0, dash)).value_or(Version{0});
        auto last = vers.substr(vers.find_last_of(" -") + 1);
        c.hi = Version::parse(last).value_or(c.lo);
      }
      c.lo = c.lo.truncated(1);
      c.hi = c.hi.truncated(1);
      c.version = vers;
      c.bundles = true;  // with the [ctk] extra
      c.preference = 2;
      c.confirmed = jconfirmed(r);
      c.source = jstr(r, "source");
      c.notes.push_back("cupy: cuDNN is optional; [ctk] installs the CUDA component wheels");
      c.install = [pkg](const std::string& version, PlanOs) {
        std::string v = version.empty() ? ""
                        : std::count(version.begin(), version.end(), '.') >= 2
                            ? "==" + version
                            : "==" + version + ".*";
        return std::vector<std::string>{"pip install \"" + pkg + "[ctk]" + v + "\""};
      };
      out.push_back(std::move(c));
    }
  } else if (fw == "paddlepaddle-gpu") {
    const json& pp = (*j)["paddlepaddle"];
    std::map<std::string, std::string> cudnn_for;  // Paddle Inference 2.6 table
    std::string cudnn_src;
    for (const auto& r : pp["versions"]) {
      if (r.contains("cuda_cudnn")) {
        for (auto it = r["cuda_cudnn"].begin(); it != r["cuda_cudnn"].end(); ++it) {
          cudnn_for[it.key()] = it.value().get<std::string>();
        }
        cudnn_src = jstr(r, "source");
      }
    }
    for (const auto& r : pp["versions"]) {
      if (!r.contains("variants")) continue;
      std::string ver = jstr(r, "paddle");
      auto range = parse_range(ver.substr(0, ver.find(".x")));
      std::vector<std::string> variants;
      if (r["variants"].is_object()) {
        for (auto it = r["variants"].begin(); it != r["variants"].end(); ++it) {
          variants.push_back(it.key());
        }
      } else {
        for (const auto& v : r["variants"]) variants.push_back(v.get<std::string>());
      }
      for (const auto& variant : variants) {
        auto cuda = cuda_from_tag(variant);
        if (!cuda) continue;
        Candidate c;
        c.framework = fw;
        c.version = ver;
        c.lo = range.first.truncated(2);
        c.hi = range.second.truncated(2);
        c.build = variant;
        c.cuda_lo = c.cuda_hi = *cuda;
        c.cuda_text = cuda->str();
        c.confirmed = jconfirmed(r);
        c.source = jstr(r, "source");
        bool v2 = c.lo.major() < 3;
        c.bundles = !v2;
        c.preference = variant == "cu102" ? 1 : 2;
        if (v2) {
          auto it = cudnn_for.find(cuda->str());
          if (it != cudnn_for.end()) {
            c.cudnn = it->second;
            c.cudnn_major = Version::parse(it->second).value_or(Version{}).major();
            c.notes.push_back("cuDNN " + it->second + " for CUDA " + cuda->str() +
                              " is from Paddle's 2.6 table (" + cudnn_src + ")");
          } else if (cuda->major() == 10) {
            c.cudnn = "7.6";
            c.cudnn_major = 7;
            c.unconfirmed.push_back("cuDNN 7.6 for Paddle's CUDA 10.2 build (not in the KB)");
          }
        } else {
          c.notes.push_back("Paddle 3.x installs CUDA/cuDNN wheels itself (others.json notes)");
        }
        std::string latest = jstr(r, "latest");
        bool windows_url_guess = v2;
        std::string lo_text = c.lo.str();
        c.install = [variant, v2, latest, lo_text, windows_url_guess](const std::string& exact,
                                                                      PlanOs o) {
          std::string v = !exact.empty() ? exact : latest.empty() ? lo_text : latest;
          if (v2) {
            std::string plat = o == PlanOs::windows ? "windows" : "linux";
            std::string suffix = variant == "cu102" ? "" : "." + variant;
            (void)windows_url_guess;
            if (variant == "cu102")
              return std::vector<std::string>{"python -m pip install paddlepaddle-gpu==" + v};
            return std::vector<std::string>{"python -m pip install paddlepaddle-gpu==" + v +
                                            suffix + " -f https://www.paddlepaddle.org.cn/whl/" +
                                            plat + "/mkl/avx/stable.html"};
          }
          return std::vector<std::string>{"python -m pip install paddlepaddle-gpu==" + v +
                                          " -i https://www.paddlepaddle.org.cn/packages/stable/" +
                                          variant + "/"};
        };
        if (v2 && os == PlanOs::windows) {
          c.unconfirmed.push_back(
              "Paddle 2.x Windows wheel index (the KB cites the Linux URL; the Windows one is its "
              "analogue)");
        }
        if (!c.confirmed) {
          c.unconfirmed.push_back("others.json paddlepaddle " + ver + " (" + c.source + ")");
        }
        out.push_back(std::move(c));
      }
    }
  }
  for (auto& c : out) {
    if (!c.confirmed && c.unconfirmed.empty()) {
      c.unconfirmed.push_back("others.json " + c.framework + " " + c.version + " (" + c.source +
                              ")");
    }
  }
  return out;
}

Result<std::vector<Candidate>> candidates_for(const Kb& kb, const std::string& fw, PlanOs os) {
  if (fw == "torch") return torch_candidates(kb);
  if (fw == "tensorflow") return tensorflow_candidates(kb, os);
  return other_candidates(kb, fw, os);
}

// ---------------------------------------------------------------- filters

struct Ctx {
  const PlanInputs& in;
  const Kb& kb;
  Os kb_os;
  std::vector<Version> toolkits;                    // major.minor from cuda_arch.json
  std::map<std::string, std::string> full_toolkit;  // "11.7" -> "11.7.1"
};

// Lowest CUDA (major.minor) whose toolkit covers `cc`.
std::optional<Version> min_cuda_for_cc(const Ctx& e, const Version& cc) {
  for (const auto& t : e.toolkits) {
    auto a = e.kb.arch_support(t);
    if (a && cc >= a->min_cc && cc <= a->max_cc) return t;
  }
  return std::nullopt;
}

bool cuda_covers_cc(const Ctx& e, const Version& cuda, const Version& cc) {
  auto a = e.kb.arch_support(cuda);
  return a && cc >= a->min_cc && cc <= a->max_cc;
}

bool arch_list_runs(const Candidate& c, const Version& cc) {
  if (c.arch_list.empty()) return true;
  for (const auto& [v, ptx] : c.arch_list) {
    if (v.major() == cc.major() && v.minor() <= cc.minor()) return true;  // SASS compatible
    if (ptx && v <= cc) return true;
  }
  return false;
}

Version min_driver(const Ctx& e, const Version& cuda, bool minor_compat) {
  return e.kb.min_driver_for_cuda(cuda, e.kb_os, minor_compat).value_or(Version{});
}

// Why a candidate cannot be used here ("" when it can), and the filter stage.
enum Stage { kOk = 0, kOs, kPython, kGpu, kDriver };

// Every reason a candidate cannot be used here (empty when it can), in filter order.
std::vector<std::pair<Stage, std::string>> failures(const Ctx& e, const Candidate& c) {
  std::vector<std::pair<Stage, std::string>> out;
  const auto& in = e.in;
  if (in.os == PlanOs::windows && !c.windows) out.emplace_back(kOs, c.windows_note);
  if (in.python) {
    auto m = python_matches(c.python, *in.python);
    if (m && !*m) {
      out.emplace_back(kPython, c.framework + " " + c.version + " supports Python " + c.python +
                                    ", not " + in.python->str());
    }
  }
  if (in.cc) {
    if (c.min_cc && *in.cc < *c.min_cc) {
      out.emplace_back(kGpu, c.build + " needs compute capability >= " + c.min_cc->str());
    } else if (!cuda_covers_cc(e, c.cuda_hi, *in.cc)) {
      auto need = min_cuda_for_cc(e, *in.cc);
      out.emplace_back(kGpu, "compute capability " + in.cc->str() + " needs CUDA " +
                                 (need ? ">= " + need->str() : "(not in cuda_arch.json)") + ", " +
                                 c.build + " is CUDA " + c.cuda_text);
    } else if (!arch_list_runs(c, *in.cc)) {
      out.emplace_back(kGpu, c.framework + " " + c.version + " " + c.build +
                                 " wheels carry no code for compute capability " + in.cc->str());
    }
  }
  if (in.driver) {
    Version need = min_driver(e, c.cuda_lo, true);
    if (c.driver_floor && *c.driver_floor > need) need = *c.driver_floor;
    if (!need.empty() && *in.driver < need) {
      out.emplace_back(kDriver, c.build + " needs driver >= " + need.str());
    }
  }
  return out;
}

std::pair<Stage, std::string> check(const Ctx& e, const Candidate& c) {
  auto f = failures(e, c);
  if (f.empty()) return {kOk, ""};
  return f.front();
}

// ---------------------------------------------------------------- combining

std::string container_image(const Ctx& e, const Version& cuda, int cudnn_major) {
  std::string full = cuda.str();
  auto it = e.full_toolkit.find(cuda.str());
  if (it != e.full_toolkit.end()) full = it->second;
  std::string ubuntu = cuda < Version{11, 7} ? "ubuntu20.04" : "ubuntu22.04";
  std::string cudnn = cudnn_major == 0 ? ""
                      : (cuda >= Version{12, 4} || cudnn_major >= 9)
                          ? "cudnn-"
                          : "cudnn" + std::to_string(cudnn_major) + "-";
  return "nvidia/cuda:" + full + "-" + cudnn + "runtime-" + ubuntu;
}

struct Combo {
  std::vector<const Candidate*> parts;
  Version cuda;
  int cudnn_major = 0;
};

std::optional<Combo> combine(const Ctx& e, const std::vector<const Candidate*>& parts) {
  Combo c;
  c.parts = parts;
  Version lo{0}, hi{999};
  for (const auto* p : parts) {
    lo = std::max(lo, p->cuda_lo);
    hi = std::min(hi, p->cuda_hi);
    if (p->cudnn_major != 0) {
      if (c.cudnn_major != 0 && c.cudnn_major != p->cudnn_major) return std::nullopt;
      c.cudnn_major = p->cudnn_major;
    }
  }
  if (lo.major() != hi.major()) {
    // Different minors of one major share the runtime through minor-version compatibility
    // (the newest is the one the toolkit/driver must provide).
    bool same_major = true;
    for (const auto* p : parts) same_major &= p->cuda_lo.major() == parts[0]->cuda_lo.major();
    if (!same_major) return std::nullopt;
  }
  bool all_same_major = true;
  for (const auto* p : parts) all_same_major &= p->cuda_lo.major() == lo.major();
  if (!all_same_major) return std::nullopt;
  // The CUDA the option runs on: the highest fixed CUDA, else for ranges the lowest version
  // the GPU accepts.
  Version cuda = lo;
  if (e.in.cc) {
    auto need = min_cuda_for_cc(e, *e.in.cc);
    if (need && *need > cuda && need->major() == cuda.major()) cuda = *need;
  }
  c.cuda = cuda;
  return c;
}

PlanOption make_option(const Ctx& e, const Combo& combo, const std::vector<FrameworkSpec>& specs) {
  PlanOption o;
  o.cuda = combo.cuda;
  o.cudnn_major = combo.cudnn_major;
  std::string cudnn_needed;
  Version toolkit{0};
  for (size_t i = 0; i < combo.parts.size(); ++i) {
    const Candidate& c = *combo.parts[i];
    FrameworkChoice fc;
    fc.framework = c.framework;
    fc.version = display_version(c, specs[i]);
    fc.build = c.build;
    fc.cuda = c.cuda_text;
    fc.cudnn = c.cudnn;
    fc.bundles_runtime = c.bundles;
    // The exact version to pin when the user gave one (x.y.z); else each framework's default.
    std::string iv;
    if (specs[i].op == "==" && specs[i].version &&
        (specs[i].version->parts().size() > 2 || c.framework == "cupy")) {
      iv = specs[i].version->str();
    }
    fc.install = c.install(iv, e.in.os);
    fc.confirmed = c.confirmed;
    fc.sources.push_back(c.source);
    fc.notes = c.notes;
    for (const auto& u : c.unconfirmed) o.unconfirmed.push_back(u);
    if (!c.bundles) {
      o.needs_toolkit = true;
      toolkit = std::max(toolkit, c.cuda_lo);
      if (cudnn_needed.empty() || Version::parse(c.cudnn).value_or(Version{}) >
                                      Version::parse(cudnn_needed).value_or(Version{})) {
        cudnn_needed = c.cudnn;
      }
    }
    if (!c.arch_list_confirmed && e.in.cc) {
      o.unconfirmed.push_back("pytorch.json wheel arch list for " + c.version + " " + c.build);
    }
    // The constraint that decided it.
    std::string why;
    if (specs[i].version) {
      why = "requested " + specs[i].text;
    } else {
      why = "newest " + c.framework + " release that fits";
    }
    if (c.preference == 3)
      why += "; " + c.build + " is the PyPI default build of " + c.version;
    else if (c.preference == 2 && c.framework == "torch")
      why += "; " + c.build + " is a stable build";
    if (e.in.cc) {
      auto need = min_cuda_for_cc(e, *e.in.cc);
      if (need) {
        why += "; compute capability " + e.in.cc->str() + " needs CUDA >= " + need->str();
      }
    }
    if (e.in.os == PlanOs::windows && c.framework == "tensorflow") {
      why += "; native Windows GPU builds end at TensorFlow 2.10 (tensorflow.json)";
    }
    o.decisions.push_back({c.framework + " " + fc.version + " " + c.build, why});
    o.frameworks.push_back(std::move(fc));
  }
  if (o.needs_toolkit) {
    o.toolkit = toolkit.str();
    o.cudnn = cudnn_needed;
    std::string why = "a framework here does not bundle the CUDA runtime/cuDNN";
    auto cv = Version::parse(cudnn_needed);
    if (cv) {
      bool ok = false;
      for (const auto& b : e.kb.cudnn_builds(*cv)) {
        if (toolkit.truncated(2) >= b.cuda_min && toolkit.truncated(2) <= b.cuda_max) ok = true;
      }
      why += ok ? "; cudnn.json: cuDNN " + cudnn_needed + " has a build for CUDA " + toolkit.str()
                : "; cudnn.json lists no cuDNN " + cudnn_needed + " build for CUDA " +
                      toolkit.str() + " (check the support matrix)";
      if (!ok)
        o.unconfirmed.push_back("cuDNN " + cudnn_needed + " build for CUDA " + toolkit.str());
    }
    o.decisions.push_back({"CUDA toolkit " + o.toolkit + " + cuDNN " + o.cudnn, why});
  } else {
    o.decisions.push_back({"no separate CUDA toolkit or cuDNN",
                           "every framework here installs its own CUDA runtime/cuDNN from pip "
                           "wheels; only the driver is needed"});
  }
  Version driver_cuda = o.needs_toolkit ? toolkit : o.cuda;
  for (const auto* p : combo.parts) driver_cuda = std::max(driver_cuda, p->cuda_lo);
  o.min_driver = min_driver(e, driver_cuda, true);
  o.recommended_driver = min_driver(e, driver_cuda, false);
  for (const auto* p : combo.parts) {
    if (p->driver_floor && *p->driver_floor > o.min_driver) o.min_driver = *p->driver_floor;
  }
  std::string dwhy = "cuda_driver.json: CUDA " + driver_cuda.str() +
                     " needs driver >= " + o.recommended_driver.str();
  if (o.min_driver < o.recommended_driver) {
    dwhy += " (>= " + o.min_driver.str() + " through CUDA " + std::to_string(driver_cuda.major()) +
            ".x minor-version compatibility, without PTX JIT of newer code)";
  }
  if (e.in.os == PlanOs::wsl2) dwhy += "; under WSL2 this is the Windows driver";
  o.decisions.push_back({"driver >= " + o.min_driver.str(), dwhy});
  o.container_image = container_image(e, driver_cuda, o.cudnn_major);
  for (const auto& u : o.unconfirmed) (void)u;
  o.confident = o.unconfirmed.empty();
  return o;
}

// Score: higher is better.
// `prefer_low[i]`: the framework's request was relaxed to ">= X": the closest version wins.
std::vector<long> score(const Combo& c, const std::vector<bool>& prefer_low) {
  std::vector<long> s;
  long confirmed = 1;
  for (const auto* p : c.parts) confirmed &= p->confirmed ? 1 : 0;
  for (size_t i = 0; i < c.parts.size(); ++i) {
    const auto* p = c.parts[i];
    long v = p->hi.major() * 10000L + p->hi.minor() * 100L + p->hi.patch();
    s.push_back(prefer_low[i] ? -v : v);
    s.push_back(p->preference);
  }
  s.push_back(confirmed);
  s.push_back(c.cuda.major() * 100L + c.cuda.minor());
  return s;
}

std::string versions_text(const std::vector<const Candidate*>& cs) {
  std::set<std::string> b;
  for (const auto* c : cs) b.insert(c->build);
  std::string out;
  for (const auto& x : b) out += (out.empty() ? "" : "/") + x;
  return out;
}

}  // namespace

const char* plan_os_name(PlanOs os) {
  switch (os) {
    case PlanOs::linux: return "linux";
    case PlanOs::windows: return "windows";
    case PlanOs::wsl2: return "wsl2";
  }
  return "linux";
}

namespace {

// Every name --framework accepts and the canonical name it stands for (the first row of
// each canonical name is the name itself).
const std::vector<std::pair<std::string, std::string>>& framework_aliases() {
  static const std::vector<std::pair<std::string, std::string>> aliases = {
      {"torch", "torch"},
      {"pytorch", "torch"},
      {"tensorflow", "tensorflow"},
      {"tensorflow-gpu", "tensorflow"},
      {"tensorflow_gpu", "tensorflow"},
      {"tf", "tensorflow"},
      {"paddlepaddle-gpu", "paddlepaddle-gpu"},
      {"paddlepaddle", "paddlepaddle-gpu"},
      {"paddle", "paddlepaddle-gpu"},
      {"jax", "jax"},
      {"onnxruntime-gpu", "onnxruntime-gpu"},
      {"onnxruntime", "onnxruntime-gpu"},
      {"ort", "onnxruntime-gpu"},
      {"cupy", "cupy"},
  };
  return aliases;
}

}  // namespace

std::vector<std::string> plan_framework_names() {
  std::vector<std::string> out;
  for (const auto& [alias, name] : framework_aliases()) {
    if (alias == name) out.push_back(name);
  }
  return out;
}

std::optional<PlanOs> parse_plan_os(std::string_view name) {
  for (PlanOs os : {PlanOs::linux, PlanOs::windows, PlanOs::wsl2}) {
    if (name == plan_os_name(os)) return os;
  }
  return std::nullopt;
}

std::vector<std::string> plan_os_names() {
  std::vector<std::string> out;
  for (PlanOs os : {PlanOs::linux, PlanOs::windows, PlanOs::wsl2}) out.push_back(plan_os_name(os));
  return out;
}

Result<FrameworkSpec> parse_framework_spec(std::string_view text) {
  FrameworkSpec s;
  s.text = std::string(trim(text));
  size_t pos = s.text.find_first_of("=<>!~");
  std::string name = lower(trim(std::string_view(s.text).substr(0, pos)));
  const auto& aliases = framework_aliases();
  auto it =
      std::find_if(aliases.begin(), aliases.end(), [&](const auto& a) { return a.first == name; });
  if (it == aliases.end()) {
    return fail("--framework '" + s.text + "': unknown framework; use one of " +
                join(plan_framework_names(), ", "));
  }
  s.name = it->second;
  if (pos == std::string::npos) return s;
  std::string rest = s.text.substr(pos);
  for (const char* op : {"==", ">=", "<=", ">", "<"}) {
    if (rest.starts_with(op)) {
      s.op = op;
      break;
    }
  }
  if (s.op.empty()) {
    return fail("--framework '" + s.text + "': use ==, >=, <=, > or < before the version");
  }
  s.version = Version::parse(trim(std::string_view(rest).substr(s.op.size())));
  if (!s.version) {
    return fail("--framework '" + s.text + "': '" + rest.substr(s.op.size()) +
                "' is not a version (e.g. torch==2.4.1)");
  }
  return s;
}

void plan_inputs_from_facts(const Facts& facts, bool os_given, PlanInputs& in) {
  if (!in.cc) {
    for (const auto& g : facts.gpus) {
      if (!g.visible || !g.compute_capability) continue;
      in.cc = *g.compute_capability;
      in.gpu_name = g.name ? *g.name : "";
      in.cc_source =
          "probe: " + (g.compute_capability.source.empty() ? std::string("GPU 0")
                                                           : g.compute_capability.source);
      break;
    }
  }
  if (!in.driver) {
    if (auto d = facts.driver.version()) {
      in.driver = *d;
      in.driver_source = "probe: this machine's driver";
    }
  }
  if (!os_given) {
    if (facts.host.wsl2 && *facts.host.wsl2) {
      in.os = PlanOs::wsl2;
    } else if (facts.host.os && *facts.host.os == "windows") {
      in.os = PlanOs::windows;
    } else {
      in.os = PlanOs::linux;
    }
    in.os_source = "probe: this machine";
  }
  if (!in.python) {
    for (const auto& p : facts.python) {
      if (!p.version) continue;
      if (auto v = Version::parse(*p.version)) {
        in.python = v->truncated(2);
        in.python_source =
            "probe: " + (p.interpreter ? *p.interpreter : std::string("first Python"));
        break;
      }
    }
  }
}

Result<Plan> make_plan(const PlanInputs& inputs, const Kb& kb) {
  Plan plan;
  plan.inputs = inputs;
  if (plan.inputs.frameworks.empty()) {
    plan.inputs.frameworks.push_back(*parse_framework_spec("torch"));
    plan.notes.push_back("no --framework given: planning for torch");
  }
  auto arch = load_json(kb, "cuda_arch.json");
  if (!arch) return std::unexpected(arch.error());
  auto drv = load_json(kb, "cuda_driver.json");
  if (!drv) return std::unexpected(drv.error());
  Ctx e{plan.inputs, kb, plan.inputs.os == PlanOs::linux ? Os::linux : Os::windows, {}, {}};
  for (const auto& t : (*arch)["toolkits"]) {
    if (auto v = Version::parse(jstr(t, "cuda"))) e.toolkits.push_back(v->truncated(2));
  }
  std::sort(e.toolkits.begin(), e.toolkits.end());
  for (const auto& t : (*drv)["toolkit_driver"]) {
    auto v = Version::parse(jstr(t, "toolkit"));
    if (v && v->parts().size() >= 3) e.full_toolkit[v->truncated(2).str()] = jstr(t, "toolkit");
  }
  const auto& in = plan.inputs;
  if (!in.cc)
    plan.notes.push_back("GPU not known: no compute-capability check (give --gpu or --cc)");
  if (!in.driver) plan.notes.push_back("driver not known: no driver check (give --driver)");

  // Candidates per framework, filtered; remember why the last ones fell out.
  std::vector<std::vector<Candidate>> all(in.frameworks.size());
  std::vector<std::vector<const Candidate*>> ok(in.frameworks.size());
  std::vector<FrameworkSpec> specs = in.frameworks;
  std::vector<bool> prefer_low(in.frameworks.size(), false);
  bool relaxed = false;
  for (size_t i = 0; i < in.frameworks.size(); ++i) {
    auto cands = candidates_for(kb, in.frameworks[i].name, in.os);
    if (!cands) return std::unexpected(cands.error());
    all[i] = std::move(*cands);
    const auto& spec = in.frameworks[i];
    std::vector<const Candidate*> matching;
    for (const auto& c : all[i]) {
      if (spec_matches(spec, c)) matching.push_back(&c);
    }
    if (matching.empty()) {
      std::string os_hint;
      if (spec.name == "tensorflow" && in.os == PlanOs::windows && spec.version &&
          *spec.version >= Version{2, 11}) {
        os_hint =
            "TensorFlow >= 2.11 has no native Windows GPU build -> tensorflow 2.10 with "
            "CUDA 11.2 + cuDNN 8.1 (--framework tensorflow==2.10), or WSL2 (--os wsl2)";
        plan.conflicts.push_back(os_hint);
        specs[i] = *parse_framework_spec("tensorflow==2.10");
        plan.relaxed_to.push_back("tensorflow==2.10");
        relaxed = true;
        for (const auto& c : all[i]) {
          if (spec_matches(specs[i], c)) matching.push_back(&c);
        }
      } else {
        plan.conflicts.push_back(spec.text + ": the knowledge base lists no such " + spec.name +
                                 " GPU build for " + plan_os_name(in.os) +
                                 " (pytorch.json / tensorflow.json / others.json)");
        continue;
      }
    }
    std::map<Stage, std::vector<std::string>> why;
    for (const auto* c : matching) {
      auto [stage, reason] = check(e, *c);
      if (stage == kOk) {
        ok[i].push_back(c);
      } else {
        why[stage].push_back(reason);
      }
    }
    if (!ok[i].empty()) continue;
    // Nothing left: explain with the stage that removed the last candidates, and the way out.
    Stage worst = why.rbegin()->first;
    std::vector<const Candidate*> fits;  // without the version constraint
    for (const auto& c : all[i]) {
      if (check(e, c).first == kOk) fits.push_back(&c);
    }
    std::string head = spec.text + " (" + versions_text(matching) + ")";
    if (worst == kDriver) {
      Version need{999};
      for (const auto* c : matching) {
        Version d = min_driver(e, c->cuda_lo, true);
        if (c->driver_floor && *c->driver_floor > d) d = *c->driver_floor;
        need = std::min(need, d);
      }
      plan.conflicts.push_back("driver " + in.driver->str() + " is too old for every " + head +
                               " build -> install driver >= " + need.str() +
                               " (the plan below assumes it)");
      for (const auto* c : matching) {
        if (check(e, *c).first == kDriver) ok[i].push_back(c);
      }
      plan.relaxed_to.push_back("driver >= " + need.str());
      relaxed = true;
      continue;
    }
    std::string reason = why[worst].front();
    if (fits.empty()) {
      std::string out = head + ": " + reason + "; no " + spec.name +
                        " build in the knowledge base fits these inputs";
      if (worst == kOs) out += " -> use WSL2 (--os wsl2) or Linux";
      plan.conflicts.push_back(out);
      continue;
    }
    // The way out: the nearest versions that fit.
    Version want = spec.version.value_or(Version{0});
    const Candidate* best = nullptr;
    bool above = false;
    for (const auto* c : fits) {
      if (c->hi >= want.truncated(c->hi.parts().size())) {
        if (!best || !above || c->lo < best->lo) best = c;
        above = true;
      } else if (!above && (!best || c->hi > best->hi)) {
        best = c;
      }
    }
    std::string new_spec = spec.name + (above ? ">=" : "==") + best->lo.str();
    std::set<std::string> builds;
    for (const auto* c : fits) {
      if (c->lo == best->lo) builds.insert(c->build);
    }
    std::string bl;
    for (const auto& b : builds) bl += (bl.empty() ? "" : "/") + b;
    std::string way = spec.name + " " + (above ? ">= " : "") + best->lo.str() + " with " + bl;
    // Every limit that rules out all of the requested builds, in one sentence.
    std::vector<std::string> clauses;
    for (Stage st : {kOs, kPython, kGpu}) {
      std::string first;
      bool all_fail = std::all_of(matching.begin(), matching.end(), [&](const Candidate* c) {
        for (const auto& [fs, fr] : failures(e, *c)) {
          if (fs == st) {
            if (first.empty()) first = fr;
            return true;
          }
        }
        return false;
      });
      if (!all_fail) continue;
      auto need = in.cc ? min_cuda_for_cc(e, *in.cc) : std::nullopt;
      bool cuda_floor = st == kGpu && need &&
                        std::all_of(matching.begin(), matching.end(), [&](const Candidate* c) {
                          return !cuda_covers_cc(e, c->cuda_hi, *in.cc);
                        });
      if (cuda_floor) {
        clauses.push_back("a GPU of compute capability " + in.cc->str() +
                          " needs CUDA >= " + need->str() + " while " + spec.text + " has only " +
                          versions_text(matching) + " builds");
      } else if (st == kPython) {
        clauses.push_back(first);
      } else {
        clauses.push_back(head + ": " + first);
      }
    }
    if (clauses.empty()) clauses.push_back(head + ": " + reason);
    std::string sentence;
    for (const auto& cl : clauses) sentence += (sentence.empty() ? "" : ", and ") + cl;
    sentence += " -> " + way;
    if (worst == kOs && spec.name == "jax") sentence += ", or WSL2 (--os wsl2)";
    plan.conflicts.push_back(sentence);
    plan.relaxed_to.push_back(new_spec);
    relaxed = true;
    specs[i] = *parse_framework_spec(new_spec);
    prefer_low[i] = above;
    for (const auto* c : fits) {
      if (spec_matches(specs[i], *c)) ok[i].push_back(c);
    }
  }
  (void)relaxed;
  for (const auto& o : ok) {
    if (o.empty()) return plan;
  }

  // Every combination (bounded), scored.
  std::vector<Combo> combos;
  std::vector<size_t> idx(ok.size(), 0);
  size_t guard = 0;
  while (guard++ < 200000) {
    std::vector<const Candidate*> parts;
    for (size_t i = 0; i < ok.size(); ++i) parts.push_back(ok[i][idx[i]]);
    if (auto c = combine(e, parts)) {
      // The driver must carry the shared CUDA too (ranges may have moved it up).
      bool driver_ok = true;
      if (in.driver && plan.relaxed_to.empty()) {
        Version need = min_driver(e, c->cuda, true);
        driver_ok = need.empty() || *in.driver >= need;
      }
      bool gpu_ok = !in.cc || cuda_covers_cc(e, c->cuda, *in.cc);
      if (driver_ok && gpu_ok) combos.push_back(std::move(*c));
    }
    size_t k = 0;
    while (k < ok.size() && ++idx[k] == ok[k].size()) idx[k++] = 0;
    if (k == ok.size()) break;
  }
  if (combos.empty()) {
    std::string list;
    for (const auto& s : specs) list += (list.empty() ? "" : ", ") + s.text;
    plan.conflicts.push_back(list +
                             " share no CUDA major and cuDNN major in the knowledge base "
                             "-> install them in separate environments");
    return plan;
  }
  std::stable_sort(combos.begin(), combos.end(), [&](const Combo& a, const Combo& b) {
    return score(a, prefer_low) > score(b, prefer_low);
  });
  // Best first; then the best of each other set of builds (another CUDA), then the rest.
  std::set<std::string> seen, seen_builds;
  for (int pass = 0; pass < 2 && plan.options.size() < 8; ++pass) {
    for (const auto& c : combos) {
      std::string key, builds;
      for (const auto* p : c.parts) {
        key += p->framework + p->version + p->build + ";";
        builds += p->build + ";";
      }
      if (seen.contains(key)) continue;
      if (pass == 0 && seen_builds.contains(builds)) continue;
      seen.insert(key);
      seen_builds.insert(builds);
      plan.options.push_back(make_option(e, c, specs));
      if (plan.options.size() >= 8) break;
    }
  }
  for (auto& o : plan.options) {
    if (!o.confident) {
      o.decisions.push_back({"confidence lowered", "rests on unconfirmed knowledge-base rows"});
    }
  }
  if (in.driver && !plan.options.empty()) {
    const auto& b = plan.options.front();
    if (*in.driver < b.recommended_driver && *in.driver >= b.min_driver) {
      plan.notes.push_back("driver " + in.driver->str() + " runs CUDA " + b.cuda.str() +
                           " only through minor-version compatibility; >= " +
                           b.recommended_driver.str() + " is the toolkit's own floor");
    }
  }
  return plan;
}

// ---------------------------------------------------------------- rendering

namespace {

void render_option(std::ostringstream& s, const PlanOption& o, const std::string& indent) {
  for (const auto& f : o.frameworks) {
    s << indent << f.framework << " " << f.version << "  build " << f.build << "  (CUDA " << f.cuda;
    if (!f.cudnn.empty()) s << ", cuDNN " << f.cudnn;
    s << (f.bundles_runtime ? ", pip wheels bring the runtime" : ", needs CUDA/cuDNN installed")
      << ")" << (f.confirmed ? "" : "  [unconfirmed]") << "\n";
  }
  s << indent << "CUDA " << o.cuda.str();
  if (o.cudnn_major) s << ", cuDNN " << o.cudnn_major << ".x";
  s << "\n";
  if (o.needs_toolkit) {
    s << indent << "separate install: CUDA toolkit " << o.toolkit << " + cuDNN " << o.cudnn << "\n";
  } else {
    s << indent << "separate install: none (no CUDA toolkit or cuDNN needed)\n";
  }
  s << indent << "driver: >= " << o.min_driver.str();
  if (o.recommended_driver > o.min_driver)
    s << " (recommended >= " << o.recommended_driver.str() << ")";
  s << "\n";
}

}  // namespace

std::string render_plan_text(const Plan& plan, size_t max_alternatives) {
  std::ostringstream s;
  const auto& in = plan.inputs;
  s << "dlenv plan\n";
  std::string fws;
  for (const auto& f : in.frameworks) fws += (fws.empty() ? "" : ", ") + f.text;
  s << "  for: " << (fws.empty() ? "torch" : fws) << "\n";
  s << "  gpu: ";
  if (in.cc) {
    s << (in.gpu_name.empty() ? "" : in.gpu_name + ", ") << "compute capability " << in.cc->str();
    if (!in.cc_source.empty()) s << " (" << in.cc_source << ")";
  } else {
    s << "unknown";
  }
  s << "\n  driver: " << (in.driver ? in.driver->str() : "unknown");
  if (in.driver && !in.driver_source.empty()) s << " (" << in.driver_source << ")";
  s << "\n  os: " << plan_os_name(in.os);
  if (!in.os_source.empty()) s << " (" << in.os_source << ")";
  s << "\n  python: " << (in.python ? in.python->str() : "any");
  if (in.python && !in.python_source.empty()) s << " (" << in.python_source << ")";
  s << "\n";
  if (!plan.conflicts.empty()) {
    s << "\nConflicts\n";
    for (const auto& c : plan.conflicts) s << "  ! " << c << "\n";
  }
  if (plan.options.empty()) {
    s << "\nNo combination fits.\n";
  } else {
    const auto& b = plan.options.front();
    s << "\nBest" << (plan.relaxed_to.empty() ? "" : " (after the way out above)")
      << (b.confident ? "" : "  [lower confidence: rests on unconfirmed KB rows]") << "\n";
    render_option(s, b, "  ");
    s << "  install:\n";
    for (const auto& f : b.frameworks) {
      for (const auto& cmd : f.install) s << "    " << cmd << "\n";
    }
    s << "  container: " << b.container_image
      << "  (naming pattern of NVIDIA's CUDA images; tag not checked)\n";
    s << "  why:\n";
    for (const auto& d : b.decisions) s << "    - " << d.choice << ": " << d.constraint << "\n";
    if (!b.unconfirmed.empty()) {
      s << "  unconfirmed:\n";
      for (const auto& u : b.unconfirmed) s << "    - " << u << "\n";
    }
    std::set<std::string> notes;
    for (const auto& f : b.frameworks) {
      for (const auto& n : f.notes) notes.insert(n);
    }
    for (const auto& n : notes) s << "  note: " << n << "\n";
    if (plan.options.size() > 1 && max_alternatives > 0) {
      s << "\nAlternatives\n";
      for (size_t i = 1; i < plan.options.size() && i <= max_alternatives; ++i) {
        const auto& o = plan.options[i];
        s << "  " << i << ".";
        for (const auto& f : o.frameworks)
          s << " " << f.framework << " " << f.version << " " << f.build;
        s << " | CUDA " << o.cuda.str();
        if (o.cudnn_major) s << ", cuDNN " << o.cudnn_major << ".x";
        s << " | "
          << (o.needs_toolkit ? "toolkit " + o.toolkit + " + cuDNN " + o.cudnn : "no toolkit")
          << " | driver >= " << o.min_driver.str() << (o.confident ? "" : " | unconfirmed") << "\n";
        for (const auto& f : o.frameworks) {
          for (const auto& cmd : f.install) s << "     " << cmd << "\n";
        }
      }
    }
  }
  for (const auto& n : plan.notes) s << "\nnote: " << n;
  if (!plan.notes.empty()) s << "\n";
  return s.str();
}

std::string render_plan_json(const Plan& plan) {
  const auto& in = plan.inputs;
  json j;
  j["schema"] = "dlenv.plan/1";
  json ji;
  json fws = json::array();
  for (const auto& f : in.frameworks) {
    fws.push_back({{"spec", f.text},
                   {"name", f.name},
                   {"op", f.op},
                   {"version", f.version ? json(f.version->str()) : json(nullptr)}});
  }
  ji["frameworks"] = fws;
  ji["gpu"] = in.gpu_name.empty() ? json(nullptr) : json(in.gpu_name);
  ji["compute_capability"] = in.cc ? json(in.cc->str()) : json(nullptr);
  ji["compute_capability_source"] = in.cc_source;
  ji["driver"] = in.driver ? json(in.driver->str()) : json(nullptr);
  ji["driver_source"] = in.driver_source;
  ji["os"] = plan_os_name(in.os);
  ji["os_source"] = in.os_source;
  ji["python"] = in.python ? json(in.python->str()) : json(nullptr);
  ji["python_source"] = in.python_source;
  j["inputs"] = ji;
  j["conflicts"] = plan.conflicts;
  j["relaxed_to"] = plan.relaxed_to;
  json opts = json::array();
  for (const auto& o : plan.options) {
    json jo;
    json jf = json::array();
    for (const auto& f : o.frameworks) {
      jf.push_back({{"framework", f.framework},
                    {"version", f.version},
                    {"build", f.build},
                    {"cuda", f.cuda},
                    {"cudnn", f.cudnn.empty() ? json(nullptr) : json(f.cudnn)},
                    {"bundles_runtime", f.bundles_runtime},
                    {"install", f.install},
                    {"confirmed", f.confirmed},
                    {"sources", f.sources},
                    {"notes", f.notes}});
    }
    jo["frameworks"] = jf;
    jo["cuda"] = o.cuda.str();
    jo["cudnn_major"] = o.cudnn_major ? json(o.cudnn_major) : json(nullptr);
    jo["needs_toolkit"] = o.needs_toolkit;
    jo["toolkit"] = o.needs_toolkit ? json(o.toolkit) : json(nullptr);
    jo["cudnn"] = o.needs_toolkit ? json(o.cudnn) : json(nullptr);
    jo["min_driver"] = o.min_driver.str();
    jo["recommended_driver"] = o.recommended_driver.str();
    jo["container_image"] = {{"image", o.container_image},
                             {"confirmed", o.container_confirmed},
                             {"note", "naming pattern of NVIDIA's CUDA images; tag not checked"}};
    jo["confident"] = o.confident;
    jo["unconfirmed"] = o.unconfirmed;
    json jd = json::array();
    for (const auto& d : o.decisions)
      jd.push_back({{"choice", d.choice}, {"constraint", d.constraint}});
    jo["decisions"] = jd;
    opts.push_back(jo);
  }
  j["best"] = plan.options.empty() ? json(nullptr) : opts.front();
  json alts = json::array();
  for (size_t i = 1; i < opts.size(); ++i) alts.push_back(opts[i]);
  j["alternatives"] = alts;
  j["notes"] = plan.notes;
  return json_text(j, 2) + "\n";
}

}  // namespace dlenv
