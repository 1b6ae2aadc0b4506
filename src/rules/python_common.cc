#include "rules/python_common.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "util/strings.h"

namespace dlenv::pyrules {
namespace {

std::string norm(std::string_view n) {
  std::string s = to_lower(n);
  for (auto& ch : s) {
    if (ch == '_' || ch == '.') ch = '-';
  }
  return s;
}

}  // namespace

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

std::optional<Requirement> parse_requirement(std::string_view text) {
  Requirement r;
  r.text = std::string(text);
  auto semi = text.find(';');
  std::string_view head = text.substr(0, semi);
  if (semi != std::string_view::npos) r.extra_only = contains(text.substr(semi), "extra");
  size_t i = 0;
  while (i < head.size() && (std::isalnum(static_cast<unsigned char>(head[i])) || head[i] == '-' ||
                             head[i] == '_' || head[i] == '.'))
    ++i;
  if (i == 0) return std::nullopt;
  r.name = norm(head.substr(0, i));
  std::string rest;
  for (char ch : head.substr(i)) {
    if (ch != ' ' && ch != '(' && ch != ')') rest += ch;
  }
  if (auto b = rest.find('['); b == 0) rest = rest.substr(rest.find(']') + 1);  // extras
  for (const auto& part : split(rest, ',')) {
    size_t n = 0;
    while (n < part.size() && std::string_view("=<>!~").find(part[n]) != std::string_view::npos)
      ++n;
    auto v = Version::parse(std::string_view(part).substr(n));
    if (n == 0 || !v) continue;
    r.specs.push_back({part.substr(0, n), *v});
  }
  return r;
}

// The lowest version a requirement allows (== or >=); nullopt when unbounded below.
std::optional<Version> lower_bound(const Requirement& r) {
  for (const auto& [op, v] : r.specs) {
    if (op == "==" || op == ">=" || op == "~=" || op == "===") return v;
  }
  return std::nullopt;
}

bool satisfies(const Requirement& r, const Version& v) {
  for (const auto& [op, want] : r.specs) {
    // "==9.1.0.70" against "9.1.0.70"; "==2.*" is parsed as 2 and compared on its length.
    Version have = v.truncated(std::max<size_t>(want.parts().size(), 1));
    if ((op == "==" || op == "===") && !(have == want)) return false;
    if (op == ">=" && v < want) return false;
    if (op == ">" && !(want < v)) return false;
    if (op == "<=" && want < v) return false;
    if (op == "<" && !(v < want)) return false;
    if (op == "!=" && have == want) return false;
  }
  return true;
}

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

// The torch release row (kb/pytorch.json releases[]) of a torch version.
json torch_release(const json& kb, const Version& torch) {
  if (!kb.is_object() || !kb.contains("releases")) return json();
  std::string mm = std::to_string(torch.major()) + "." + std::to_string(torch.minor());
  for (const auto& r : kb["releases"]) {
    if (r.value("torch", "") == mm) return r;
  }
  return json();
}

std::string torch_reinstall(const PythonEnv& e, const std::string& torch_version,
                            const std::string& variant) {
  std::string base = torch_version.substr(0, torch_version.find('+'));
  return pip(e) + " install --force-reinstall torch==" + base +
         " torchvision torchaudio --index-url https://download.pytorch.org/whl/" + variant;
}

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

const FrameworkFacts* tf_cuda(const PythonEnv& e) {
  const auto* t = fw(e, "tensorflow");
  return t && t->cuda_build.ok() && *t->cuda_build ? t : nullptr;
}

}  // namespace dlenv::pyrules
