// `dlenv which` (see which_cmd.h).
// Linux: -- CMD runs the command and reads its /proc/PID/maps every few
// milliseconds until it exits (no ptrace, no LD_DEBUG, no LD_AUDIT: the command
// runs unchanged); the union of every file seen mapped is reported. A library
// mapped and unmapped between two reads, or mapped in the last milliseconds
// before exit, can be missed. --pid and --holding read /proc/PID/maps.
// Windows (platform/process_modules.h): --pid and --holding take toolhelp module
// snapshots (the loader's own list, no polling); -- CMD runs the command under
// the debug API (DEBUG_PROCESS, so the processes a launcher such as a venv's
// python.exe starts are traced too) and records every LOAD_DLL / UNLOAD_DLL
// event, so nothing is missed and each DLL is marked as still loaded at exit or
// unloaded before. The debug API rather than polling snapshots: a snapshot can
// miss a DLL loaded and freed in between and fails while the loader changes the
// list (ERROR_BAD_LENGTH); the events are exact and cost nothing between them.
#include "cli/which_cmd.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "cli/cli.h"
#include "platform/filesystem.h"
#include "platform/process_modules.h"
#include "platform/process_watch.h"
#include "probe/process_maps.h"
#include "util/safe_text.h"
#include "util/strings.h"

#if !defined(_WIN32)
#include <unistd.h>
#endif

namespace dlenv {

namespace {

bool running_as_root() {
#if defined(_WIN32)
  return false;
#else
  return ::geteuid() == 0;
#endif
}

nlohmann::json libs_json(const std::vector<MappedLibrary>& libs) {
  auto a = nlohmann::json::array();
  for (const auto& l : libs) {
    a.push_back(
        {{"library", l.library},
         {"name", l.name},
         {"path", l.path},
         {"soname", l.soname.empty() ? nlohmann::json(nullptr) : nlohmann::json(l.soname)},
         {"version", l.version.empty() ? nlohmann::json(nullptr) : nlohmann::json(l.version)},
         {"version_source", l.version_source},
         {"origin", l.origin},
         {"origin_detail", l.origin_detail},
         {"deleted", l.deleted},
         {"loaded_at_exit",
          l.loaded_at_exit ? nlohmann::json(*l.loaded_at_exit) : nlohmann::json(nullptr)}});
  }
  return a;
}

// The directory of a path with '/' or '\\' separators.
std::string dir_of(std::string_view path) {
  const size_t at = path.find_last_of("/\\");
  return at == std::string_view::npos ? std::string(".") : std::string(path.substr(0, at));
}

// One library family loaded from two places with different versions.
std::vector<std::string> mixed_warnings(const std::vector<MappedLibrary>& libs) {
  std::map<std::string, std::map<std::string, std::string>> by;  // family -> dir -> version
  for (const auto& l : libs) {
    std::string fam = l.library == "cublasLt" ? "cublas" : l.library;
    if (fam.find("driver") != std::string::npos) fam = "driver";
    by[fam][dir_of(l.path)] = l.version;
  }
  std::vector<std::string> out;
  for (const auto& [fam, dirs] : by) {
    if (dirs.size() < 2) continue;
    std::set<std::string> versions;
    std::vector<std::string> parts;
    for (const auto& [d, v] : dirs) {
      versions.insert(v);
      parts.push_back(fmt::format("{} ({})", d, v.empty() ? "version unknown" : v));
    }
    if (versions.size() < 2 && fam != "cudnn") continue;
    out.push_back(fmt::format("{} libraries are mapped from {} directories: {}", fam, dirs.size(),
                              join(parts, ", ")));
  }
  return out;
}

void print_libs(std::ostream& out, const std::vector<MappedLibrary>& libs) {
  size_t w = 8;
  for (const auto& l : libs) w = std::max(w, l.library.size());
  for (const auto& l : libs) {
    out << fmt::format("  {:<{}}  {:<14}  {}{}\n", l.library, w,
                       l.version.empty() ? "?" : l.version,
                       l.origin + (l.origin_detail.empty() ? "" : ": " + l.origin_detail),
                       l.deleted ? "  (file deleted since it was mapped)"
                       : l.loaded_at_exit && !*l.loaded_at_exit ? "  (unloaded before exit)"
                                                                : "");
    out << fmt::format("  {:<{}}  {}{}\n", "", w, l.path,
                       l.version_source.empty() ? "" : "  [version from " + l.version_source + "]");
  }
  for (const auto& m : mixed_warnings(libs)) out << "  warning: " << m << "\n";
}

// `modules`: the list came from the OS's module list (Windows), not from maps.
int render_pid(const WhichOptions& o, const ProcessLibraries& p, bool modules, std::ostream& out) {
  if (o.json) {
    nlohmann::json j{{"schema", "dlenv.which/1"},
                     {"mode", "pid"},
                     {"pid", p.pid},
                     {"command", p.command},
                     {"libraries", libs_json(p.libraries)},
                     {"warnings", mixed_warnings(p.libraries)}};
    out << json_text(j, 2) << "\n";
    return kExitOk;
  }
  out << fmt::format("process {} ({}): {} NVIDIA/CUDA librar{} {}\n", p.pid, p.command,
                     p.libraries.size(), p.libraries.size() == 1 ? "y" : "ies",
                     modules ? "loaded" : "mapped");
  print_libs(out, p.libraries);
  return kExitOk;
}

int which_pid(const WhichOptions& o, const FileSystem& fs, std::ostream& out, std::ostream& err) {
  auto p = read_process_libraries(fs, o.pid);
  if (!p) {
    err << "dlenv which: process " << o.pid << ": " << p.error().message
        << (fs.exists(fmt::format("/proc/{}", o.pid)) ? " (another user's process? run as root)"
                                                      : " (no such process)")
        << "\n";
    return kExitUsage;
  }
  return render_pid(o, *p, false, out);
}

// Windows: the process's toolhelp module snapshot.
int which_pid_modules(const WhichOptions& o, const FileSystem& fs, std::ostream& out,
                      std::ostream& err) {
  auto m = process_modules(o.pid);
  if (!m) {
    err << "dlenv which: " << m.error().message
        << (m.error().code == ErrorCode::access_denied
                ? " (another user's or a protected process? run from an elevated prompt)"
                : "")
        << "\n";
    return kExitUsage;
  }
  ProcessLibraries p;
  p.pid = m->pid;
  p.command = m->image;
  p.libraries = nvidia_modules(fs, m->modules);
  return render_pid(o, p, true, out);
}

int render_holding(const WhichOptions& o, const HoldingScan& scan, bool modules,
                   std::ostream& out) {
  if (o.json) {
    nlohmann::json j{{"schema", "dlenv.which/1"},
                     {"mode", "holding"},
                     {"name", o.holding},
                     {"scanned", scan.scanned}};
    auto hs = nlohmann::json::array();
    for (const auto& h : scan.holders) {
      hs.push_back({{"pid", h.pid}, {"command", h.command}, {"paths", h.paths}});
    }
    j["processes"] = hs;
    auto un = nlohmann::json::array();
    for (const auto& [pid, why] : scan.unreadable) un.push_back({{"pid", pid}, {"reason", why}});
    j["unreadable"] = un;
    out << json_text(j, 2) << "\n";
    return kExitOk;
  }
  if (scan.holders.empty()) {
    out << fmt::format("no process has a file named *{}* {} ({} processes read)\n", o.holding,
                       modules ? "loaded" : "mapped",
                       scan.scanned - static_cast<int>(scan.unreadable.size()));
  }
  for (const auto& h : scan.holders) {
    out << fmt::format("{:>7}  {}\n", h.pid, h.command);
    for (const auto& p : h.paths) out << "         " << p << "\n";
  }
  if (!scan.unreadable.empty()) {
    std::vector<std::string> pids;
    for (size_t i = 0; i < scan.unreadable.size() && i < 8; ++i) {
      pids.push_back(std::to_string(scan.unreadable[i].first));
    }
    out << fmt::format("{} process(es) could not be {} ({}{}): {}; {}\n", scan.unreadable.size(),
                       modules ? "inspected" : "read", join(pids, ", "),
                       scan.unreadable.size() > pids.size() ? ", ..." : "",
                       scan.unreadable[0].second,
                       modules ? "run from an elevated prompt (as administrator) to include them"
                       : running_as_root() ? "even root is refused there when the process is not "
                                             "dumpable or this container lacks CAP_SYS_PTRACE"
                                           : "run as root to include them");
  }
  return kExitOk;
}

// Windows: every process's module snapshot; file names compared case-insensitively.
int which_holding_modules(const WhichOptions& o, std::ostream& out, std::ostream& err) {
  auto all = all_process_modules();
  if (!all) {
    err << "dlenv which: " << all.error().message << "\n";
    return kExitToolFailed;
  }
  HoldingScan scan;
  scan.scanned = all->scanned;
  scan.unreadable = all->inaccessible;
  const std::string want = to_lower(o.holding);
  for (const auto& p : all->processes) {
    HoldingProcess h;
    h.pid = p.pid;
    h.command = p.image;
    for (const auto& m : p.modules) {
      const std::string base = to_lower(m.substr(m.find_last_of("/\\") + 1));
      if (base.find(want) != std::string::npos) h.paths.push_back(m);
    }
    if (!h.paths.empty()) scan.holders.push_back(std::move(h));
  }
  std::sort(scan.holders.begin(), scan.holders.end(),
            [](const auto& a, const auto& b) { return a.pid < b.pid; });
  return render_holding(o, scan, true, out);
}

std::string how_it_ended(const WhichOptions& o, bool timed_out, int term_signal, int exit_code) {
  return timed_out     ? fmt::format("killed after the {} s timeout", o.timeout_s)
         : term_signal ? fmt::format("killed by signal {}", term_signal)
                       : fmt::format("exited with {}", exit_code);
}

int which_command(const WhichOptions& o, const FileSystem& fs, std::ostream& out,
                  std::ostream& err) {
  std::vector<MapsEntry> seen;
  std::set<std::string> seen_paths;
  int reads = 0;
  auto tick = [&](int pid) {
    auto text = fs.read_file(fmt::format("/proc/{}/maps", pid), 64u << 20);
    if (!text) return;
    auto maps = parse_proc_maps(*text, "maps");
    if (!maps) return;
    ++reads;
    for (auto& m : *maps) {
      if (!m.path.empty() && m.path[0] == '/' && seen_paths.insert(m.path).second) {
        seen.push_back(std::move(m));
      }
    }
  };
  auto r = run_and_watch(o.command, std::chrono::milliseconds(std::max(1, o.interval_ms)),
                         std::chrono::seconds(std::max(1, o.timeout_s)), tick);
  if (!r) {
    err << "dlenv which: " << r.error().message << "\n";
    return kExitToolFailed;
  }
  const auto libs = nvidia_libraries(fs, seen);
  const std::string how = how_it_ended(o, r->timed_out, r->term_signal, r->exit_code);
  if (o.json) {
    nlohmann::json j{{"schema", "dlenv.which/1"},
                     {"mode", "command"},
                     {"command", o.command},
                     {"method", "maps polling"},
                     {"exit_code", r->exit_code},
                     {"term_signal", r->term_signal},
                     {"timed_out", r->timed_out},
                     {"wall_ms", r->wall_ms},
                     {"maps_reads", reads},
                     {"load_events", nullptr},
                     {"processes", nullptr},
                     {"libraries", libs_json(libs)},
                     {"warnings", mixed_warnings(libs)}};
    out << json_text(j, 2) << "\n";
    return kExitOk;
  }
  out << fmt::format(
      "{}: {} after {:.0f} ms; its maps read {} times; {} NVIDIA/CUDA librar{} "
      "mapped\n",
      join(o.command, " "), how, r->wall_ms, reads, libs.size(), libs.size() == 1 ? "y" : "ies");
  print_libs(out, libs);
  return kExitOk;
}

// Windows: the command under the debug API, every DLL load and unload recorded.
int which_command_modules(const WhichOptions& o, const FileSystem& fs, std::ostream& out,
                          std::ostream& err) {
  auto r = run_and_trace_modules(o.command, std::chrono::seconds(std::max(1, o.timeout_s)));
  if (!r) {
    err << "dlenv which: " << r.error().message << "\n";
    return kExitToolFailed;
  }
  std::vector<std::string> paths;
  std::map<std::string, bool> at_exit;  // lower-case path -> loaded at exit in some process
  for (const auto& m : r->modules) {
    paths.push_back(m.path);
    at_exit[to_lower(m.path)] |= m.loaded_at_exit;
  }
  auto libs = nvidia_modules(fs, paths);
  for (auto& l : libs) l.loaded_at_exit = at_exit[to_lower(l.path)];
  const std::string how = how_it_ended(o, r->timed_out, 0, r->exit_code);
  if (o.json) {
    nlohmann::json j{{"schema", "dlenv.which/1"},
                     {"mode", "command"},
                     {"command", o.command},
                     {"method", "debug events"},
                     {"exit_code", r->exit_code},
                     {"term_signal", 0},
                     {"timed_out", r->timed_out},
                     {"wall_ms", r->wall_ms},
                     {"maps_reads", nullptr},
                     {"load_events", r->load_events},
                     {"processes", r->processes},
                     {"libraries", libs_json(libs)},
                     {"warnings", mixed_warnings(libs)}};
    out << json_text(j, 2) << "\n";
    return kExitOk;
  }
  out << fmt::format(
      "{}: {} after {:.0f} ms; {} DLL loads traced in {} process{}; {} NVIDIA/CUDA librar{} "
      "loaded\n",
      join(o.command, " "), how, r->wall_ms, r->load_events, r->processes,
      r->processes == 1 ? "" : "es", libs.size(), libs.size() == 1 ? "y" : "ies");
  if (r->unresolved > 0) {
    out << fmt::format("  note: the path of {} loaded DLL(s) could not be found\n", r->unresolved);
  }
  print_libs(out, libs);
  return kExitOk;
}

}  // namespace

int run_which(const WhichOptions& o, std::ostream& out, std::ostream& err) {
  const int modes = (o.pid > 0) + (!o.holding.empty()) + (!o.command.empty());
  if (modes != 1) {
    err << "dlenv which: give exactly one of --pid N, --holding NAME or -- CMD ARGS...\n";
    return kExitUsage;
  }
  std::unique_ptr<FileSystem> fs;
  if (!o.root.empty()) {
    if (!make_real_filesystem()->is_dir(o.root)) {
      err << "dlenv which: --root " << o.root << ": not a directory\n";
      return kExitUsage;
    }
    if (!o.command.empty()) {
      err << "dlenv which: -- CMD runs a command on this machine: it cannot be used with --root\n";
      return kExitUsage;
    }
    fs = make_rooted_filesystem(o.root);
  } else {
    fs = make_real_filesystem();
  }
  // Windows reads the OS's module lists; --root (a copied /proc) and Linux read maps.
  if (o.root.empty() && native_process_modules()) {
    if (o.pid > 0) return which_pid_modules(o, *fs, out, err);
    if (!o.holding.empty()) return which_holding_modules(o, out, err);
    return which_command_modules(o, *fs, out, err);
  }
  if (o.pid > 0) return which_pid(o, *fs, out, err);
  if (!o.holding.empty()) return render_holding(o, processes_holding(*fs, o.holding), false, out);
  return which_command(o, *fs, out, err);
}

}  // namespace dlenv
