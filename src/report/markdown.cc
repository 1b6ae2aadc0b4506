// The Markdown report: compact, for pasting into a bug report.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "report/internal.h"
#include "report/report.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using namespace report_detail;

size_t longest_backtick_run(std::string_view s) {
  size_t best = 0;
  size_t run = 0;
  for (char ch : s) {
    run = ch == '`' ? run + 1 : 0;
    best = std::max(best, run);
  }
  return best;
}

// An inline code span that survives backticks in the text.
std::string code_span(std::string_view s) {
  std::string text = clean(s);
  std::string fence(longest_backtick_run(text) + 1, '`');
  bool pad = !text.empty() && (text.front() == '`' || text.back() == '`');
  std::string inner = pad ? " " + text + " " : text;
  return fence + inner + fence;
}

template <class T>
std::string fact_or(const Fact<T>& f, const std::string& fallback) {
  return f.ok() ? clean(value_text(*f)) : fallback;
}

std::string host_summary(const HostFacts& h) {
  std::vector<std::string> parts;
  if (h.distro.ok()) {
    parts.push_back(clean(*h.distro));
  } else {
    parts.push_back(fact_text(h.os));
  }
  if (h.kernel.ok()) parts.push_back("kernel " + clean(*h.kernel));
  if (h.arch.ok()) parts.push_back(clean(*h.arch));
  if (h.container.ok() && *h.container != "none") parts.push_back("container " + *h.container);
  if (h.wsl2.ok() && *h.wsl2) parts.push_back("WSL2");
  return join(parts, ", ");
}

// WSL, container, Docker host, Secure Boot, kernel log, host compiler (what applies).
std::string system_summary(const Facts& f) {
  const SystemFacts& s = f.system;
  std::vector<std::string> parts;
  if (s.wsl.version == 1) parts.push_back("WSL1");
  if (s.wsl.version == 2) {
    parts.push_back("WSL2 (" + std::to_string(s.wsl.libcuda.size()) +
                    " libcuda in /usr/lib/wsl/lib)");
  }
  if (f.host.container.ok() && *f.host.container != "none" && s.container.shm_bytes) {
    parts.push_back("/dev/shm " + human_bytes(*s.container.shm_bytes));
  }
  if (s.docker.docker) {
    parts.push_back(std::string("Docker, NVIDIA Container Toolkit ") +
                    (s.docker.toolkit_files.empty() ? "not installed" : "installed"));
  }
  if (s.kernel.secure_boot.ok()) {
    parts.push_back(std::string("Secure Boot ") + (*s.kernel.secure_boot ? "on" : "off"));
  }
  if (!s.kernel.log_lines.empty()) {
    parts.push_back(std::to_string(s.kernel.log_lines.size()) + " kernel log lines of interest");
  }
  if (s.host_compiler.gcc_major) {
    parts.push_back("GCC " + std::to_string(*s.host_compiler.gcc_major));
  }
  return parts.empty() ? "nothing notable" : join(parts, ", ");
}

std::string driver_summary(const DriverFacts& d) {
  std::string out = driver_version_text(d);
  if (out.empty()) {
    out = "not found";
    const Fact<std::string>& k = d.kernel_module_version;
    if (!k.ok()) out = unknown_text(k.status, k.reason);
  }
  if (d.cuda_driver_version.ok()) {
    out += " (CUDA " + Version::from_cuda_int(*d.cuda_driver_version).str() + ")";
  }
  if (d.open_kernel_module.ok()) {
    out += *d.open_kernel_module ? ", open kernel module" : ", proprietary kernel module";
  }
  if (d.nouveau_loaded) out += ", nouveau loaded";
  return out;
}

std::string gpu_summary(const Facts& facts) {
  if (facts.gpus.empty()) {
    return facts.gpu_count.ok() ? std::to_string(*facts.gpu_count) + " GPUs"
                                : fact_text(facts.gpu_count);
  }
  // Identical GPUs are grouped: "8 × NVIDIA H200 (cc 9.0, 140.4 GiB)".
  std::vector<std::pair<std::string, int>> groups;
  int hidden = 0;
  for (const GpuFacts& g : facts.gpus) {
    if (!g.visible) ++hidden;
    std::string d = fact_or(g.name, "unknown GPU") + " (cc " +
                    (g.compute_capability.ok() ? g.compute_capability->str() : "?");
    if (g.memory_total_bytes.ok()) d += ", " + human_bytes(*g.memory_total_bytes);
    d += ")";
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const auto& p) { return p.first == d; });
    if (it == groups.end()) {
      groups.emplace_back(d, 1);
    } else {
      ++it->second;
    }
  }
  std::vector<std::string> parts;
  for (const auto& [d, n] : groups) parts.push_back(std::to_string(n) + " × " + d);
  std::string out = join(parts, "; ");
  if (hidden > 0) out += "; " + std::to_string(hidden) + " hidden by CUDA_VISIBLE_DEVICES";
  return out;
}

std::string toolkit_summary(const std::vector<ToolkitFacts>& toolkits) {
  if (toolkits.empty()) return "none found";
  std::vector<std::string> parts;
  for (const ToolkitFacts& t : toolkits) {
    std::string root = clean(t.root);
    std::string s =
        fact_or(t.version, "unknown version") + " at " + (root.empty() ? "(unknown path)" : root);
    auto via = active_via(t);
    if (!via.empty()) s += " (active: " + join(via, ", ") + ")";
    parts.push_back(s);
  }
  return join(parts, "; ");
}

std::string cudnn_summary(const std::vector<CudnnCopy>& copies) {
  if (copies.empty()) return "none found";
  std::vector<std::string> parts;
  for (const CudnnCopy& c : copies) {
    std::string version = c.library_version.ok()  ? c.library_version->str()
                          : c.header_version.ok() ? c.header_version->str()
                                                  : "unknown version";
    std::string where = clean(c.dir.empty() ? c.library : c.dir);
    std::string s = version + " at " + (where.empty() ? "(unknown path)" : where);
    if (!c.found_via.empty()) s += " (" + join(c.found_via, ", ") + ")";
    if (!c.sublibraries_missing.empty()) {
      s += ", " + std::to_string(c.sublibraries_missing.size()) + " sub-libraries missing";
    }
    parts.push_back(s);
  }
  return join(parts, "; ");
}

std::string python_summary(const std::vector<PythonEnv>& envs) {
  if (envs.empty()) return "no interpreter found";
  std::vector<std::string> parts;
  for (const PythonEnv& e : envs) {
    std::string s = clean(e.interpreter.ok() ? *e.interpreter : e.prefix);
    if (e.version.ok()) s += " (" + clean(*e.version) + ")";
    std::vector<std::string> fws;
    for (const auto& f : e.frameworks) {
      std::string t = f.package + " " + f.version;
      if (f.cuda.ok()) t += " CUDA " + *f.cuda;
      fws.push_back(clean(t));
    }
    s += ": " + (fws.empty() ? std::string("no frameworks") : join(fws, ", "));
    parts.push_back(s);
  }
  return join(parts, "; ");
}

// Whether each framework has the GPU, as the interpreter said when --deep imported it.
std::string deep_framework_text(const DeepFramework& f) {
  std::string t = f.name + (f.version.empty() ? "" : " " + f.version) + ": ";
  if (!f.imported) return t + "import failed";
  if (!f.gpu_available.ok()) return t + "unknown";
  if (!*f.gpu_available) return t + "no";
  return t + "yes (" + std::to_string(f.device_count) +
         (f.device_count == 1 ? " device)" : " devices)");
}

std::string cuda_available_summary(const std::vector<PythonEnv>& envs) {
  std::vector<std::string> parts;
  for (const PythonEnv& e : envs) {
    std::vector<std::string> fws;
    if (e.deep && e.deep->status.ok() && *e.deep->status == "ok") {
      for (const auto& f : e.deep->frameworks) fws.push_back(clean(deep_framework_text(f)));
    } else {
      const std::string why = e.deep ? "not checked (" + fact_text(e.deep->status) + ")"
                                     : "not checked (run with --deep)";
      for (const auto& f : e.frameworks)
        fws.push_back(clean(f.package + " " + f.version) + ": " + why);
    }
    if (fws.empty()) continue;
    std::string s = join(fws, ", ");
    if (envs.size() > 1) s = clean(e.interpreter.ok() ? *e.interpreter : e.prefix) + ": " + s;
    parts.push_back(s);
  }
  return parts.empty() ? "no GPU frameworks installed" : join(parts, "; ");
}

std::string libc_summary(const HostFacts& h) {
  return h.glibc.ok() ? "glibc " + clean(*h.glibc) : fact_text(h.glibc);
}

std::string cpu_summary(const HostFacts& h) {
  std::string out = fact_text(h.cpu_model);
  if (h.cpu_count.ok()) {
    out += ", " + std::to_string(*h.cpu_count) +
           (*h.cpu_count == 1 ? " logical CPU" : " logical CPUs");
  }
  return out;
}

std::string env_summary(const EnvFacts& e) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : e.vars) {
    if (name == "PATH") continue;
    parts.push_back(name + "=" + value);
  }
  if (parts.empty()) return "no relevant variables set";
  return join(parts, ", ");
}

}  // namespace

std::string render_markdown(const Facts& facts, const std::vector<Finding>& findings,
                            Redactor* redact) {
  // Each piece is redacted before it is escaped: a placeholder like <host> then reads as
  // such in table cells too.
  auto r = [&](std::string_view s) { return redact != nullptr ? (*redact)(s) : std::string(s); };
  std::string out;
  Counts counts = count_findings(findings);
  std::string title = "dlenv";
  if (!facts.tool_version.empty()) title += " " + clean(facts.tool_version);
  out += "### " + md_text(title) + " doctor report\n\n";
  out += "**" + counts_text(counts) + "**";
  if (facts.rooted) out += " · root " + code_span(r(facts.root));
  out += "\n\n";
  if (redact != nullptr) out += "_" + md_text(Redactor::notice()) + "_\n\n";

  out += "| layer | summary |\n| --- | --- |\n";
  const std::pair<const char*, std::string> rows[] = {
      {"Host", host_summary(facts.host)},
      {"libc", libc_summary(facts.host)},
      {"CPU", cpu_summary(facts.host)},
      {"Driver", driver_summary(facts.driver)},
      {"GPUs", gpu_summary(facts)},
      {"CUDA toolkits", toolkit_summary(facts.toolkits)},
      {"cuDNN", cudnn_summary(facts.cudnn)},
      {"Python", python_summary(facts.python)},
      {"CUDA available", cuda_available_summary(facts.python)},
      {"Environment", env_summary(facts.env)},
      {"System", system_summary(facts)},
  };
  for (const auto& [layer, summary] : rows) {
    out += std::string("| ") + layer + " | " + md_text(r(summary)) + " |\n";
  }
  if (facts.windows) out += "| Windows | " + md_text(r(windows_summary(*facts.windows))) + " |\n";

  out += "\n#### Findings\n\n";
  if (findings.empty()) out += "None.\n";
  for (const Finding& f : sorted_findings(findings)) {
    out += std::string("- **") + severity_name(f.severity) + "** " + code_span(f.id);
    if (!trim(f.title).empty()) out += " — " + md_text(r(f.title));
    if (!f.confirmed) out += " _(unconfirmed KB row)_";
    out += "\n";
    for (const Evidence& e : f.evidence) {
      out += "  - evidence: " + md_text(r(e.fact));
      if (!trim(e.source).empty()) out += " (" + code_span(r(e.source)) + ")";
      out += "\n";
    }
    for (const FixStep& s : f.fix) {
      out += "  - fix: " + md_text(r(s.text));
      std::vector<std::string> cmds;
      for (const auto& l : split_lines(s.command)) {
        if (!trim(l).empty()) cmds.push_back(code_span(r(l)));
      }
      if (!cmds.empty()) out += ": " + join(cmds, "; ");
      out += "\n";
    }
  }

  std::string full = render_facts_text(facts, ReportOptions{.color = false, .verbose = true});
  if (redact != nullptr) full = redact->columns(full);
  std::string fence(std::max<size_t>(3, longest_backtick_run(full) + 1), '`');
  out += "\n<details>\n<summary>Full facts</summary>\n\n";
  out += fence + "text\n" + full + fence + "\n\n</details>\n";
  return out;
}

}  // namespace dlenv
