// The Windows loader model (see loader_model_win.h). The search order is data:
// a list of (rule, directory) built from the settings, walked in order; the
// first file with the name wins (the Windows loader does not skip a DLL of
// another machine: it fails with 193), later copies are recorded as shadowed.
#include "probe/loader_model_win.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "probe/nvidia_companions.h"
#include "probe/process_maps.h"
#include "probe/windows_probes.h"
#include "util/strings.h"

namespace dlenv {

namespace {

constexpr size_t kMaxObjects = 4096;
constexpr size_t kMaxListed = 8;
constexpr int kMaxForwardDepth = 4;
constexpr uint32_t kSearchFlags = kLoadLibrarySearchDllLoadDir | kLoadLibrarySearchApplicationDir |
                                  kLoadLibrarySearchUserDirs | kLoadLibrarySearchSystem32 |
                                  kLoadLibrarySearchDefaultDirs;

struct SearchDir {
  SearchRule rule;
  std::string dir;
  std::string detail;
};

bool has_separator(std::string_view s) {
  return s.find('/') != std::string_view::npos || s.find('\\') != std::string_view::npos;
}

bool is_api_set(const std::string& lower) {
  return lower.starts_with("api-ms-win-") || lower.starts_with("ext-ms-");
}

// LoadLibrary appends ".dll" to a name without an extension.
std::string with_dll_extension(const std::string& name) {
  const std::string base = path_basename(name);
  if (base.find('.') == std::string::npos) return name + ".dll";
  // A trailing '.' means "no extension, do not append one".
  if (base.ends_with(".")) return name.substr(0, name.size() - 1);
  return name;
}

std::string bitness(const PeInfo& pe) {
  return fmt::format("{} ({})", pe.is_64 ? "PE32+" : "PE32", pe_machine_name(pe.machine));
}

class WinModeler {
 public:
  WinModeler(const FileSystem& fs, const Kb& kb, const WindowsLoaderSettings& s)
      : fs_(fs), kb_(kb), s_(s) {
    for (const auto& k : s_.known_dlls.empty() ? default_known_dlls() : s_.known_dlls) {
      known_.insert(to_lower(k));
    }
    windows_dir_ = windows_logical_path(s_.windows_dir);
    system32_ = path_join(windows_dir_, "System32");
  }

  Result<LoadTree> run(const std::string& target) {
    LoadedObject root;
    root.name = target;
    if (has_separator(target)) {
      const std::string logical = windows_logical_path(target);
      if (!fs_.is_file(logical)) {
        return fail(
            fmt::format("{}: no such file (give a path to a DLL or EXE, or a DLL name "
                        "such as cudnn64_8.dll)",
                        target));
      }
      root.path = logical;
      root.rule = SearchRule::path;
      root.rule_detail = "given on the command line";
      root_dir_ = path_dirname(logical);
    }
    app_dir_ = windows_logical_path(s_.app_dir);
    if (app_dir_.empty() && root.path && to_lower(*root.path).ends_with(".exe")) {
      app_dir_ = root_dir_;
    }
    tree_.objects.push_back(std::move(root));
    if (!tree_.objects[0].path) {
      auto& o = tree_.objects[0];
      o.name = with_dll_extension(o.name);
      machine_ = s_.machine ? s_.machine : 0x8664;
      is64_ = machine_ != 0x14c && machine_ != 0x1c4;
      resolve(0, -1);
      if (tree_.objects[0].missing) {
        finish();
        return std::move(tree_);
      }
    } else {
      auto pe = parse(*tree_.objects[0].path);
      if (!pe) return std::unexpected(pe.error());
      if (!*pe) return fail(fmt::format("{}: not a PE file (DLL or EXE)", target));
      machine_ = s_.machine ? s_.machine : (*pe)->machine;
      is64_ = s_.machine ? (machine_ != 0x14c && machine_ != 0x1c4) : (*pe)->is_64;
      accept(0, **pe);
      check_machine(0, -1);
    }
    // Breadth-first over import tables (then delay-load tables and companions).
    std::deque<int> queue{0};
    while (!queue.empty() && tree_.objects.size() < kMaxObjects) {
      const int i = queue.front();
      queue.pop_front();
      if (!obj(i).pe || obj(i).win_error == 193) continue;
      struct Want {
        std::string name;
        bool delay;
        std::string note;
      };
      std::vector<Want> wanted;
      std::set<std::string> seen;
      auto want = [&](const std::string& n, bool delay, const std::string& note) {
        const std::string l = to_lower(with_dll_extension(n));
        if (l == to_lower(path_basename(obj(i).path.value_or(obj(i).name)))) return;
        if (seen.insert(l).second) wanted.push_back({n, delay, note});
      };
      for (const auto& imp : obj(i).pe->imports) want(imp.dll, false, "");
      for (const auto& imp : obj(i).pe->delay_imports) want(imp.dll, true, "");
      if (s_.companions) {
        for (const auto& c : companions_of(i)) want(c.name, false, c.note);
      }
      for (auto& w : wanted) {
        LoadedObject o;
        o.name = with_dll_extension(w.name);
        o.parent = i;
        o.delay_load = w.delay;
        o.companion = !w.note.empty();
        o.companion_note = w.note;
        tree_.objects.push_back(std::move(o));
        const int c = static_cast<int>(tree_.objects.size() - 1);
        obj(i).children.push_back(c);
        resolve(c, i);
        if (obj(c).pe && obj(c).same_as == -1 && obj(c).win_error == 0) queue.push_back(c);
      }
    }
    tree_.object_limit = kMaxObjects;
    tree_.truncated = !queue.empty();
    finish();
    return std::move(tree_);
  }

 private:
  LoadedObject& obj(int i) { return tree_.objects[static_cast<size_t>(i)]; }
  const LoadedObject& obj(int i) const { return tree_.objects[static_cast<size_t>(i)]; }

  void finish() {
    if (s_.check_imports) check_imports();
    check_families();
    for (auto& o : tree_.objects) {
      if (o.severity == LoadSeverity::error) ++tree_.errors;
      if (o.severity == LoadSeverity::warning) ++tree_.warnings;
    }
  }

  std::string display(int i) const {
    const auto& o = obj(i);
    return o.path ? path_basename(*o.path) : o.name;
  }

  // Parsed PE files by logical path (nullopt: not a PE file).
  Result<std::optional<PeInfo>> parse(const std::string& path) {
    auto it = pe_cache_.find(path);
    if (it != pe_cache_.end()) return it->second;
    auto m = fs_.map_file(path);
    if (!m)
      return fail(
          fmt::format("{}: cannot read: {}", windows_display_path(path), m.error().message));
    auto pe = parse_pe((*m)->bytes(), windows_display_path(path));
    if (!pe) return std::unexpected(pe.error());
    if (*pe && s_.companions && to_lower(path_basename(path)).starts_with("cudnn")) {
      bytes_refs_[path] = windows_companions_in_bytes((*m)->bytes());
    }
    pe_cache_[path] = *pe;
    return *pe;
  }

  // A file named `name` (case-insensitive) in `dir`: its logical path.
  std::optional<std::string> find_in(const std::string& dir, const std::string& name) {
    auto it = dir_cache_.find(dir);
    if (it == dir_cache_.end()) {
      std::map<std::string, std::string> entries;
      if (auto list = fs_.list_dir(dir)) {
        for (const auto& e : *list) entries.emplace(to_lower(e.name), e.name);
      }
      it = dir_cache_.emplace(dir, std::move(entries)).first;
    }
    auto f = it->second.find(to_lower(name));
    if (f == it->second.end()) return std::nullopt;
    const std::string p = path_join(dir, f->second);
    if (!fs_.is_file(p)) return std::nullopt;
    return p;
  }

  bool searches_path() const { return (s_.flags & kSearchFlags) == 0; }

  std::vector<SearchDir> search_list(int requester) const {
    std::vector<SearchDir> dirs;
    const bool root_has_dir = !root_dir_.empty() && requester >= 0;
    const std::string root_name = obj(0).path ? path_basename(*obj(0).path) : obj(0).name;
    if (s_.flags & kSearchFlags) {
      const bool defaults = s_.flags & kLoadLibrarySearchDefaultDirs;
      if ((s_.flags & kLoadLibrarySearchDllLoadDir) && root_has_dir) {
        dirs.push_back({SearchRule::dll_load_dir, root_dir_,
                        "LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR: the directory of " + root_name});
      }
      if ((defaults || (s_.flags & kLoadLibrarySearchApplicationDir)) && !app_dir_.empty()) {
        dirs.push_back({SearchRule::app_dir, app_dir_, "application directory"});
      }
      if (defaults || (s_.flags & kLoadLibrarySearchUserDirs)) {
        for (const auto& d : s_.user_dirs) {
          dirs.push_back({SearchRule::user_dirs, windows_logical_path(d),
                          s_.python_extension ? "os.add_dll_directory" : "AddDllDirectory"});
        }
        if (!s_.dll_directory.empty()) {
          dirs.push_back(
              {SearchRule::user_dirs, windows_logical_path(s_.dll_directory), "SetDllDirectory"});
        }
      }
      if (defaults || (s_.flags & kLoadLibrarySearchSystem32)) {
        dirs.push_back({SearchRule::system32, system32_, "System32"});
      }
      return dirs;
    }
    if ((s_.flags & kLoadWithAlteredSearchPath) && root_has_dir) {
      dirs.push_back({SearchRule::dll_load_dir, root_dir_,
                      "LOAD_WITH_ALTERED_SEARCH_PATH: the directory of " + root_name});
    } else if (!app_dir_.empty()) {
      dirs.push_back({SearchRule::app_dir, app_dir_, "application directory"});
    }
    const std::string cwd = windows_logical_path(s_.current_dir);
    if (!s_.dll_directory.empty()) {
      dirs.push_back(
          {SearchRule::user_dirs, windows_logical_path(s_.dll_directory), "SetDllDirectory"});
    } else if (!s_.safe_dll_search && !cwd.empty()) {
      dirs.push_back({SearchRule::current_dir, cwd, "current directory (SafeDllSearchMode off)"});
    }
    dirs.push_back({SearchRule::system32, system32_, "System32"});
    dirs.push_back({SearchRule::system16, path_join(windows_dir_, "System"), "System"});
    dirs.push_back({SearchRule::windows_dir, windows_dir_, "Windows directory"});
    if (s_.safe_dll_search && s_.dll_directory.empty() && !cwd.empty()) {
      dirs.push_back({SearchRule::current_dir, cwd, "current directory"});
    }
    for (const auto& p : s_.path) {
      if (!trim(p).empty()) dirs.push_back({SearchRule::path_env, windows_logical_path(p), "PATH"});
    }
    return dirs;
  }

  bool machine_ok(const PeInfo& pe) const { return pe.machine == machine_ && pe.is_64 == is64_; }

  std::string wanted_bitness() const {
    return fmt::format("{} ({})", is64_ ? "PE32+" : "PE32", pe_machine_name(machine_));
  }

  // A cuDNN DLL whose version resource names no release of its major (none at all, or a
  // build number): the header beside it says which, as the cuDNN probe reads it. What it
  // loads at run time depends on it (zlibwapi.dll from 8.3 to 8.9).
  void cudnn_version_from_header(LoadedObject& o) const {
    const std::string base = to_lower(path_basename(*o.path));  // cudnn_ops_infer64_8.dll
    if (nvidia_dll_kind(base) != "cudnn" || !base.ends_with(".dll")) return;
    const size_t sep = base.rfind('_');
    auto major = parse_int(sep == std::string::npos
                               ? std::string_view()
                               : std::string_view(base).substr(sep + 1, base.size() - sep - 5));
    if (!major || *major <= 0) return;
    if (auto v = Version::parse(o.version); v && v->major() == *major) return;
    if (auto h = windows_cudnn_header(fs_, path_dirname(*o.path), static_cast<int>(*major))) {
      o.version = h->first.str();
    }
  }

  void accept(int i, const PeInfo& pe) {
    auto& o = obj(i);
    o.pe = pe;
    o.real_path = o.path.value_or("");
    if (pe.file_version) o.version = *pe.file_version;
    if (o.path) cudnn_version_from_header(o);
    loaded_[to_lower(path_basename(o.name))] = i;
    if (o.path) loaded_[to_lower(path_basename(*o.path))] = i;
  }

  // 193: the chosen file is of another machine (or not a PE image at all).
  void check_machine(int i, int requester) {
    auto& o = obj(i);
    if (!o.pe || machine_ok(*o.pe)) return;
    o.wrong_class = true;
    o.win_error = 193;
    o.severity = LoadSeverity::error;
    const std::string who =
        requester >= 0 ? fmt::format(" (needed by {})", display(requester)) : std::string();
    std::string fix;
    for (const auto& c : o.shadowed) {
      if (c.note.empty()) {
        fix = fmt::format(
            "; a {} copy exists in {} but {} comes first in the search order: "
            "remove or rename the wrong copy, or put {} first",
            wanted_bitness(), windows_display_path(path_dirname(c.path)),
            windows_display_path(path_dirname(*o.path)),
            windows_display_path(path_dirname(c.path)));
        break;
      }
    }
    if (fix.empty()) fix = fmt::format(". Install the {} build of it", wanted_bitness());
    o.problem = fmt::format(
        "{}{}: {} is {}, the process is {} (LoadLibrary error 193, \"%1 is not a valid Win32 "
        "application\"; 0xc000007b at start-up){}",
        o.name, who, windows_display_path(*o.path), bitness(*o.pe), wanted_bitness(), fix);
  }

  void resolve(int i, int requester) {
    auto& o = obj(i);
    const std::string lower = to_lower(path_basename(o.name));
    if (!has_separator(o.name)) {
      if (auto it = loaded_.find(lower); it != loaded_.end()) {
        o.rule = SearchRule::already_loaded;
        o.same_as = it->second;
        o.path = obj(it->second).path;
        o.rule_detail = "already loaded as " + display(it->second);
        return;
      }
      for (const auto& p : s_.preloaded) {
        if (to_lower(path_basename(windows_logical_path(p))) == lower) {
          o.rule = SearchRule::already_loaded;
          o.rule_detail = "already loaded in the process";
          o.path = has_separator(p) ? windows_logical_path(p) : p;
          o.same_as = -2;
          return;
        }
      }
      if (is_api_set(lower)) {
        o.rule = SearchRule::api_set;
        o.rule_detail = "API set: mapped to its host DLL by the loader's API set schema";
        return;
      }
      if (known_.count(lower)) {
        o.rule = SearchRule::known_dll;
        o.rule_detail = "KnownDLLs: always the System32 copy";
        o.path = find_in(system32_, o.name);
        loaded_[lower] = i;
        return;
      }
    }
    std::vector<SearchDir> dirs;
    if (has_separator(o.name)) {
      dirs.push_back({SearchRule::path, "", "the name is a path"});
    } else {
      dirs = search_list(requester);
    }
    std::set<std::string> seen;
    for (const auto& d : dirs) {
      std::optional<std::string> p;
      if (d.rule == SearchRule::path) {
        const std::string l = windows_logical_path(o.name);
        o.searched.push_back(windows_display_path(l));
        if (fs_.is_file(l)) p = l;
      } else {
        o.searched.push_back(windows_display_path(d.dir) + "  (" + d.detail + ")");
        p = find_in(d.dir, o.name);
      }
      if (!p) continue;
      auto rp = fs_.real_path(*p);
      if (!seen.insert(to_lower(rp ? *rp : *p)).second) continue;
      auto pe = parse(*p);
      std::string note;
      if (!pe) {
        note = "corrupt: " + pe.error().message;
      } else if (!*pe) {
        note = "not a PE image";
      } else if (!machine_ok(**pe)) {
        note = bitness(**pe);
      }
      if (!o.path) {
        o.path = *p;
        o.rule = d.rule;
        o.rule_detail = d.detail;
        if (pe && *pe) {
          accept(i, **pe);
        } else {
          o.win_error = 193;
          o.severity = LoadSeverity::error;
          o.problem = fmt::format("{}: {} is {} (LoadLibrary error 193)", o.name,
                                  windows_display_path(*p), note);
          loaded_[lower] = i;
        }
      } else {
        obj(i).shadowed.push_back({*p, d.rule, note});
      }
    }
    if (obj(i).path) {
      check_machine(i, requester);
      return;
    }
    // Asked for again after a miss: one error, the second request points at the first.
    if (auto it = missing_.find(lower); it != missing_.end()) {
      obj(i).missing = true;
      obj(i).same_as = it->second;
      obj(i).rule_detail = "not found (see " + obj(it->second).name + " above)";
      return;
    }
    missing_[lower] = i;
    not_found(i, requester);
  }

  bool was_searched(const LoadedObject& o, const std::string& dir) const {
    const std::string d = windows_display_path(dir) + "  (";
    return std::any_of(o.searched.begin(), o.searched.end(),
                       [&](const std::string& s) { return s.starts_with(d); });
  }

  bool on_path(const std::string& dir) const {
    const std::string l = to_lower(dir);
    return std::any_of(s_.path.begin(), s_.path.end(), [&](const std::string& p) {
      return to_lower(windows_logical_path(p)) == l;
    });
  }

  void not_found(int i, int requester) {
    auto& o = obj(i);
    o.missing = true;
    o.rule = SearchRule::not_found;
    o.win_error = 126;
    const std::string who =
        requester >= 0 ? fmt::format(" (needed by {})", display(requester)) : std::string();
    o.problem = fmt::format(
        "{}{} was not found on the DLL search path (LoadLibrary error 126, \"The specified "
        "module could not be found\")",
        o.name, who);
    // A copy elsewhere: the directories of the DLLs found, the hint dirs, PATH, user dirs.
    std::vector<std::string> look;
    for (const auto& h : s_.hint_dirs) look.push_back(windows_logical_path(h));
    for (const auto& x : tree_.objects) {
      if (x.path && x.same_as == -1 && x.rule != SearchRule::known_dll) {
        look.push_back(path_dirname(*x.path));
      }
    }
    for (const auto& p : s_.path) look.push_back(windows_logical_path(p));
    for (const auto& u : s_.user_dirs) look.push_back(windows_logical_path(u));
    std::string copy;
    std::set<std::string> done;
    for (const auto& d : look) {
      if (d.empty() || !done.insert(to_lower(d)).second || was_searched(o, d)) continue;
      auto p = find_in(d, o.name);
      if (!p) continue;
      auto pe = parse(*p);
      if (pe && *pe && machine_ok(**pe)) {
        copy = d;
        break;
      }
    }
    const std::string requester_dir =
        requester >= 0 && obj(requester).path ? path_dirname(*obj(requester).path) : "";
    if (!copy.empty()) {
      const std::string y = windows_display_path(copy);
      if (!searches_path() && on_path(copy)) {
        o.problem += fmt::format(
            "; a copy exists in {}, which is on PATH, but this load does not search PATH ({}): "
            "call os.add_dll_directory(r\"{}\") before the import (AddDllDirectory in C/C++)",
            y,
            s_.python_extension ? "Python 3.8 and later load extension modules and ctypes DLLs "
                                  "with LOAD_LIBRARY_SEARCH_DEFAULT_DIRS"
                                : "LoadLibraryEx with LOAD_LIBRARY_SEARCH_* flags",
            y);
      } else if (!searches_path()) {
        o.problem += fmt::format(
            "; a copy exists in {}, which is not searched: call os.add_dll_directory(r\"{}\") "
            "before the import (AddDllDirectory in C/C++)",
            y, y);
      } else {
        o.problem += fmt::format(
            "; a copy exists in {}, which is not on PATH: add it to PATH (set PATH={};%PATH%) "
            "or copy the DLL next to {}",
            y, y, requester >= 0 ? display(requester) : "the program");
      }
    } else {
      o.problem += searches_path() ? ". Install it, or add the directory that holds it to PATH"
                                   : ". Install it, or add the directory that holds it with "
                                     "os.add_dll_directory / AddDllDirectory";
      (void)requester_dir;
    }
    o.severity = LoadSeverity::error;
    if (to_lower(o.name) == "nvcuda.dll") {
      o.severity = LoadSeverity::warning;
      o.problem += " (no NVIDIA driver installed? CUDA calls will fail at run time)";
    } else if (o.delay_load) {
      o.severity = LoadSeverity::warning;
      o.problem += " (a delay-load import: the load succeeds, the first call into it fails)";
    }
  }

  std::vector<RuntimeCompanion> companions_of(int i) {
    const auto& o = obj(i);
    const std::string base = path_basename(o.path.value_or(o.name));
    auto out = nvidia_runtime_companions(kb_, base, Os::windows, o.version);
    if (o.path) {
      if (auto it = bytes_refs_.find(*o.path); it != bytes_refs_.end()) {
        out.insert(out.end(), it->second.begin(), it->second.end());
      }
    }
    if (!driver_added_ && loads_cuda_driver(base, Os::windows)) {
      driver_added_ = true;
      out.push_back(cuda_driver_companion(base, Os::windows));
    }
    return out;
  }

  // The object index a DLL name resolves to (following "already loaded").
  std::optional<int> target_of(int requester, const std::string& dll) const {
    const std::string l = to_lower(with_dll_extension(dll));
    for (int c : obj(requester).children) {
      if (to_lower(obj(c).name) != l) continue;
      int t = c;
      if (obj(t).same_as >= 0) t = obj(t).same_as;
      return t;
    }
    return std::nullopt;
  }

  // Whether `fn` ("name" or "#ordinal") is exported by the PE `pe` (following
  // forwarders); else the reason.
  std::optional<std::string> missing_export(const PeInfo& pe, const std::string& dll_name,
                                            const std::string& fn, int depth) {
    const PeExport* e = nullptr;
    if (fn.starts_with("#")) {
      auto n = parse_int(std::string_view(fn).substr(1));
      for (const auto& x : pe.exports) {
        if (n && static_cast<long long>(x.ordinal) == *n) e = &x;
      }
    } else {
      for (const auto& x : pe.exports) {
        if (x.name == fn) e = &x;
      }
    }
    if (!e) {
      return fmt::format("{} ({})", fn.starts_with("#") ? "ordinal " + fn.substr(1) : fn, dll_name);
    }
    if (!e->forwarder || depth >= kMaxForwardDepth) return std::nullopt;
    const std::string& f = *e->forwarder;
    const size_t dot = f.rfind('.');
    if (dot == std::string::npos || dot == 0) return std::nullopt;
    const std::string target = with_dll_extension(f.substr(0, dot));
    const std::string fwd_fn = f.substr(dot + 1);
    const std::string l = to_lower(target);
    if (is_api_set(l) || known_.count(l)) return std::nullopt;
    std::optional<std::string> path;
    if (auto it = loaded_.find(l); it != loaded_.end()) {
      path = obj(it->second).path;
    } else {
      for (const auto& d : search_list(0)) {
        if ((path = find_in(d.dir, target))) break;
      }
    }
    if (!path) {
      return fmt::format("{} ({}: forwarded to {}, and {} is not found)", fn, dll_name, f, target);
    }
    auto pe2 = parse(*path);
    if (!pe2 || !*pe2) return std::nullopt;
    if (auto why = missing_export(**pe2, path_basename(*path), fwd_fn, depth + 1)) {
      return fmt::format("{} ({}: forwarded to {}, which is missing: {})", fn, dll_name, f, *why);
    }
    return std::nullopt;
  }

  void check_imports() {
    for (size_t i = 0; i < tree_.objects.size(); ++i) {
      auto& o = tree_.objects[i];
      if (!o.pe || o.same_as != -1) continue;
      std::vector<std::string> missing;
      std::vector<std::pair<std::string, std::string>> missing_imports;
      for (const auto* list : {&o.pe->imports, &o.pe->delay_imports}) {
        for (const auto& imp : *list) {
          auto t = target_of(static_cast<int>(i), imp.dll);
          if (!t) continue;
          const auto& to = obj(*t);
          if (!to.pe || to.win_error != 0 || to.rule == SearchRule::known_dll) continue;
          for (const auto& fn : imp.functions) {
            if (auto why = missing_export(*to.pe, path_basename(*to.path), fn, 0)) {
              missing.push_back(*why);
              if (list == &o.pe->imports)  // delay-loaded ones fail at the first call
                missing_imports.emplace_back(fn.starts_with("#") ? "ordinal " + fn.substr(1) : fn,
                                             path_basename(*to.path));
            }
          }
        }
      }
      auto& o2 = tree_.objects[i];
      if (missing.empty()) continue;
      o2.missing_symbols = missing;
      o2.missing_imports = std::move(missing_imports);
      std::vector<std::string> shown(
          missing.begin(),
          missing.begin() + static_cast<ptrdiff_t>(std::min(missing.size(), kMaxListed)));
      add_problem(
          o2,
          fmt::format("{} imports {} function(s) the chosen DLLs do not export: {}{} "
                      "(LoadLibrary error 127, \"The specified procedure could not be "
                      "found\"; a dependency is an older or different build than the one {} "
                      "was linked against)",
                      display(static_cast<int>(i)), missing.size(), join(shown, ", "),
                      missing.size() > shown.size() ? ", ..." : "", display(static_cast<int>(i))));
      if (o2.win_error == 0) o2.win_error = 127;
    }
  }

  void check_families() {
    std::map<std::string, std::map<std::string, std::vector<int>>> fam;
    for (size_t i = 0; i < tree_.objects.size(); ++i) {
      const auto& o = tree_.objects[i];
      if (!o.pe || o.same_as != -1 || o.version.empty() || !o.path) continue;
      const std::string b = to_lower(path_basename(*o.path));
      const std::string f = b.starts_with("cudnn")    ? "cuDNN"
                            : b.starts_with("cublas") ? "cuBLAS"
                                                      : "";
      if (!f.empty()) fam[f][o.version].push_back(static_cast<int>(i));
    }
    for (const auto& [family, versions] : fam) {
      if (versions.size() < 2) continue;
      std::vector<std::string> parts;
      for (const auto& [v, objs] : versions) {
        for (int i : objs)
          parts.push_back(fmt::format("{} {}", windows_display_path(*obj(i).path), v));
      }
      const std::string text = fmt::format(
          "{} DLLs of different file versions are mixed: {} (typically LoadLibrary error 127 or "
          "a crash at the first call). Install one complete release and remove the other copies "
          "from the search path",
          family, join(parts, "; "));
      // The version of the family's first DLL in load order (the main one) is
      // the reference: the DLLs of other versions carry the error, once each.
      int first = -1;
      for (const auto& [v, objs] : versions) {
        for (int i : objs) first = first < 0 ? i : std::min(first, i);
      }
      const std::string ref = obj(first).version;
      for (const auto& [v, objs] : versions) {
        for (int i : objs) {
          obj(i).family_mismatch = text;
          if (v == ref) continue;
          add_problem(obj(i), fmt::format("{} is {} while {} is {}: {}", display(i), v,
                                          display(first), ref, text));
          if (obj(i).win_error == 0) obj(i).win_error = 127;
        }
      }
    }
  }

  static void add_problem(LoadedObject& o, const std::string& text) {
    o.problem = o.problem.empty() ? text : o.problem + "; " + text;
    o.severity = LoadSeverity::error;
  }

  const FileSystem& fs_;
  const Kb& kb_;
  const WindowsLoaderSettings& s_;
  LoadTree tree_;
  std::set<std::string> known_;
  std::string windows_dir_, system32_, root_dir_, app_dir_;
  uint16_t machine_ = 0x8664;
  bool is64_ = true;
  bool driver_added_ = false;
  std::map<std::string, int> loaded_;   // lower-case module name -> object
  std::map<std::string, int> missing_;  // lower-case name -> the first object that missed it
  std::map<std::string, std::map<std::string, std::string>> dir_cache_;
  std::map<std::string, std::optional<PeInfo>> pe_cache_;
  std::map<std::string, std::vector<RuntimeCompanion>> bytes_refs_;
};

}  // namespace

const std::vector<std::string>& default_known_dlls() {
  // HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\KnownDLLs of Windows 10/11,
  // plus ntdll.dll (always mapped first) and kernelbase.dll (always loaded with kernel32).
  static const std::vector<std::string> list = {
      "advapi32.dll", "clbcatq.dll",    "combase.dll",  "comdlg32.dll", "coml2.dll",
      "difxapi.dll",  "gdi32.dll",      "gdiplus.dll",  "imagehlp.dll", "imm32.dll",
      "kernel32.dll", "kernelbase.dll", "msctf.dll",    "msvcrt.dll",   "normaliz.dll",
      "nsi.dll",      "ntdll.dll",      "ole32.dll",    "oleaut32.dll", "psapi.dll",
      "rpcrt4.dll",   "sechost.dll",    "setupapi.dll", "shcore.dll",   "shell32.dll",
      "shlwapi.dll",  "user32.dll",     "wldap32.dll",  "wow64.dll",    "wow64win.dll",
      "ws2_32.dll"};
  return list;
}

std::string windows_logical_path(std::string_view w) {
  std::string s(w);
  std::replace(s.begin(), s.end(), '\\', '/');
  if (s.starts_with("//?/")) s = s.substr(4);
  if (s.size() >= 2 && s[1] == ':' && std::isalpha(static_cast<unsigned char>(s[0]))) {
    const char drive = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
    std::string rest = s.substr(2);
    if (rest.empty() || rest[0] != '/') rest = "/" + rest;
    s = drive == 'C' ? rest : fmt::format("/{}:{}", drive, rest);
  }
  if (s.empty()) return s;
  std::string n = path_normalize(s);
  while (n.size() > 1 && n.ends_with("/")) n.pop_back();
  return n;
}

std::string windows_display_path(std::string_view logical) {
  std::string s(logical);
  if (s.empty() || s[0] != '/') {
    std::replace(s.begin(), s.end(), '/', '\\');
    return s;
  }
  std::string out;
  if (s.size() >= 3 && std::isalpha(static_cast<unsigned char>(s[1])) && s[2] == ':') {
    out = s.substr(1);  // "/D:/x" -> "D:/x"
  } else {
    out = "C:" + s;
  }
  std::replace(out.begin(), out.end(), '/', '\\');
  return out;
}

Result<LoadTree> model_windows_load(const FileSystem& fs, const Kb& kb,
                                    const std::string& file_or_name,
                                    const WindowsLoaderSettings& settings) {
  WinModeler m(fs, kb, settings);
  return m.run(file_or_name);
}

}  // namespace dlenv
