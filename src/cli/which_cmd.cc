// `dlenv which` (see which_cmd.h). -- CMD runs the command and reads its
// /proc/PID/maps every few milliseconds until it exits (no ptrace, no LD_DEBUG,
// no LD_AUDIT: the command runs unchanged); the union of every file seen mapped
// is reported. A library mapped and unmapped between two reads, or mapped in
// the last milliseconds before exit, can be missed.
#include "cli/which_cmd.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "cli/cli.h"
#include "platform/filesystem.h"
#include "platform/process_watch.h"
#include "probe/process_maps.h"
#include "util/strings.h"

namespace dlenv {

namespace {

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
         {"deleted", l.deleted}});
  }
  return a;
}

// One library family loaded from two places with different versions.
std::vector<std::string> mixed_warnings(const std::vector<MappedLibrary>& libs) {
  std::map<std::string, std::map<std::string, std::string>> by;  // family -> dir -> version
  for (const auto& l : libs) {
    std::string fam = l.library == "cublasLt" ? "cublas" : l.library;
    if (fam.find("driver") != std::string::npos) fam = "driver";
    by[fam][path_dirname(l.path)] = l.version;
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
                       l.deleted ? "  (file deleted since it was mapped)" : "");
    out << fmt::format("  {:<{}}  {}{}\n", "", w, l.path,
                       l.version_source.empty() ? "" : "  [version from " + l.version_source + "]");
  }
  for (const auto& m : mixed_warnings(libs)) out << "  warning: " << m << "\n";
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
  if (o.json) {
    nlohmann::json j{{"schema", "dlenv.which/1"},
                     {"mode", "pid"},
                     {"pid", p->pid},
                     {"command", p->command},
                     {"libraries", libs_json(p->libraries)},
                     {"warnings", mixed_warnings(p->libraries)}};
    out << j.dump(2) << "\n";
    return kExitOk;
  }
  out << fmt::format("process {} ({}): {} NVIDIA/CUDA librar{} mapped\n", p->pid, p->command,
                     p->libraries.size(), p->libraries.size() == 1 ? "y" : "ies");
  print_libs(out, p->libraries);
  return kExitOk;
}

int which_holding(const WhichOptions& o, const FileSystem& fs, std::ostream& out) {
  const auto scan = processes_holding(fs, o.holding);
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
    out << j.dump(2) << "\n";
    return kExitOk;
  }
  if (scan.holders.empty()) {
    out << fmt::format("no process has a file named *{}* mapped ({} processes read)\n", o.holding,
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
    out << fmt::format("{} process(es) could not be read ({}{}): {}; run as root to include them\n",
                       scan.unreadable.size(), join(pids, ", "),
                       scan.unreadable.size() > pids.size() ? ", ..." : "",
                       scan.unreadable[0].second);
  }
  return kExitOk;
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
  const std::string how = r->timed_out ? fmt::format("killed after the {} s timeout", o.timeout_s)
                          : r->term_signal ? fmt::format("killed by signal {}", r->term_signal)
                                           : fmt::format("exited with {}", r->exit_code);
  if (o.json) {
    nlohmann::json j{{"schema", "dlenv.which/1"},     {"mode", "command"},
                     {"command", o.command},          {"exit_code", r->exit_code},
                     {"term_signal", r->term_signal}, {"timed_out", r->timed_out},
                     {"wall_ms", r->wall_ms},         {"maps_reads", reads},
                     {"libraries", libs_json(libs)},  {"warnings", mixed_warnings(libs)}};
    out << j.dump(2) << "\n";
    return kExitOk;
  }
  out << fmt::format(
      "{}: {} after {:.0f} ms; its maps read {} times; {} NVIDIA/CUDA librar{} "
      "mapped\n",
      join(o.command, " "), how, r->wall_ms, reads, libs.size(), libs.size() == 1 ? "y" : "ies");
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
  if (o.pid > 0) return which_pid(o, *fs, out, err);
  if (!o.holding.empty()) return which_holding(o, *fs, out);
  return which_command(o, *fs, out, err);
}

}  // namespace dlenv
