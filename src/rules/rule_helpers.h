// Small helpers shared by the check files of this layer: building findings, evidence and
// POSIX-shell fix steps, and a few questions about the facts that several rules ask. Internal to
// the rules layer.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "rules/checks.h"
#include "util/strings.h"

namespace dlenv::rule_helpers {

using Findings = std::vector<Finding>;
using Ctx = RuleContext;

inline Evidence ev(std::string fact, std::string source) {
  return {std::move(fact), std::move(source)};
}

// A fix step; a command runs in a POSIX shell.
inline FixStep step(std::string text, std::string command = {}) {
  std::string shell = command.empty() ? "" : "sh";
  return {std::move(text), std::move(command), std::move(shell)};
}

// A word for a POSIX shell command: single-quoted unless it is plain (letters, digits and
// /._+-=:@,), so that any path (spaces, $, quotes, escape bytes) stays one literal word.
inline std::string shell_quote(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of(
                                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789/._+-=:@,") == std::string::npos;
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A directory or file as a finding's subject (Finding::subject): normalised, without a
// trailing '/', so that two checks naming one directory name the same subject.
inline std::string path_subject(std::string_view path) {
  std::string s = path_normalize(path);
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// A version fact as text: "unknown" when it is not known.
inline std::string vstr(const Fact<Version>& v) {
  return v ? v->str() : "unknown";
}

// A path without trailing '/' (the root stays "/").
inline std::string strip_slash(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// LD_LIBRARY_PATH without the entries naming `dirs`: the exact command that sets it.
inline std::string llp_without(const Facts& f, const std::set<std::string>& dirs) {
  std::vector<std::string> keep;
  for (const auto& p : split(f.loader.ld_library_path, ':', true)) {
    if (!dirs.count(strip_slash(p))) keep.push_back(p);
  }
  if (keep.empty()) return "unset LD_LIBRARY_PATH";
  return "export LD_LIBRARY_PATH='" + join(keep, ":") + "'";
}

// How the loader model found a library: its rule's detail, else the rule.
inline std::string rule_text(const ResolvedLib& l) {
  return l.rule_detail.empty() || l.rule_detail == l.rule ? l.rule : l.rule_detail;
}

// dlenv runs inside a container (Docker, Podman, Kubernetes...).
inline bool in_container(const Facts& f) {
  return f.host.container.ok() && *f.host.container != "none";
}

// An NVIDIA GPU or driver is visible (kernel module, NVML, the PCI bus or a GPU list).
inline bool nvidia_gpu_or_driver(const Facts& f) {
  return f.driver.kernel_module_version.ok() || f.driver.nvml_driver_version.ok() ||
         !f.driver.pci_devices.empty() || !f.gpus.empty();
}

}  // namespace dlenv::rule_helpers
