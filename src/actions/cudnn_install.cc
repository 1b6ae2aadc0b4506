#include "actions/cudnn_install.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "actions/cudnn_verify.h"
#include "platform/process.h"
#include "probe/loader_model.h"
#include "probe/windows_probes.h"
#include "util/safe_text.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using nlohmann::json;

std::optional<Version> read_toolkit_version(const FileSystem& fs, const std::string& root,
                                            std::string* source) {
  if (auto text = fs.read_file(path_join(root, "version.json"))) {
    json doc = json::parse(*text, nullptr, false);
    if (!doc.is_discarded() && doc.contains("cuda") && doc["cuda"].is_object()) {
      if (auto v = Version::parse(doc["cuda"].value("version", ""))) {
        *source = path_join(root, "version.json");
        return v;
      }
    }
  }
  if (auto text = fs.read_file(path_join(root, "version.txt"))) {
    auto pos = text->find("Version");
    if (pos != std::string::npos) {
      if (auto v = Version::parse(trim(std::string_view(*text).substr(pos + 7)))) {
        *source = path_join(root, "version.txt");
        return v;
      }
    }
  }
  std::string base = path_basename(root);  // Windows: ...\CUDA\v12.4
  if (starts_with(base, "v") || starts_with(base, "cuda-")) {
    if (auto v = Version::parse(base.substr(base[0] == 'v' ? 1 : 5))) {
      *source = "directory name " + root;
      return v;
    }
  }
  return std::nullopt;
}

using ToolkitCandidate = ToolkitLocation;

}  // namespace

std::vector<ToolkitLocation> find_cuda_toolkits(const ProbeContext& ctx) {
  std::vector<ToolkitCandidate> out;
  auto add = [&](const std::string& root, bool is_default) {
    if (!ctx.fs.is_dir(root)) return;
    std::string real = ctx.fs.real_path(root).value_or(root);
    for (auto& c : out) {
      if (c.real == real) {
        c.is_default = c.is_default || is_default;
        return;
      }
    }
    ToolkitCandidate c{root, real, {}, is_default};
    std::string src;
    if (auto v = read_toolkit_version(ctx.fs, root, &src)) {
      c.version = Fact<Version>::known(*v, src);
    } else {
      c.version =
          Fact<Version>::unknown(FactStatus::not_found, "no version.json or version.txt", root);
    }
    out.push_back(std::move(c));
  };
  if (ctx.os == Os::windows) {
    if (auto v = ctx.env.get("CUDA_PATH"); v && !v->empty()) {
      add(logical_toolkit_path(ctx, *v), true);
    }
    for (const auto& [k, v] : ctx.env.all()) {
      if (starts_with(k, "CUDA_PATH_V")) add(logical_toolkit_path(ctx, v), false);
    }
    // On the drive Windows has its Program Files on, not the current directory's.
    const std::string toolkits =
        path_join(win_program_files(ctx), "NVIDIA GPU Computing Toolkit/CUDA");
    if (auto es = ctx.fs.list_dir(toolkits)) {
      for (const auto& e : *es) {
        if (starts_with(e.name, "v")) add(path_join(toolkits, e.name), false);
      }
    }
    return out;
  }
  LoaderConfig loader = read_loader_config(ctx);
  for (const auto& t : probe_toolkits(ctx, loader)) {
    add(t.root, t.is_default_link);
  }
  return out;
}

namespace {

std::string describe_existing(const FileSystem& fs, const std::string& path,
                              const std::string& previous_cudnn) {
  auto st = fs.lstat(path);
  if (!st) return "";
  if (st->type == FileType::symlink) {
    return "link -> " + fs.read_link(path).value_or("?");
  }
  std::string v = installed_file_version(fs, path);
  if (!v.empty()) return "version " + v;
  if (!previous_cudnn.empty()) return "cuDNN " + previous_cudnn + " (the toolkit's header)";
  return "unknown version";
}

std::string safe_version_text(const Version& v) {
  std::string s = v.str();
  for (char& c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.')) c = '_';
  }
  return s;
}

std::string manifest_name(const std::string& version) {
  return "cudnn-" + version + ".json";
}

// The toolkit's real path and the real paths of the directories its top-level
// links (lib64 -> ..., include -> ...) lead to.
std::vector<std::string> toolkit_trees(const FileSystem& fs, const std::string& toolkit) {
  std::vector<std::string> trees = {toolkit};
  if (auto es = fs.list_dir(toolkit)) {
    for (const auto& e : *es) {
      const std::string p = path_join(toolkit, e.name);
      auto st = fs.lstat(p);
      if (!st || st->type != FileType::symlink || !fs.is_dir(p)) continue;
      if (auto real = fs.real_path(p); real && *real != "/") trees.push_back(*real);
    }
  }
  return trees;
}

// Whether `dir` is a directory of a CUDA installation: it holds the CUDA runtime, its
// header or the compiler (lib64, include, bin of a toolkit; a conda env's lib or include).
bool holds_cuda_files(const FileSystem& fs, const std::string& dir) {
  auto es = fs.list_dir(dir);
  if (!es) return false;
  for (const auto& e : *es) {
    const std::string n = to_lower(e.name);
    if (starts_with(n, "libcudart.so") || starts_with(n, "cudart64_") ||
        starts_with(n, "cudart.") || n == "cuda_runtime.h" || n == "cuda_runtime_api.h" ||
        n == "nvcc" || n == "nvcc.exe") {
      return true;
    }
  }
  return false;
}

// Modes as NVIDIA's own packages install them: 0755 for anything executable, else
// 0644; never setuid/setgid/sticky, never writable by group or others.
uint32_t sanitized_mode(uint32_t mode) {
  return (mode & 0111) ? 0755 : 0644;
}

// Removes `.dlenv` when it is a directory with nothing left in it (after an
// uninstall, a rollback or a recovery): dlenv never leaves an empty one behind.
void remove_empty_dlenv_dir(const FileSystem& fs, FileWriter& w, const std::string& dlenv_dir) {
  auto st = fs.lstat(dlenv_dir);
  if (!st || st->type != FileType::directory) return;
  auto es = fs.list_dir(dlenv_dir);
  if (es && es->empty()) (void)w.remove(dlenv_dir);
}

// What changed at a path the install manifest names since the install (nullopt:
// nothing that matters): it is now a link where a file was, or a directory on its
// way is a link now.
std::optional<std::string> changed_since_install(const FileSystem& fs, const std::string& path,
                                                 const std::string& type) {
  // The manifest's paths are real paths: no directory on the way was a link.
  std::string prefix;
  const auto parts = split(path_dirname(path), '/');
  for (const auto& c : parts) {
    prefix += "/" + c;
    if (auto st = fs.lstat(prefix); st && st->type == FileType::symlink) {
      return fmt::format("{} changed since the install: {} is a link now (-> {})", path, prefix,
                         fs.read_link(prefix).value_or("?"));
    }
  }
  auto st = fs.lstat(path);
  if (!st) return std::nullopt;
  const bool is_link = st->type == FileType::symlink;
  if (is_link != (type == "symlink") || st->type == FileType::directory) {
    return fmt::format("{} changed since the install: it was a {} and is now a {}", path, type,
                       is_link ? "link -> " + fs.read_link(path).value_or("?")
                       : st->type == FileType::directory ? std::string("directory")
                                                         : std::string("file"));
  }
  return std::nullopt;
}

}  // namespace

std::string logical_toolkit_path(const ProbeContext& ctx, const std::string& arg) {
  if (ctx.os != Os::windows) return path_normalize(arg);
  return win_logical(ctx, arg);
}

std::string display_path(const std::string& logical, Os os) {
  if (os != Os::windows) return logical;
  // A real path from the Windows file system already has its drive ("C:\\...").
  std::string p = logical.size() >= 2 && logical[1] == ':' ? logical : "C:" + logical;
  std::replace(p.begin(), p.end(), '/', '\\');
  return p;
}

bool path_within(const std::string& path, const std::string& dir, Os os) {
  const char sep = os == Os::windows ? '\\' : '/';
  auto shown = [&](const std::string& p) {
    std::string d = display_path(p, os);
    while (d.size() > 1 && d.back() == sep) d.pop_back();
    return os == Os::windows ? to_lower(d) : d;
  };
  const std::string p = shown(path), d = shown(dir);
  return p == d || starts_with(p, d + sep);
}

std::vector<BusyFile> find_busy_files(const FileSystem& fs, const std::vector<std::string>& paths) {
  std::vector<BusyFile> out;
  if (paths.empty()) return out;
  std::set<std::string> wanted(paths.begin(), paths.end());
  auto procs = fs.list_dir("/proc");
  if (!procs) return out;
  for (const auto& p : *procs) {
    auto pid = parse_int(p.name);
    if (!pid || *pid <= 0) continue;
    auto maps = fs.read_file("/proc/" + p.name + "/maps", 64u << 20);
    if (!maps) continue;  // gone, or another user's process we may not read
    std::set<std::string> hit;
    for (const auto& line : split_lines(*maps)) {
      // address perms offset dev inode pathname
      size_t slash = line.find('/');
      if (slash == std::string::npos) continue;
      std::string file(trim(std::string_view(line).substr(slash)));
      if (ends_with(file, " (deleted)")) continue;
      if (wanted.count(file) && hit.insert(file).second) {
        std::string comm(trim(fs.read_file("/proc/" + p.name + "/comm").value_or("?")));
        out.push_back({file, static_cast<int>(*pid), comm});
      }
    }
  }
  return out;
}

std::vector<BusyFile> busy_from_modules(const ModuleScan& scan,
                                        const std::vector<std::string>& paths) {
  auto key = [](std::string p) {
    std::replace(p.begin(), p.end(), '/', '\\');
    return to_lower(p);
  };
  std::set<std::string> wanted;
  for (const auto& p : paths) wanted.insert(key(p));
  std::vector<BusyFile> out;
  for (const auto& proc : scan.processes) {
    std::set<std::string> hit;
    for (const auto& m : proc.modules) {
      std::string k = key(m);
      if (wanted.count(k) && hit.insert(k).second) out.push_back({m, proc.pid, proc.image});
    }
  }
  return out;
}

Result<CudnnInstallPlan> plan_cudnn_install(const ProbeContext& ctx, const CudnnSource& source,
                                            const CudnnInstallOptions& o) {
  auto dist = inspect_cudnn(source, ctx.kb);
  if (!dist) return std::unexpected(dist.error());
  CudnnInstallPlan plan;
  plan.dist = std::move(*dist);
  const FileSystem& fs = ctx.fs;
  const Os os = ctx.os;
  for (const auto& e : plan.dist.errors) plan.blockers.push_back("the distribution: " + e);
  if (plan.dist.os != os) {
    plan.blockers.push_back(fmt::format(
        "this is a {} distribution ({}) but the target is {}: download the {} archive",
        plan.dist.os == Os::windows ? "Windows" : "Linux", plan.dist.file_name,
        os == Os::windows ? "Windows" : "Linux", os == Os::windows ? "windows-x86_64" : "linux"));
  }
  if (!plan.dist.version) return plan;
  const Version& ver = *plan.dist.version;
  plan.version = safe_version_text(ver);

  // The toolkit.
  std::vector<ToolkitCandidate> toolkits = find_cuda_toolkits(ctx);
  std::optional<ToolkitCandidate> chosen;
  // A plain int beside the flag: GCC 12 -O2 misreads an optional<int> formatted by fmt
  // as possibly uninitialised (-Wmaybe-uninitialized).
  const bool want_major = plan.dist.cuda_major.ok();
  const int want_major_value = want_major ? static_cast<int>(*plan.dist.cuda_major) : 0;
  if (!o.toolkit.empty()) {
    std::string root = logical_toolkit_path(ctx, o.toolkit);
    if (!fs.is_dir(root)) {
      plan.blockers.push_back("--toolkit " + o.toolkit + ": not a directory");
      return plan;
    }
    std::string real = fs.real_path(root).value_or(root);
    ToolkitCandidate c{root, real, {}, false};
    std::string src;
    if (auto v = read_toolkit_version(fs, root, &src)) {
      c.version = Fact<Version>::known(*v, src);
    } else {
      c.version = Fact<Version>::unknown(FactStatus::not_found,
                                         "no version.json or version.txt in " + root, root);
    }
    chosen = c;
    plan.toolkit_reason = "--toolkit";
  } else if (o.cuda) {
    for (const auto& t : toolkits) {
      if (t.version && t.version->truncated(o.cuda->parts().size()) == *o.cuda) {
        if (!chosen || t.is_default) chosen = t;
      }
    }
    if (!chosen) {
      std::vector<std::string> have;
      for (const auto& t : toolkits) {
        have.push_back(t.root + (t.version ? " (" + t.version->str() + ")" : ""));
      }
      plan.blockers.push_back(fmt::format(
          "no CUDA {} toolkit found (found: {}); install it, or give its directory with --toolkit",
          o.cuda->str(), have.empty() ? "none" : join(have, ", ")));
      return plan;
    }
    plan.toolkit_reason = "--cuda " + o.cuda->str();
  } else {
    std::vector<ToolkitCandidate> match;
    for (const auto& t : toolkits) {
      if (want_major && t.version && t.version->major() == want_major_value) match.push_back(t);
    }
    auto def = std::find_if(match.begin(), match.end(), [](const auto& t) { return t.is_default; });
    if (match.size() == 1) {
      chosen = match[0];
      plan.toolkit_reason = fmt::format("the only CUDA {} toolkit found", want_major_value);
    } else if (def != match.end()) {
      chosen = *def;
      plan.toolkit_reason =
          fmt::format("the default toolkit (/usr/local/cuda) among {} CUDA {} toolkits",
                      match.size(), want_major_value);
    } else {
      std::vector<std::string> have;
      for (const auto& t : toolkits) {
        have.push_back(display_path(t.root, os) + (t.version ? " (" + t.version->str() + ")" : ""));
      }
      plan.blockers.push_back(
          match.empty()
              ? fmt::format("no toolkit for CUDA {} was found (found: {}); give one with --toolkit "
                            "DIR or --cuda X.Y",
                            want_major ? std::to_string(want_major_value) : "?",
                            have.empty() ? "none" : join(have, ", "))
              : fmt::format("{} CUDA {} toolkits match ({}): choose one with --toolkit DIR",
                            match.size(), want_major_value, join(have, ", ")));
      return plan;
    }
  }
  plan.toolkit = chosen->root;
  plan.toolkit_real = chosen->real;
  plan.toolkit_version = chosen->version;
  if (want_major && chosen->version && chosen->version->major() != want_major_value) {
    std::string why = fmt::format(
        "cuDNN {} in {} was built for CUDA {} ({}), but the toolkit {} is CUDA {}: its "
        "libraries look for the CUDA {} cuBLAS/cuBLASLt, which this toolkit does not have, so "
        "cuDNN would fail to load. Download the _cuda{} archive of cuDNN {}",
        ver.str(), plan.dist.file_name, want_major_value,
        plan.dist.cuda_evidence.empty() ? "file name" : plan.dist.cuda_evidence.front(),
        display_path(chosen->root, os), chosen->version->str(), want_major_value,
        chosen->version->major(), ver.truncated(3).str());
    if (o.force) {
      plan.warnings.push_back(why + " (installing anyway: --force)");
    } else {
      plan.blockers.push_back(why + ", or pass --force to install anyway");
    }
  } else if (!want_major) {
    plan.warnings.push_back(
        "the CUDA major this cuDNN was built for is unknown: the toolkit was not checked");
  } else if (!chosen->version) {
    plan.warnings.push_back("the toolkit's CUDA version is unknown (" + chosen->version.reason +
                            "): the CUDA major was not checked");
  }

  // What is there now.
  const std::string tk = plan.toolkit_real;
  auto real_dir = [&](const std::string& rel) {
    std::string d = path_join(tk, rel);
    return fs.is_dir(d) ? fs.real_path(d).value_or(d) : d;
  };
  if (auto text = fs.read_file(path_join(real_dir("include"), "cudnn_version.h"))) {
    if (auto v = parse_cudnn_version_header(*text)) plan.previous_cudnn = v->str();
  }
  plan.dlenv_dir = path_join(tk, ".dlenv");
  plan.staging_dir = path_join(plan.dlenv_dir, "staging-cudnn-" + plan.version);
  plan.backup_dir = path_join(plan.dlenv_dir, "backup-cudnn-" + plan.version);
  plan.manifest_path = path_join(plan.dlenv_dir, manifest_name(plan.version));
  if (auto st = fs.lstat(plan.dlenv_dir); st && st->type != FileType::directory) {
    plan.blockers.push_back(fmt::format(
        "{} is not a directory (a link?): dlenv never writes through a link; move it away",
        display_path(plan.dlenv_dir, os)));
  }
  const bool interrupted = fs.lstat(toolkit_journal_path(tk)).has_value();
  if (interrupted) {
    plan.blockers.push_back(fmt::format(
        "an interrupted dlenv transaction is journaled in {}: `dlenv cudnn recover --toolkit {}` "
        "finishes or undoes it (install and uninstall run it first)",
        display_path(toolkit_journal_path(tk), os), display_path(tk, os)));
  }
  if (auto es = fs.list_dir(plan.dlenv_dir)) {
    for (const auto& e : *es) {
      if (interrupted) break;  // its staging/backup directories are the journal's
      if (starts_with(e.name, "cudnn-") && ends_with(e.name, ".json")) {
        std::string other = e.name.substr(6, e.name.size() - 11);
        plan.blockers.push_back(fmt::format(
            "dlenv already installed cuDNN {} here ({}): run `dlenv cudnn uninstall {}` first "
            "(one dlenv install per toolkit keeps every backup exact)",
            other, display_path(path_join(plan.dlenv_dir, e.name), os), other));
      } else if (starts_with(e.name, "staging-") || starts_with(e.name, "backup-")) {
        plan.blockers.push_back(fmt::format(
            "{} is left from an interrupted dlenv run: look inside, restore or remove it first",
            display_path(path_join(plan.dlenv_dir, e.name), os)));
      }
    }
  }

  // The steps.
  std::set<std::string> dest_dirs;
  std::map<std::string, std::string> real_dirs;
  size_t n = 0;
  for (const auto& f : plan.dist.files) {
    if (f.dest.empty() || f.type == SourceEntryType::hardlink) continue;
    std::string rel_dir = path_dirname(f.dest);
    if (!real_dirs.count(rel_dir)) real_dirs[rel_dir] = real_dir(rel_dir);
    CudnnInstallStep s;
    s.source_path = f.path;
    s.dest = path_join(real_dirs[rel_dir], path_basename(f.dest));
    s.type = f.type;
    s.mode = sanitized_mode(f.mode);
    if ((f.mode & 07777 & ~0755u) != 0 && f.type == SourceEntryType::file) {
      plan.warnings.push_back(fmt::format(
          "{} has mode {:04o} in the distribution (setuid/setgid/sticky or writable by others): "
          "installed as {:04o}",
          f.path, f.mode & 07777, s.mode));
    }
    s.size = f.size;
    s.link_target = f.link_target;
    std::string tag = fmt::format("{:03}-{}", n++, path_basename(f.dest));
    s.staged = path_join(plan.staging_dir, tag);
    if (fs.lstat(s.dest)) {
      auto st = fs.lstat(s.dest);
      if (st->type == FileType::directory) {
        plan.blockers.push_back(display_path(s.dest, os) +
                                " is a directory where a file is to go: move it away first");
      }
      s.replaces = true;
      s.old_what = describe_existing(fs, s.dest, plan.previous_cudnn);
      s.backup = path_join(plan.backup_dir, tag);
    }
    if (f.type == SourceEntryType::symlink) {
      s.new_what = "link -> " + f.link_target;
    } else {
      static const std::regex so_re(R"(.*\.so\.(\d+\.\d+\.\d+))");
      std::smatch m;
      std::string base = path_basename(f.dest);
      s.new_what =
          std::regex_match(base, m, so_re) ? "version " + m[1].str() : "cuDNN " + ver.str();
    }
    dest_dirs.insert(real_dirs[rel_dir]);
    plan.steps.push_back(std::move(s));
  }
  // A toolkit whose include/ or lib64/ is a link (conda, distro layouts): resolved once
  // here. Out of the toolkit, it must lead to a directory of a CUDA installation (one that
  // holds CUDA's own files), never to any directory a link happens to name (uninstall
  // accepts those trees too).
  for (const auto& [rel, real] : real_dirs) {
    if (path_within(real, tk, os)) continue;
    const std::string shown = display_path(path_join(tk, rel), os);
    if (real == "/" || !holds_cuda_files(fs, real)) {
      plan.blockers.push_back(fmt::format(
          "{} is a link to {}, out of the toolkit, and that directory holds none of CUDA's "
          "files (cudart, cuda_runtime.h, nvcc): dlenv does not write there. Point the link "
          "at the toolkit's own directory, or choose a toolkit with --toolkit DIR",
          shown, display_path(real, os)));
    } else {
      plan.warnings.push_back(fmt::format("{} is a link to {}: the files for {} go there", shown,
                                          display_path(real, os), rel));
    }
  }
  if (plan.steps.empty()) plan.blockers.push_back("the distribution has no cuDNN files to install");
  for (const auto& d : dest_dirs) {
    if (!fs.is_dir(d)) plan.dirs_to_create.push_back(d);
  }

  // Permissions: every directory written into (or its nearest existing parent).
  std::set<std::string> check = dest_dirs;
  check.insert(fs.is_dir(plan.dlenv_dir) ? plan.dlenv_dir : tk);
  for (std::string d : check) {
    while (!fs.exists(d) && d != "/" && !d.empty()) d = path_dirname(d);
    if (!fs.can_write(d)) {
      auto st = fs.stat(d);
      plan.blockers.push_back(fmt::format(
          "no permission to write in {} (owner uid {}, mode {:04o}): nothing was changed. Run "
          "the install as that user (e.g. with sudo), or install into a toolkit you own with "
          "--toolkit DIR",
          display_path(d, os), st ? st->uid : 0, st ? st->mode : 0));
    }
  }
  // Files running processes map (Linux): they keep the old copy until they restart.
  if (os == Os::linux) {
    std::vector<std::string> replaced;
    for (const auto& s : plan.steps) {
      if (s.replaces) replaced.push_back(fs.real_path(s.dest).value_or(s.dest));
    }
    plan.busy = find_busy_files(fs, replaced);
    for (const auto& b : plan.busy) {
      plan.warnings.push_back(fmt::format(
          "process {} ({}) has {} loaded: it keeps using the old copy until it restarts "
          "(the new file is moved in beside it, never written over it)",
          b.pid, b.command, display_path(b.path, os)));
    }
  }
  // Windows: a loaded DLL cannot be replaced (the copy fails with a sharing violation),
  // so a process that holds one stops the install before anything is touched. Only on
  // the live system: a --root tree has no processes.
  if (os == Os::windows && ctx.live && native_process_modules()) {
    std::vector<std::string> replaced;
    for (const auto& s : plan.steps) {
      if (s.replaces) replaced.push_back(display_path(s.dest, os));
    }
    if (!replaced.empty()) {
      if (auto scan = all_process_modules()) {
        plan.busy = busy_from_modules(*scan, replaced);
        for (const auto& b : plan.busy) {
          plan.blockers.push_back(fmt::format(
              "process {} ({}) has {} loaded, and Windows does not let a loaded DLL be "
              "replaced: close it (`dlenv which --holding {}` lists every holder) and run the "
              "install again; nothing was changed",
              b.pid, b.command, b.path, file_name_of(b.path)));
        }
        if (!scan->inaccessible.empty()) {
          plan.warnings.push_back(fmt::format(
              "{} process(es) could not be inspected for loaded cuDNN DLLs (access denied); if "
              "one of them holds a file to be replaced, the copy fails and the install is "
              "rolled back",
              scan->inaccessible.size()));
        }
      }
    }
  }
  for (const auto& w : plan.dist.warnings) plan.warnings.push_back("the distribution: " + w);
  return plan;
}

namespace {

void verify_install(const ProbeContext& ctx, const CudnnInstallPlan& plan,
                    const LoadChecker& load_check, CudnnInstallResult& r) {
  CudnnVerifyRequest req;
  req.version = *plan.dist.version;
  req.toolkit = plan.toolkit_real;
  req.load_check = load_check;
  const auto libs = ctx.kb.cudnn_library_files(req.version.major(), ctx.os);
  for (const auto& s : plan.steps) {
    const std::string base = path_basename(s.dest);
    if (base == "cudnn_version.h") req.include_dir = path_dirname(s.dest);
    if (!libs.empty() && base == libs.front()) req.lib_dir = path_dirname(s.dest);
  }
  auto v = verify_cudnn_install(ctx, req);
  r.verified = std::move(v.verified);
  r.verify_errors = std::move(v.errors);
  r.notes.insert(r.notes.end(), v.notes.begin(), v.notes.end());
}

void loader_cache_notes(const ProbeContext& ctx, const std::string& lib_dir,
                        CudnnInstallResult& r) {
  LoaderConfig loader = read_loader_config(ctx);
  const std::string real = ctx.fs.real_path(lib_dir).value_or(lib_dir);
  bool covered = false;
  for (const auto& d : loader.conf_dirs) {
    if (ctx.fs.real_path(d).value_or(d) == real) covered = true;
  }
  if (!covered) {
    r.notes.push_back(fmt::format(
        "{} is not in /etc/ld.so.conf: programs find cuDNN only through their RUNPATH or "
        "LD_LIBRARY_PATH. To make it system-wide: echo {} | sudo tee "
        "/etc/ld.so.conf.d/cuda-cudnn.conf && sudo ldconfig",
        lib_dir, lib_dir));
    return;
  }
  if (ctx.live && !ctx.fs.is_rooted()) {
    auto p = run_process({"ldconfig"});
    if (p && p->exit_code == 0) {
      r.notes.push_back("ran ldconfig: the loader cache now lists the new files");
    } else {
      r.notes.push_back(fmt::format("ldconfig failed ({}): run `sudo ldconfig`",
                                    p ? trim(p->err) : std::string_view(p.error().message)));
    }
  } else {
    r.notes.push_back(lib_dir +
                      " is in the root's /etc/ld.so.conf: run `ldconfig` (as root) on "
                      "that system so its cache lists the new files");
  }
}

std::string install_manifest_json(const CudnnInstallPlan& plan,
                                  const std::vector<std::string>& created) {
  json files = json::array();
  for (const auto& s : plan.steps) {
    files.push_back({{"path", s.dest},
                     {"type", source_entry_type_name(s.type)},
                     {"size", s.size},
                     {"backup", s.replaces ? json(s.backup) : json(nullptr)}});
  }
  json doc{{"schema", "dlenv.cudnn-installed/1"},
           {"version", plan.version},
           {"cuda_major", plan.dist.cuda_major ? json(*plan.dist.cuda_major) : json(nullptr)},
           {"toolkit", plan.toolkit_real},
           {"source", plan.dist.source},
           {"previous_cudnn", plan.previous_cudnn},
           {"backup_dir", plan.backup_dir},
           {"created_dirs", created},
           {"files", files}};
  return json_text(doc, 2) + "\n";
}

}  // namespace

CudnnInstallResult execute_cudnn_install(const ProbeContext& ctx, const CudnnSource& source,
                                         const CudnnInstallPlan& plan, FileWriter& w,
                                         const LoadChecker& load_check) {
  CudnnInstallResult r;
  if (!plan.ok()) {
    r.failure = "the plan has blockers: " + join(plan.blockers, "; ");
    return r;
  }
  const FileSystem& fs = ctx.fs;
  Transaction tx(w, toolkit_journal_path(plan.toolkit_real));
  auto exists = [&](const std::string& p) { return fs.exists(p); };
  auto abort = [&](const std::string& step, const Error& e) {
    r.failure = step + ": " + e.message;
    r.rollback_problems = tx.rollback();
    if (r.rollback_problems.empty()) remove_empty_dlenv_dir(fs, w, plan.dlenv_dir);
    return r;
  };
  // Directories dlenv creates (kept in the manifest so uninstall removes them).
  std::vector<std::string> created;
  auto note_dirs = [&](const std::string& d) {
    std::vector<std::string> chain;
    for (std::string p = d; !p.empty() && p != "/" && !fs.exists(p); p = path_dirname(p)) {
      chain.push_back(p);
    }
    created.insert(created.end(), chain.rbegin(), chain.rend());
  };
  note_dirs(plan.dlenv_dir);
  // .dlenv holds the journal, so it is made before the transaction begins (an empty
  // .dlenv is removed by rollback and recovery).
  if (!fs.lstat(plan.dlenv_dir)) {
    if (auto x = w.make_dir(plan.dlenv_dir, 0755); !x) return abort("creating .dlenv", x.error());
  }
  if (auto x = tx.begin("cudnn-install", "cuDNN " + plan.version + " from " + plan.dist.source);
      !x) {
    return abort("starting the journal", x.error());
  }
  if (auto x = tx.make_dir(plan.staging_dir, 0700); !x) return abort("staging", x.error());

  // 1. Stage every file (one pass over the source), then the links.
  std::map<std::string, const CudnnInstallStep*> by_source;
  for (const auto& s : plan.steps) by_source[s.source_path] = &s;
  size_t staged = 0;
  // Each file streams from the source into its staged copy (never whole in memory);
  // the copy must end up with exactly the size the source declared.
  std::unique_ptr<NewFile> file;
  auto read = source.stream_files(
      [&](const SourceEntry& e) { return by_source.count(e.path) > 0; },
      [&](const SourceEntry& e, uint64_t offset, std::string_view piece) -> Result<void> {
        const CudnnInstallStep& s = *by_source[e.path];
        if (offset == 0) {
          auto f = tx.create_new_file(s.staged, s.mode, e.size);
          if (!f) return std::unexpected(f.error());
          file = std::move(*f);
        }
        if (auto x = file->write(piece); !x) return x;
        if (offset + piece.size() < e.size) return {};
        auto x = file->finish();
        file.reset();
        if (x) ++staged;
        return x;
      });
  file.reset();
  if (!read) return abort("staging the files", read.error());
  for (const auto& s : plan.steps) {
    if (s.type != SourceEntryType::symlink) continue;
    if (auto x = tx.make_symlink(s.staged, s.link_target); !x) return abort("staging", x.error());
    ++staged;
  }
  if (staged != plan.steps.size()) {
    return abort("staging", Error{fmt::format("{} of {} files could be read from {}", staged,
                                              plan.steps.size(), plan.dist.source)});
  }
  // 2. Destination and backup directories.
  for (const auto& d : plan.dirs_to_create) {
    note_dirs(d);
    if (auto x = tx.make_dirs(d, exists); !x) return abort("creating " + d, x.error());
  }
  bool any_backup =
      std::any_of(plan.steps.begin(), plan.steps.end(), [](const auto& s) { return s.replaces; });
  if (any_backup) {
    if (auto x = tx.make_dir(plan.backup_dir, 0700); !x) return abort("backup", x.error());
  }
  // 3. Move each old file aside and the new one in (renames: atomic, same file system).
  for (const auto& s : plan.steps) {
    if (s.replaces) {
      if (auto x = tx.rename(s.dest, s.backup); !x) return abort("backing up " + s.dest, x.error());
    }
    if (auto x = tx.rename(s.staged, s.dest); !x) return abort("installing " + s.dest, x.error());
  }
  if (auto x = tx.remove_dir(plan.staging_dir, 0700); !x) return abort("cleaning up", x.error());
  // 4. The manifest uninstall reads.
  if (auto x = tx.write_new_file(plan.manifest_path, install_manifest_json(plan, created), 0644);
      !x) {
    return abort("writing the manifest", x.error());
  }
  // 5. Verify; a failed verification undoes the install too.
  verify_install(ctx, plan, load_check, r);
  if (!r.verify_errors.empty()) {
    return abort("verification", Error{join(r.verify_errors, "; ")});
  }
  auto committed = tx.commit();
  if (!committed) return abort("committing", committed.error());
  for (const auto& problem : *committed) r.notes.push_back(problem);
  r.installed = true;
  if (ctx.os == Os::linux) {
    for (const auto& s : plan.steps) {
      if (path_basename(s.dest) == fmt::format("libcudnn.so.{}", plan.dist.version->major())) {
        loader_cache_notes(ctx, path_dirname(s.dest), r);
        break;
      }
    }
  }
  if (!plan.busy.empty()) {
    std::set<int> pids;
    for (const auto& b : plan.busy) pids.insert(b.pid);
    std::vector<std::string> ps;
    for (int p : pids) ps.push_back(std::to_string(p));
    r.notes.push_back("restart process(es) " + join(ps, ", ") + " to use the new cuDNN");
  }
  return r;
}

namespace {

struct FoundInstall {
  std::string root, manifest;
};

Result<FoundInstall> find_install_manifest(const ProbeContext& ctx, const std::string& version,
                                           const std::string& toolkit) {
  const FileSystem& fs = ctx.fs;
  std::vector<std::string> roots;
  if (!toolkit.empty()) {
    std::string root = logical_toolkit_path(ctx, toolkit);
    roots.push_back(fs.real_path(root).value_or(root));
  } else {
    for (const auto& t : find_cuda_toolkits(ctx)) roots.push_back(t.real);
  }
  std::vector<FoundInstall> found;
  for (const auto& root : roots) {
    auto es = fs.list_dir(path_join(root, ".dlenv"));
    if (!es) continue;
    for (const auto& e : *es) {
      if (!starts_with(e.name, "cudnn-") || !ends_with(e.name, ".json")) continue;
      std::string v = e.name.substr(6, e.name.size() - 11);
      if (v == version || starts_with(v, version + ".")) {
        found.push_back({root, path_join(path_join(root, ".dlenv"), e.name)});
      }
    }
  }
  if (found.empty()) {
    return fail(fmt::format(
        "no dlenv install of cuDNN {} found in {} (dlenv uninstalls only what `dlenv cudnn "
        "install` put there; `dlenv cudnn list` shows what is installed)",
        version, roots.empty() ? "any toolkit" : join(roots, ", ")));
  }
  if (found.size() > 1) {
    std::vector<std::string> where;
    for (const auto& f : found) where.push_back(f.manifest);
    return fail("several installs match: " + join(where, ", ") + "; give --toolkit DIR");
  }
  return found[0];
}

}  // namespace

Result<std::string> locate_cudnn_install(const ProbeContext& ctx, const std::string& version,
                                         const std::string& toolkit) {
  auto f = find_install_manifest(ctx, version, toolkit);
  if (!f) return std::unexpected(f.error());
  return f->root;
}

CudnnUninstallPlan plan_cudnn_uninstall(const ProbeContext& ctx, const std::string& version,
                                        const std::string& toolkit) {
  CudnnUninstallPlan r;
  r.version = version;
  const FileSystem& fs = ctx.fs;
  auto found = find_install_manifest(ctx, version, toolkit);
  if (!found) {
    r.failure = found.error().message;
    return r;
  }
  const std::string root = found->root, manifest = found->manifest;
  r.toolkit = root;
  r.manifest = manifest;
  auto text = fs.read_file(manifest);
  json doc = text ? parse_json_text(*text, false) : json();
  if (!text || doc.is_discarded() || !doc.contains("files") || !doc["files"].is_array()) {
    r.failure =
        manifest + " cannot be read or is not a dlenv install manifest: nothing was changed";
    return r;
  }
  r.version = doc.value("version", version);
  const std::string backup_dir = doc.value("backup_dir", "");
  // Every path must lie inside the toolkit: a tampered manifest must not move other files.
  // Windows: real paths come back as "C:\\...\\v11.7" and the manifest may mix separators;
  // compare with '/' and, on Windows, without case.
  auto norm = [&](std::string p) {
    std::replace(p.begin(), p.end(), '\\', '/');
    if (ctx.os == Os::windows) p = to_lower(p);
    return p;
  };
  // The toolkit, and the directories its own top-level links lead to now (a distro's
  // lib64 -> /usr/lib/x86_64-linux-gnu): the install may have put files there.
  const std::vector<std::string> trees = toolkit_trees(fs, root);
  auto inside = [&](const std::string& p) {
    const std::string n = norm(p);
    if (contains(n, "/../")) return false;
    return std::any_of(trees.begin(), trees.end(), [&](const std::string& t) {
      return starts_with(path_normalize(n), path_normalize(norm(t)) + "/");
    });
  };
  for (const auto& f : doc["files"]) {
    CudnnUninstallPlan::Item it{
        f.value("path", ""),
        f.contains("backup") && f["backup"].is_string() ? f["backup"].get<std::string>() : "",
        false};
    if (!inside(it.path) || (!it.backup.empty() && !inside(it.backup))) {
      r.failure = manifest + " names a path outside the toolkit (" + it.path +
                  "): refusing to touch anything";
      return r;
    }
    // A path that became a link, or lies under a directory swapped for one, since the
    // install is never followed: stop before anything is touched.
    if (auto changed = changed_since_install(fs, it.path, f.value("type", "file"))) {
      r.failure = *changed +
                  ": nothing was changed (look at it, put it back or remove the "
                  "files by hand)";
      return r;
    }
    if (!it.backup.empty() && !fs.lstat(it.backup)) {
      r.failure = fmt::format(
          "the backup {} of {} is missing: nothing was changed (restore it "
          "by hand or reinstall the previous cuDNN)",
          it.backup, it.path);
      return r;
    }
    it.present = fs.lstat(it.path).has_value();
    r.items.push_back(std::move(it));
  }
  if (!backup_dir.empty() && inside(backup_dir) && fs.is_dir(backup_dir)) {
    r.backup_dir = backup_dir;
  }
  // Directories the install created (deepest first): removed when empty; .dlenv itself
  // goes after the commit when nothing is left in it.
  std::vector<std::string> created;
  for (const auto& d : doc.value("created_dirs", json::array())) {
    if (d.is_string()) created.push_back(d.get<std::string>());
  }
  for (auto it = created.rbegin(); it != created.rend(); ++it) {
    if (inside(*it + "/x") && *it != path_join(root, ".dlenv")) r.created_dirs.push_back(*it);
  }
  return r;
}

CudnnUninstallResult execute_cudnn_uninstall(const ProbeContext& ctx, const CudnnUninstallPlan& p,
                                             FileWriter& w, const SourceProgressReport& report) {
  CudnnUninstallResult r;
  SourceProgress progress;
  progress.total_files = p.items.size();
  struct EndsProgress {  // `done` on every way out
    const SourceProgressReport& report;
    SourceProgress& progress;
    ~EndsProgress() {
      if (!report) return;
      progress.done = true;
      report(progress);
    }
  } ends{report, progress};
  r.version = p.version;
  r.toolkit = p.toolkit;
  if (!p.ok()) {
    r.failure = p.failure;
    return r;
  }
  const FileSystem& fs = ctx.fs;
  Transaction tx(w, toolkit_journal_path(p.toolkit));
  auto abort = [&](const std::string& step, const Error& e) {
    r.failure = step + ": " + e.message;
    r.rollback_problems = tx.rollback();
    return r;
  };
  if (auto x = tx.begin("cudnn-uninstall", "cuDNN " + r.version); !x) {
    return abort("starting the journal", x.error());
  }
  const std::string dlenv_dir = path_join(p.toolkit, ".dlenv");
  const std::string trash = path_join(dlenv_dir, "uninstall-cudnn-" + r.version);
  if (auto x = tx.make_dir(trash, 0700); !x) return abort("uninstall", x.error());
  size_t n = 0;
  std::vector<std::string> trashed;
  if (report) report(progress);
  for (auto it = p.items.rbegin(); it != p.items.rend(); ++it) {
    if (fs.lstat(it->path)) {
      std::string t = path_join(trash, fmt::format("{:03}-{}", n++, path_basename(it->path)));
      if (auto x = tx.rename(it->path, t); !x) return abort("removing " + it->path, x.error());
      trashed.push_back(t);
      r.removed_files.push_back(it->path);
    }
    if (!it->backup.empty()) {
      if (auto x = tx.rename(it->backup, it->path); !x) {
        return abort("restoring " + it->path, x.error());
      }
      r.restored.push_back(it->path);
    }
    ++progress.files;
    if (report) report(progress);
  }
  if (!p.backup_dir.empty()) {
    if (auto x = tx.remove_dir(p.backup_dir, 0700); !x) {
      return abort("removing the backup directory", x.error());
    }
  }
  std::string moved_manifest = path_join(trash, "manifest.json");
  if (auto x = tx.rename(p.manifest, moved_manifest); !x) return abort("manifest", x.error());
  trashed.push_back(moved_manifest);
  for (const auto& d : p.created_dirs) {
    auto es = fs.list_dir(d);
    if (es && es->empty()) {
      if (auto x = tx.remove_dir(d); !x) return abort("removing " + d, x.error());
    } else {
      r.notes.push_back(d + " was created by the install but is not empty now: kept");
    }
  }
  for (const auto& t : trashed) tx.remove_on_commit(t);
  tx.remove_on_commit(trash);
  auto committed = tx.commit();
  if (!committed) return abort("committing", committed.error());
  for (const auto& problem : *committed) r.notes.push_back("could not delete " + problem);
  remove_empty_dlenv_dir(fs, w, dlenv_dir);
  r.removed = true;
  return r;
}

CudnnUninstallResult uninstall_cudnn(const ProbeContext& ctx, const std::string& version,
                                     const std::string& toolkit, FileWriter& w) {
  return execute_cudnn_uninstall(ctx, plan_cudnn_uninstall(ctx, version, toolkit), w);
}

std::string toolkit_journal_path(const std::string& toolkit) {
  return path_join(path_join(toolkit, ".dlenv"), "journal");
}

Result<std::unique_ptr<FileLock>> lock_toolkit(FileWriter& w, const std::string& toolkit, Os os,
                                               const ToolkitLockOptions& o) {
  auto lock = w.lock_dir(toolkit, false);
  if (!lock || *lock) return lock;
  if (!o.wait) {
    return fail(fmt::format(
        "another dlenv process is changing {} (it holds the toolkit's lock): nothing was "
        "changed; run again when it has finished, or without --no-wait to wait for it",
        display_path(toolkit, os)));
  }
  if (o.on_wait) {
    o.on_wait(fmt::format(
        "another dlenv process is changing {}: waiting for it to finish (--no-wait: fail "
        "instead)",
        display_path(toolkit, os)));
  }
  return w.lock_dir(toolkit, true);
}

Result<RecoveryResult> recover_toolkit(const ProbeContext& ctx, FileWriter& w,
                                       const std::string& toolkit) {
  const std::string dlenv_dir = path_join(toolkit, ".dlenv");
  if (auto st = ctx.fs.lstat(dlenv_dir); st && st->type != FileType::directory) {
    return fail(
        fmt::format("{} is not a directory (a link?): dlenv never follows it; move it "
                    "away",
                    display_path(dlenv_dir, ctx.os)));
  }
  auto r = recover_transaction(ctx.fs, w, toolkit_journal_path(toolkit));
  if (r && r->problems.empty()) remove_empty_dlenv_dir(ctx.fs, w, dlenv_dir);
  return r;
}

std::vector<InterruptedTransaction> find_interrupted_transactions(const ProbeContext& ctx) {
  std::vector<InterruptedTransaction> out;
  for (const auto& t : find_cuda_toolkits(ctx)) {
    const std::string journal = toolkit_journal_path(t.real);
    if (auto p = read_pending_transaction(ctx.fs, journal)) {
      out.push_back({t.real, journal, std::move(*p)});
    }
  }
  return out;
}

}  // namespace dlenv
