// Text and JSON for `dlenv cudnn install / uninstall / list`, and the list itself.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "actions/cudnn_install.h"
#include "probe/loader_model.h"
#include "probe/windows_probes.h"
#include "util/safe_text.h"
#include "util/strings.h"

namespace dlenv {
namespace {
using nlohmann::json;
}  // namespace

std::string render_install_plan_text(const CudnnInstallPlan& p, Os os) {
  std::string o;
  const auto& d = p.dist;
  o += fmt::format("cuDNN {} ({}, CUDA {}) from {}\n", d.version ? d.version->str() : "?",
                   d.platform ? *d.platform : "?",
                   d.cuda_major ? std::to_string(*d.cuda_major) : "?", d.source);
  if (!p.toolkit.empty()) {
    o += fmt::format("into toolkit {} (CUDA {}; {})\n", display_path(p.toolkit, os),
                     p.toolkit_version ? p.toolkit_version->str() : "unknown", p.toolkit_reason);
    if (!p.previous_cudnn.empty()) o += "  cuDNN there now: " + p.previous_cudnn + "\n";
  }
  if (!p.steps.empty()) {
    size_t replaced = 0;
    for (const auto& s : p.steps) replaced += s.replaces;
    o += fmt::format(
        "plan: {} files ({} new, {} replaced; each replaced file is backed up to {})\n",
        p.steps.size(), p.steps.size() - replaced, replaced, display_path(p.backup_dir, os));
    for (const auto& s : p.steps) {
      if (s.replaces) {
        o += fmt::format("  replace {}  [was: {}; now: {}]\n", display_path(s.dest, os), s.old_what,
                         s.new_what);
      } else {
        o += fmt::format("  add     {}  [{}]\n", display_path(s.dest, os), s.new_what);
      }
    }
    for (const auto& dir : p.dirs_to_create) o += "  mkdir   " + display_path(dir, os) + "\n";
    o += "  write   " + display_path(p.manifest_path, os) + " (for `dlenv cudnn uninstall " +
         p.version + "`)\n";
  }
  for (const auto& u : d.unexpected) o += "  skip    " + u + " (not a cuDNN file)\n";
  for (const auto& w : p.warnings) o += "warning: " + w + "\n";
  for (const auto& b : p.blockers) o += "cannot install: " + b + "\n";
  return o;
}

std::string render_install_result_text(const CudnnInstallResult& r) {
  std::string o;
  for (const auto& v : r.verified) o += "verified: " + v + "\n";
  if (r.installed) {
    o += "installed.\n";
  } else {
    o += "FAILED: " + r.failure + "\n";
    if (r.rollback_problems.empty()) {
      o += "every change was undone: the toolkit is exactly as before.\n";
    } else {
      o += "the undo could not complete these steps (fix them by hand):\n";
      for (const auto& p : r.rollback_problems) o += "  " + p + "\n";
    }
  }
  for (const auto& n : r.notes) o += "note: " + n + "\n";
  return o;
}

std::string render_install_json(const CudnnInstallPlan& p, const CudnnInstallResult* r,
                                bool dry_run, Os os) {
  json steps = json::array();
  for (const auto& s : p.steps) {
    steps.push_back({{"source", s.source_path},
                     {"dest", display_path(s.dest, os)},
                     {"type", source_entry_type_name(s.type)},
                     {"action", s.replaces ? "replace" : "add"},
                     {"old", s.replaces ? json(s.old_what) : json(nullptr)},
                     {"new", s.new_what},
                     {"backup", s.replaces ? json(display_path(s.backup, os)) : json(nullptr)}});
  }
  json busy = json::array();
  for (const auto& b : p.busy)
    busy.push_back({{"pid", b.pid}, {"command", b.command}, {"path", b.path}});
  json doc{{"schema", "dlenv.cudnn-install/1"},
           {"dry_run", dry_run},
           {"source", p.dist.source},
           {"version", p.dist.version ? json(p.dist.version->str()) : json(nullptr)},
           {"cuda_major", p.dist.cuda_major ? json(*p.dist.cuda_major) : json(nullptr)},
           {"toolkit", p.toolkit.empty() ? json(nullptr) : json(display_path(p.toolkit, os))},
           {"toolkit_version", p.toolkit_version ? json(p.toolkit_version->str()) : json(nullptr)},
           {"toolkit_reason", p.toolkit_reason},
           {"previous_cudnn", p.previous_cudnn},
           {"steps", steps},
           {"manifest",
            p.manifest_path.empty() ? json(nullptr) : json(display_path(p.manifest_path, os))},
           {"busy", busy},
           {"blockers", p.blockers},
           {"warnings", p.warnings}};
  if (r) {
    doc["result"] = {{"installed", r->installed},
                     {"failure", r->failure},
                     {"rollback_problems", r->rollback_problems},
                     {"verified", r->verified},
                     {"verify_errors", r->verify_errors},
                     {"notes", r->notes}};
  }
  return json_text(doc, 2) + "\n";
}

std::string render_uninstall_text(const CudnnUninstallResult& r) {
  std::string o;
  if (!r.removed) {
    o += "FAILED: " + r.failure + "\n";
    if (!r.toolkit.empty()) {
      o += r.rollback_problems.empty()
               ? "every change was undone: the toolkit is exactly as before.\n"
               : "the undo could not complete: " + join(r.rollback_problems, "; ") + "\n";
    }
    return o;
  }
  o += fmt::format("removed cuDNN {} from {}: {} files removed, {} restored from the backup\n",
                   r.version, r.toolkit, r.removed_files.size(), r.restored.size());
  for (const auto& f : r.restored) o += "  restored " + f + "\n";
  for (const auto& n : r.notes) o += "note: " + n + "\n";
  return o;
}

std::string render_uninstall_plan_text(const CudnnUninstallPlan& p, Os os) {
  if (!p.ok()) return "cannot uninstall: " + p.failure + "\n";
  std::string o = fmt::format("uninstall cuDNN {} from {} (manifest {}):\n", p.version,
                              display_path(p.toolkit, os), display_path(p.manifest, os));
  for (auto it = p.items.rbegin(); it != p.items.rend(); ++it) {
    const std::string f = display_path(it->path, os);
    if (!it->backup.empty()) {
      o += "  restore " + f + "  [the file it replaced, from " + display_path(it->backup, os) +
           "]\n";
    } else if (it->present) {
      o += "  remove  " + f + "\n";
    }
  }
  for (const auto& d : p.created_dirs) o += "  remove  " + display_path(d, os) + "/ (if empty)\n";
  return o;
}

std::string render_uninstall_plan_json(const CudnnUninstallPlan& p) {
  json items = json::array();
  for (const auto& it : p.items) {
    items.push_back({{"path", it.path},
                     {"present", it.present},
                     {"restore_from", it.backup.empty() ? json(nullptr) : json(it.backup)}});
  }
  json doc{{"schema", "dlenv.cudnn-uninstall/1"},
           {"dry_run", true},
           {"removed", false},
           {"version", p.version},
           {"toolkit", p.toolkit},
           {"manifest", p.manifest},
           {"failure", p.failure},
           {"files", items},
           {"created_dirs", p.created_dirs}};
  return json_text(doc, 2) + "\n";
}

std::string render_uninstall_json(const CudnnUninstallResult& r) {
  json doc{{"schema", "dlenv.cudnn-uninstall/1"},
           {"removed", r.removed},
           {"version", r.version},
           {"toolkit", r.toolkit},
           {"failure", r.failure},
           {"rollback_problems", r.rollback_problems},
           {"removed_files", r.removed_files},
           {"restored", r.restored},
           {"notes", r.notes}};
  return json_text(doc, 2) + "\n";
}

namespace {

std::string complete_text(const CudnnCopy& c) {
  return c.sublibraries_missing.empty()
             ? "complete"
             : fmt::format("missing {} of {} libraries: {}", c.sublibraries_missing.size(),
                           c.sublibraries_missing.size() + c.sublibraries_present.size(),
                           join(c.sublibraries_missing, ", "));
}

std::string dlenv_manifest(const ProbeContext& ctx, const std::string& toolkit_root) {
  std::string out;
  if (toolkit_root.empty()) return out;
  if (auto es = ctx.fs.list_dir(path_join(toolkit_root, ".dlenv"))) {
    for (const auto& f : *es) {
      if (starts_with(f.name, "cudnn-") && ends_with(f.name, ".json")) {
        out = path_join(path_join(toolkit_root, ".dlenv"), f.name);
      }
    }
  }
  return out;
}

// Windows: the copies probe_windows_cudnn finds (toolkit bin dirs, the cuDNN 9
// installer layout, CUDNN_HOME/CUDNN_PATH, PATH dirs), plus the pip wheels'
// (nvidia\cudnn\bin, torch\lib), read by the same probe as pseudo-toolkits.
std::vector<CudnnListEntry> list_cudnn_windows(const ProbeContext& ctx) {
  auto toolkits = probe_windows_toolkits(ctx);
  std::vector<CudnnCopy> copies = probe_windows_cudnn(ctx, toolkits);
  std::vector<ToolkitFacts> wheels;
  std::map<std::string, std::string> wheel_site;  // pseudo-toolkit root -> site-packages
  for (const auto& site_as_found : python_site_packages(ctx)) {
    // PATH-derived sites keep the Windows spelling ("C:\\Python311\\Lib\\site-packages").
    const std::string site = win_logical(ctx, site_as_found);
    for (const char* sub : {"nvidia/cudnn", "torch"}) {
      ToolkitFacts w;
      w.root = path_join(site, sub);
      w.lib_dirs = {path_join(w.root, std::string(sub) == "torch" ? "lib" : "bin")};
      if (!win_find(ctx.fs, w.lib_dirs[0])) continue;
      wheel_site[w.root] = site;
      wheels.push_back(std::move(w));
    }
  }
  if (!wheels.empty()) {
    for (auto& c : probe_windows_cudnn(ctx, wheels)) {
      auto it = wheel_site.find(c.toolkit_root);
      if (it == wheel_site.end()) continue;  // a PATH/CUDNN_HOME copy, listed already
      c.python_site = it->second;
      c.found_via = {ends_with(c.toolkit_root, "torch") ? "torch wheel (torch\\lib)"
                                                        : "pip wheel nvidia-cudnn"};
      c.toolkit_root.clear();
      bool dup = false;
      for (auto& o : copies) {
        if (o.library == c.library) {
          o.python_site = c.python_site;
          dup = true;
        }
      }
      if (!dup) copies.push_back(std::move(c));
    }
  }
  // LoadLibrary("cudnn64_N.dll") from a program without its own copy: the first PATH
  // directory that holds it (after the application's and the system directories).
  std::map<int, std::string> first_on_path;
  if (auto p = win_env(ctx, "PATH")) {
    for (const auto& entry : win_path_entries(*p)) {
      std::string dir = to_lower(win_logical(ctx, entry));
      for (const auto& c : copies) {
        if (!first_on_path.count(c.major) && to_lower(c.dir) == dir) first_on_path[c.major] = dir;
      }
    }
  }
  std::vector<CudnnListEntry> out;
  for (auto& c : copies) {
    CudnnListEntry e;
    e.copy = c;
    e.os = Os::windows;
    e.complete = complete_text(c);
    auto fp = first_on_path.find(c.major);
    if (fp != first_on_path.end() && fp->second == to_lower(c.dir)) {
      e.loaded_by.push_back(fmt::format(
          "any program calling LoadLibrary(\"cudnn64_{}.dll\") without a copy of its own (the "
          "first PATH directory holding it)",
          c.major));
    } else if (std::find(c.found_via.begin(), c.found_via.end(), "PATH") != c.found_via.end()) {
      e.loaded_by.push_back("nobody by PATH: an earlier PATH directory holds another cudnn64_" +
                            std::to_string(c.major) + ".dll");
    }
    if (!c.python_site.empty()) {
      e.loaded_by.push_back("Python frameworks in " + display_path(c.python_site, Os::windows) +
                            " (torch/TensorFlow add their DLL folders with os.add_dll_directory)");
    }
    if (!c.toolkit_root.empty()) {
      e.loaded_by.push_back("programs whose PATH holds " + display_path(c.dir, Os::windows) +
                            " (toolkit " + display_path(c.toolkit_root, Os::windows) + ")");
      e.installed_by_dlenv = dlenv_manifest(ctx, c.toolkit_root);
    }
    if (e.loaded_by.empty()) e.loaded_by.push_back("only programs that name this directory");
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

std::vector<CudnnListEntry> list_cudnn(const ProbeContext& ctx) {
  if (ctx.os == Os::windows) return list_cudnn_windows(ctx);
  LoaderConfig loader = read_loader_config(ctx);
  auto toolkits = probe_toolkits(ctx, loader);
  ProbeOptions po;
  po.load_cudnn = false;
  auto copies = probe_cudnn(ctx, loader, toolkits, po);
  // What a program's dlopen("libcudnn.so.N") picks (no RPATH/RUNPATH of its own).
  std::map<int, std::pair<std::string, std::string>> dlopen_pick;  // major -> real path, rule
  LinuxLoaderSettings settings;
  settings.cache = loader.cache;
  settings.conf_dirs = loader.conf_dirs;
  settings.ld_library_path = loader.ld_library_path;
  settings.companions = false;
  settings.symbols = false;
  std::vector<CudnnListEntry> out;
  for (auto& c : copies) {
    if (!dlopen_pick.count(c.major)) {
      auto t = model_linux_load(ctx.fs, ctx.kb, "libcudnn.so." + std::to_string(c.major), settings);
      if (t && !t->objects.empty() && t->objects[0].path) {
        const auto& o = t->objects[0];
        dlopen_pick[c.major] = {ctx.fs.real_path(*o.path).value_or(*o.path),
                                std::string(search_rule_name(o.rule))};
      } else {
        dlopen_pick[c.major] = {"", ""};
      }
    }
    CudnnListEntry e;
    e.copy = c;
    e.complete = complete_text(c);
    const std::string real = ctx.fs.real_path(c.library).value_or(c.library);
    const auto& pick = dlopen_pick[c.major];
    if (!pick.first.empty() && pick.first == real) {
      e.loaded_by.push_back(
          fmt::format("any program calling dlopen(\"libcudnn.so.{}\") ({})", c.major, pick.second));
    }
    if (!c.python_site.empty()) {
      e.loaded_by.push_back("Python frameworks in " + c.python_site +
                            " (torch/TensorFlow wheels find nvidia/cudnn/lib through their RPATH)");
    }
    if (!c.toolkit_root.empty()) {
      e.loaded_by.push_back("programs built with -L" + c.dir + " or run with LD_LIBRARY_PATH=" +
                            c.dir + " (toolkit " + c.toolkit_root + ")");
      e.installed_by_dlenv = dlenv_manifest(ctx, c.toolkit_root);
    }
    for (const auto& via : c.found_via) {
      if (via == "LD_LIBRARY_PATH")
        e.loaded_by.push_back("every program started with this LD_LIBRARY_PATH");
    }
    if (e.loaded_by.empty()) e.loaded_by.push_back("only programs that name this directory");
    out.push_back(std::move(e));
  }
  return out;
}

std::string recover_command(const std::string& toolkit, Os os) {
  const std::string shown = display_path(toolkit, os);
  const bool plain = std::all_of(shown.begin(), shown.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("/._-:\\", c);
  });
  return "dlenv cudnn recover --toolkit " + (plain ? shown : "\"" + shown + "\"");
}

std::string describe_pending(const RecoveryResult& p) {
  return fmt::format("{}{}{}", p.kind.empty() ? "a transaction" : p.kind,
                     p.what.empty() ? "" : " of " + p.what,
                     p.pid ? fmt::format(" by process {}", p.pid) : "");
}

namespace {

std::string recovery_plan_text(const RecoveryResult& p) {
  if (!p.problems.empty()) return "its journal cannot be used: " + join(p.problems, "; ");
  switch (p.outcome) {
    case RecoveryResult::Outcome::finished: return "it had committed; recovery finishes it";
    case RecoveryResult::Outcome::rolled_back:
      return fmt::format("it had not committed; recovery undoes its {} step(s)", p.steps);
    default: return "it had not started; recovery removes its journal";
  }
}

}  // namespace

std::string render_cudnn_list_text(const std::vector<CudnnListEntry>& list,
                                   const std::vector<InterruptedTransaction>& interrupted, Os os) {
  std::string o;
  for (const auto& t : interrupted) {
    o += fmt::format("interrupted: {} in {} ({}). Fix: {}\n", describe_pending(t.pending),
                     display_path(t.toolkit, os), recovery_plan_text(t.pending),
                     recover_command(t.toolkit, os));
  }
  if (list.empty()) return o + "no cuDNN found.\n";
  for (const auto& e : list) {
    const auto& c = e.copy;
    std::string ver = c.header_version    ? c.header_version->str()
                      : c.library_version ? c.library_version->str()
                                          : std::to_string(c.major) + ".x (version unknown)";
    o += fmt::format("{}  cuDNN {}  CUDA {}  {}\n", display_path(c.library, e.os), ver,
                     c.cuda_major ? std::to_string(*c.cuda_major) : "?", e.complete);
    if (c.header_version && c.library_version &&
        c.header_version->truncated(3) != c.library_version->truncated(3)) {
      o += fmt::format("  header {} but library {}\n", c.header_version->str(),
                       c.library_version->str());
    }
    o += "  found via: " + join(c.found_via, ", ") + "\n";
    for (const auto& l : e.loaded_by) o += "  loaded by: " + l + "\n";
    if (!e.installed_by_dlenv.empty())
      o += "  installed by dlenv: " + display_path(e.installed_by_dlenv, e.os) + "\n";
  }
  return o;
}

std::string render_cudnn_list_json(const std::vector<CudnnListEntry>& list,
                                   const std::vector<InterruptedTransaction>& interrupted) {
  json pending = json::array();
  for (const auto& t : interrupted) {
    pending.push_back({{"toolkit", t.toolkit},
                       {"journal", t.journal},
                       {"kind", t.pending.kind},
                       {"what", t.pending.what},
                       {"pid", t.pending.pid},
                       {"recovery", recovery_outcome_name(t.pending.outcome)},
                       {"problems", t.pending.problems},
                       {"fix", recover_command(t.toolkit, Os::linux)}});
  }
  json arr = json::array();
  for (const auto& e : list) {
    const auto& c = e.copy;
    arr.push_back(
        {{"library", c.library},
         {"dir", c.dir},
         {"major", c.major},
         {"header_version", c.header_version ? json(c.header_version->str()) : json(nullptr)},
         {"library_version", c.library_version ? json(c.library_version->str()) : json(nullptr)},
         {"cuda_major", c.cuda_major ? json(*c.cuda_major) : json(nullptr)},
         {"cuda_major_source", c.cuda_major ? c.cuda_major.source : c.cuda_major.reason},
         {"complete", c.sublibraries_missing.empty()},
         {"missing", c.sublibraries_missing},
         {"found_via", c.found_via},
         {"loaded_by", e.loaded_by},
         {"installed_by_dlenv",
          e.installed_by_dlenv.empty() ? json(nullptr) : json(e.installed_by_dlenv)}});
  }
  json doc{{"schema", "dlenv.cudnn-list/1"}, {"cudnn", arr}, {"interrupted", pending}};
  return json_text(doc, 2) + "\n";
}

std::string render_recover_text(const std::vector<CudnnRecoverEntry>& entries, Os os) {
  if (entries.empty()) return "no CUDA toolkit found: nothing to recover.\n";
  std::string o;
  for (const auto& e : entries) {
    const std::string tk = display_path(e.toolkit, os);
    if (!e.error.empty()) {
      o += tk + ": " + e.error + "\n";
      continue;
    }
    const RecoveryResult& r = *e.result;
    switch (r.outcome) {
      case RecoveryResult::Outcome::nothing: o += tk + ": no interrupted transaction\n"; break;
      case RecoveryResult::Outcome::discarded:
        o += tk + ": a transaction that had not started was discarded (nothing had changed)\n";
        break;
      case RecoveryResult::Outcome::finished:
        o += fmt::format("{}: finished {} (it had committed)\n", tk, describe_pending(r));
        break;
      case RecoveryResult::Outcome::rolled_back:
        o += fmt::format(
            "{}: rolled back {}: {} of {} step(s) undone now; the toolkit is as it "
            "was before\n",
            tk, describe_pending(r), r.undone, r.steps);
        break;
    }
    for (const auto& p : r.problems) o += "  problem: " + p + "\n";
  }
  return o;
}

std::string render_recover_json(const std::vector<CudnnRecoverEntry>& entries) {
  json arr = json::array();
  for (const auto& e : entries) {
    json j{{"toolkit", e.toolkit}};
    if (!e.error.empty()) {
      j["error"] = e.error;
    } else {
      const RecoveryResult& r = *e.result;
      j["outcome"] = recovery_outcome_name(r.outcome);
      j["kind"] = r.kind;
      j["what"] = r.what;
      j["pid"] = r.pid;
      j["steps"] = r.steps;
      j["undone"] = r.undone;
      j["problems"] = r.problems;
    }
    arr.push_back(std::move(j));
  }
  json doc{{"schema", "dlenv.cudnn-recover/1"}, {"toolkits", arr}};
  return json_text(doc, 2) + "\n";
}

}  // namespace dlenv
