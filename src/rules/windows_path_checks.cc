// Windows PATH and CUDA_PATH: the toolkit each selects, a PATH the shell has not reloaded, and
// install paths with characters that break tools.
#include <algorithm>
#include <set>

#include "rules/checks.h"
#include "rules/loader_coverage.h"
#include "rules/python_common.h"
#include "rules/windows_common.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using namespace windows_common;

const ToolkitFacts* toolkit_at(const Facts& f, std::string_view root) {
  for (const auto& t : f.toolkits) {
    if (to_lower(t.root) == to_lower(root)) return &t;
  }
  return nullptr;
}

void toolkit_order(const Ctx& c, Findings& out) {
  const WindowsFacts* w = win(c);
  if (!w) return;
  std::vector<const WinPathEntry*> bins;
  std::set<std::string> roots;
  for (const auto& p : w->path) {
    if (p.toolkit_root.empty()) continue;
    if (roots.insert(to_lower(p.toolkit_root)).second) bins.push_back(&p);
  }
  if (bins.size() < 2) return;
  const ToolkitFacts* named = nullptr;
  for (const auto& t : c.f.toolkits) {
    if (t.active_cuda_home) named = &t;
  }
  if (!named || to_lower(bins.front()->toolkit_root) == to_lower(named->root)) return;
  const ToolkitFacts* first = toolkit_at(c.f, bins.front()->toolkit_root);
  auto ver = [](const ToolkitFacts* t) {
    return t && t->version ? t->version->str() : std::string("?");
  };
  Finding x = make_finding(
      FindingId::win_cuda_path_confusion, Severity::warning,
      "PATH finds CUDA " + ver(first) + " first, but CUDA_PATH names CUDA " + ver(named));
  for (size_t i = 0; i < bins.size(); ++i) {
    x.evidence.push_back(win_ev("PATH #" + std::to_string(i + 1) + ": " + bins[i]->entry +
                                    " (CUDA " + ver(toolkit_at(c.f, bins[i]->toolkit_root)) + ")",
                                "PATH"));
  }
  x.evidence.push_back(win_ev("CUDA_PATH=" + w->cuda_path_vars.at("CUDA_PATH"), "CUDA_PATH"));
  for (const auto& r : w->resolved) {
    if (r.paths.size() < 2) continue;
    if (r.name != "nvcc.exe" && !starts_with(r.name, "cudart64_") &&
        !starts_with(r.name, "cublas64_")) {
      continue;
    }
    x.evidence.push_back(win_ev(r.name + " resolves to " + winpath(r.paths.front()) + " (" +
                                    std::to_string(r.paths.size() - 1) + " more later on PATH)",
                                r.paths.front()));
  }
  x.fix.push_back(ps("move " + winpath(path_join(named->root, "bin")) +
                     " before the other CUDA folders in PATH (System Properties > Environment "
                     "Variables), or point CUDA_PATH at " +
                     winpath(bins.front()->toolkit_root) + "; then open a new terminal"));
  // The exact edit for the current terminal: this PATH with CUDA_PATH's toolkit folders
  // moved to where the first CUDA folder stands, everything else in its order.
  std::vector<std::string> moved;
  std::vector<std::string> rest;
  size_t first_cuda = w->path.size();
  for (size_t i = 0; i < w->path.size(); ++i) {
    const auto& p = w->path[i];
    if (!p.toolkit_root.empty() && first_cuda == w->path.size()) first_cuda = rest.size();
    if (!p.toolkit_root.empty() && to_lower(p.toolkit_root) == to_lower(named->root)) {
      moved.push_back(p.entry);
    } else {
      rest.push_back(p.entry);
    }
  }
  if (!moved.empty() && first_cuda <= rest.size()) {
    rest.insert(rest.begin() + static_cast<ptrdiff_t>(first_cuda), moved.begin(), moved.end());
    const std::string path = join(rest, ";");
    x.fix.push_back({"or, for this cmd.exe window only: the same PATH with " + join(moved, ";") +
                         " first among the CUDA folders",
                     "set \"PATH=" + path + "\"", "cmd"});
    std::string quoted = path;
    for (size_t q = 0; (q = quoted.find('\'', q)) != std::string::npos; q += 2) {
      quoted.insert(q, "'");
    }
    x.fix.push_back(
        {"or, for this PowerShell window only", "$env:Path = '" + quoted + "'", "powershell"});
  }
  out.push_back(std::move(x));
}

bool unusual(std::string_view p) {
  for (unsigned char ch : p) {
    if (ch == '[' || ch == ']' || ch >= 0x80) return true;
  }
  return false;
}

}  // namespace

namespace checks {

using namespace windows_common;

// A13 (win-cuda-path-confusion): CUDA_PATH unset or naming no toolkit, its bin folder off
// PATH, or -- when it is on PATH -- another toolkit's bin folder found first.
void win_cuda_path(const Ctx& c, Findings& out) {
  const WindowsFacts* w = win(c);
  if (!w || c.f.toolkits.empty()) return;
  auto it = w->cuda_path_vars.find("CUDA_PATH");
  const ToolkitFacts* named = nullptr;
  for (const auto& t : c.f.toolkits) {
    if (t.active_cuda_home) named = &t;
  }
  Finding x = make_finding(FindingId::win_cuda_path_confusion, Severity::warning, "");
  if (it == w->cuda_path_vars.end()) {
    x.title = "CUDA_PATH is not set although CUDA toolkits are installed";
  } else if (!named) {
    x.title = "CUDA_PATH names no CUDA toolkit (" + it->second + ")";
  } else {
    // CUDA_PATH's toolkit must be reachable through PATH too.
    bool on_path = false;
    for (const auto& p : w->path) on_path |= to_lower(p.toolkit_root) == to_lower(named->root);
    if (on_path) return toolkit_order(c, out);
    x.title = "CUDA_PATH names " + winpath(named->root) + " but its bin folder is not on PATH";
  }
  for (const auto& [k, v] : w->cuda_path_vars) x.evidence.push_back(win_ev(k + "=" + v, k));
  for (const auto& t : c.f.toolkits) {
    x.evidence.push_back(win_ev("toolkit " + winpath(t.root) + " (CUDA " +
                                    (t.version ? t.version->str() : std::string("?")) + ")",
                                t.root));
  }
  const ToolkitFacts* target = named ? named : &c.f.toolkits.front();
  x.fix.push_back(
      ps("point CUDA_PATH at the toolkit your framework needs (the newest is shown) "
         "and put its bin folder on PATH; then open a new terminal",
         "[Environment]::SetEnvironmentVariable('CUDA_PATH', '" + winpath(target->root) +
             "', 'User')\n" + add_to_user_path(path_join(target->root, "bin"))));
  out.push_back(std::move(x));
}

void win_path_not_reloaded(const Ctx& c, Findings& out) {
  const WindowsFacts* w = win(c);
  if (!w || w->path_not_in_process.empty()) return;
  Finding x =
      make_finding(FindingId::win_path_not_reloaded, Severity::warning,
                   "PATH was changed in the registry but this shell still has the old PATH");
  for (const auto& p : w->path_not_in_process) {
    x.evidence.push_back(win_ev(p + " is in the registry's Path, not in this process's PATH",
                                w->user_path ? w->user_path.source : w->machine_path.source));
  }
  x.evidence.push_back(win_ev("this process's PATH", c.f.env.source));
  x.fix.push_back(
      ps("close and reopen the terminal and the IDE (VS Code, PyCharm, Jupyter) so "
         "they read the new PATH; programs started from Explorer see it after "
         "signing out and in"));
  out.push_back(std::move(x));
}

void win_special_chars(const Ctx& c, Findings& out) {
  const WindowsFacts* w = win(c);
  if (!w) return;
  std::vector<Evidence> hits;
  std::set<std::string> seen;
  auto check = [&](const std::string& p, const std::string& what) {
    if (!unusual(p) || !seen.insert(to_lower(p)).second) return;
    hits.push_back(win_ev(what + ": " + winpath(p), p));
  };
  for (const auto& e : c.f.python) check(e.prefix, "Python environment");
  for (const auto& t : c.f.toolkits) check(t.root, "CUDA toolkit");
  for (const auto& k : c.f.cudnn) check(k.dir, "cuDNN");
  for (const auto& p : w->path) {
    if (!p.cuda_files.empty()) check(p.logical, "PATH folder with CUDA DLLs");
  }
  if (hits.empty()) return;
  Finding x = make_finding(FindingId::win_install_path_special_chars, Severity::warning,
                           "CUDA, cuDNN or Python is installed under a path with [ ] or non-ASCII "
                           "characters");
  for (auto& h : hits) x.evidence.push_back(std::move(h));
  x.fix.push_back(
      ps("move the installation (or recreate the environment) under a plain ASCII "
         "path without brackets, e.g. C:\\envs\\name"));
  x.confirmed = false;  // the catalog rates this cause lower confidence
  out.push_back(std::move(x));
}

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check win_cuda_path_entry{"win_cuda_path",
                                       "CUDA_PATH and the toolkits PATH selects",
                                       win_cuda_path,
                                       {FindingId::win_cuda_path_confusion},
                                       fact_area::toolkits | fact_area::windows};
extern const Check win_path_not_reloaded_entry{"win_path_not_reloaded",
                                               "a PATH the shell has not reloaded",
                                               win_path_not_reloaded,
                                               {FindingId::win_path_not_reloaded},
                                               fact_area::env | fact_area::windows};
extern const Check win_special_chars_entry{
    "win_special_chars",
    "install paths with special characters",
    win_special_chars,
    {FindingId::win_install_path_special_chars},
    fact_area::cudnn | fact_area::python | fact_area::toolkits | fact_area::windows};

}  // namespace checks
}  // namespace dlenv
