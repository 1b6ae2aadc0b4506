// Helpers shared by the Windows checks (windows_*_checks.cc, loader_model_checks.cc,
// cudnn_completeness_checks.cc, driver_checks.cc): paths as a Windows user sees them, PowerShell
// fix steps, and a few questions about the Windows facts. Internal to the rules layer.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rules/checks.h"
#include "rules/python_common.h"
#include "util/strings.h"

namespace dlenv::windows_common {

using Findings = std::vector<Finding>;
using Ctx = RuleContext;

// A logical path as the user sees it on Windows: "/Program Files/X" -> "C:\Program Files\X".
inline std::string winpath(std::string_view p) {
  std::string s(p);
  if (!s.empty() && s.front() == '/') s = "C:" + s;
  std::replace(s.begin(), s.end(), '/', '\\');
  return s;
}

// Evidence whose source is a Windows path.
inline Evidence win_ev(std::string fact, std::string source) {
  return {std::move(fact), winpath(source)};
}

// A fix step whose command runs in PowerShell.
inline FixStep ps(std::string text, std::string command = {}) {
  std::string shell = command.empty() ? "" : "powershell";
  return {std::move(text), std::move(command), std::move(shell)};
}

// The Windows facts, when the analysis is for Windows.
inline const WindowsFacts* win(const RuleContext& c) {
  if (c.os != Os::windows || !c.f.windows) return nullptr;
  return &*c.f.windows;
}

// Copies of a DLL the search path finds (in order).
inline std::vector<std::string> on_search_path(const WindowsFacts& w, std::string_view name) {
  const std::string n = to_lower(name);
  for (const auto& r : w.resolved) {
    if (r.name == n) return r.paths;
  }
  return {};
}

// A cuDNN copy's version: its library's, else its header's.
inline std::optional<Version> copy_version(const CudnnCopy& k) {
  if (k.library_version) return *k.library_version;
  if (k.header_version) return *k.header_version;
  return std::nullopt;
}

// A cuDNN library by its file name (cudnn*.dll, libcudnn*).
inline bool is_cudnn(std::string_view name) {
  return starts_with(to_lower(path_basename(name)), "cudnn") ||
         starts_with(path_basename(name), "libcudnn");
}

// PowerShell that appends `dir` to the user's PATH for new shells.
inline std::string add_to_user_path(const std::string& dir) {
  return "[Environment]::SetEnvironmentVariable('Path', "
         "[Environment]::GetEnvironmentVariable('Path', 'User') + ';" +
         winpath(dir) + "', 'User')";
}

inline std::string win_env_name(const PythonEnv& e) {
  return winpath(e.interpreter ? *e.interpreter : e.prefix);
}

inline std::string win_pip(const PythonEnv& e) {
  std::string p = win_env_name(e);
  if (p.find(' ') != std::string::npos) p = "& \"" + p + "\"";
  return p + " -m pip";
}

inline Evidence win_pkg_ev(const PythonEnv& e, const FrameworkFacts& f) {
  if (const auto* p = pyrules::pkg(e, f.package)) {
    return win_ev(p->name + " " + p->version + " installed in " + winpath(p->location), p->source);
  }
  return win_ev(f.package + " " + f.version + " installed", win_env_name(e));
}

inline bool starts_with_ci(std::string_view s, std::string_view prefix) {
  return starts_with(to_lower(s), to_lower(prefix));
}

// Copies of a DLL in one Python environment (torch\lib, nvidia\*\bin, ...).
inline std::vector<std::string> in_env(const WindowsFacts& w, const PythonEnv& e,
                                       std::string_view name) {
  std::vector<std::string> out;
  auto it = w.python_dlls.find(to_lower(name));
  if (it == w.python_dlls.end()) return out;
  for (const auto& p : it->second) {
    if (starts_with_ci(p, e.prefix + "/")) out.push_back(p);
  }
  return out;
}

// What a framework in `e` finds by name: the folder of python.exe first, then the search path.
inline std::vector<std::string> findable(const Ctx& c, const WindowsFacts& w, const PythonEnv& e,
                                         std::string_view name) {
  std::vector<std::string> out;
  (void)c;
  auto p = in_env(w, e, name);
  for (const auto& x : p) {
    if (to_lower(path_dirname(x)) == to_lower(e.prefix)) out.push_back(x);
  }
  for (const auto& x : on_search_path(w, name)) out.push_back(x);
  return out;
}

}  // namespace dlenv::windows_common
