// `dlenv deps` and `dlenv load` (see deps.h).
#include "cli/deps.h"

#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <ostream>

#include "binfmt/elf.h"
#include "cli/cli.h"
#include "cli/process_exit.h"
#include "cli/setup.h"
#include "kb/kb.h"
#include "platform/dynamic_library.h"
#include "platform/env.h"
#include "platform/filesystem.h"
#include "probe/loader_model.h"
#include "probe/loader_model_win.h"
#include "probe/probe.h"
#include "util/safe_text.h"
#include "util/strings.h"

namespace dlenv {

namespace {

std::vector<std::string> host_hwcaps() {
  std::vector<std::string> out;
#if defined(__x86_64__)
  __builtin_cpu_init();
  const bool v2 = __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("popcnt");
  const bool v3 = v2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2") &&
                  __builtin_cpu_supports("fma");
  const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  if (v4) out.push_back("x86-64-v4");
  if (v3) out.push_back("x86-64-v3");
  if (v2) out.push_back("x86-64-v2");
#endif
  return out;
}

// --root, --env-file and the knowledge base as every system-reading command opens them
// (cli/setup.h); the OS is picked per target (pick_os).
Result<SystemView> open_deps_view(const std::string& root, const std::string& env_file) {
  return open_system_view(root, "", env_file, "");
}

LinuxLoaderSettings settings_for(const SystemView& s, bool rooted) {
  ProbeContext ctx{*s.fs, *s.env, *s.kb, Os::linux, !rooted, ""};
  LoaderConfig lc = read_loader_config(ctx);
  LinuxLoaderSettings ls;
  ls.ld_library_path = lc.ld_library_path;
  ls.cache = std::move(lc.cache);
  ls.conf_dirs = lc.conf_dirs;
  if (!rooted) ls.hwcaps = host_hwcaps();
  return ls;
}

// Whether `target` is a Windows module: a PE file, or a .dll/.exe/.pyd name.
bool looks_windows(const FileSystem& fs, const std::string& target) {
  const std::string l = to_lower(target);
  if (l.ends_with(".dll") || l.ends_with(".exe") || l.ends_with(".pyd")) return true;
  if (l.size() >= 2 && l[1] == ':') return true;
  if (target.find('/') == std::string::npos) return false;
  auto m = fs.map_file(target);  // a mapping: only the first two bytes are touched
  if (!m) return false;
  const ByteView b = (*m)->bytes();
  return b.size() >= 2 && b.data()[0] == 'M' && b.data()[1] == 'Z';
}

// --dlopen-from FILE: the caller's own search directories, read from its dynamic section.
Result<LinuxLoaderSettings::DlopenCaller> dlopen_caller(const FileSystem& fs,
                                                        const std::string& file,
                                                        const std::string& target) {
  if (target.find('/') != std::string::npos) {
    return fail(
        fmt::format("--dlopen-from {}: {} is a path, which dlopen opens as is; give a library name "
                    "(e.g. libcudnn.so.9) to have {}'s DT_RPATH/DT_RUNPATH searched",
                    file, target, path_basename(file)));
  }
  auto m = fs.map_file(file);
  if (!m) return fail(fmt::format("--dlopen-from {}: cannot read: {}", file, m.error().message));
  auto e = parse_elf((*m)->bytes(), file);
  if (!e) return fail(fmt::format("--dlopen-from {}: {}", file, e.error().message));
  if (!*e) return fail(fmt::format("--dlopen-from {}: not an ELF file", file));
  return LinuxLoaderSettings::DlopenCaller{file, (*e)->rpath, (*e)->runpath};
}

Result<Os> pick_os(const std::string& os, const FileSystem& fs, const std::string& target) {
  if (os == "linux") return Os::linux;
  if (os == "windows") return Os::windows;
  if (!os.empty()) return fail("--os " + os + ": give linux or windows");
  return looks_windows(fs, target) ? Os::windows : Os::linux;
}

WindowsLoaderSettings windows_settings_for(const SystemView& s, const DepsOptions& o) {
  WindowsLoaderSettings ws;
  if (auto root = s.env->get("SystemRoot")) ws.windows_dir = *root;
  if (auto path = s.env->get("PATH")) {
    for (const auto& p : split(*path, ';')) ws.path.push_back(p);
  }
  for (const auto& [k, v] : s.env->all()) {
    if (k == "CUDA_PATH" || k.starts_with("CUDA_PATH_V")) {
      ws.hint_dirs.push_back(path_join(windows_logical_path(v), "bin"));
    }
  }
  ws.app_dir = o.app_dir;
  ws.current_dir = o.cwd;
  ws.user_dirs = o.dll_dirs;
  if (o.python_ext) {
    ws.flags = kLoadLibrarySearchDefaultDirs | kLoadLibrarySearchDllLoadDir;
    ws.python_extension = true;
  } else if (o.altered_search_path) {
    ws.flags = kLoadWithAlteredSearchPath;
  }
  return ws;
}

std::string severity_name(LoadSeverity s) {
  return s == LoadSeverity::error ? "error" : s == LoadSeverity::warning ? "warning" : "ok";
}

// Paths as the user knows them: C:\... for the Windows model.
struct PathStyle {
  bool windows = false;
  std::string operator()(const std::string& p) const {
    return windows ? windows_display_path(p) : p;
  }
};

nlohmann::json candidates_json(const std::vector<LoadCandidate>& cs, const PathStyle& ps) {
  auto a = nlohmann::json::array();
  for (const auto& c : cs) {
    a.push_back({{"path", ps(c.path)}, {"rule", search_rule_name(c.rule)}, {"note", c.note}});
  }
  return a;
}

nlohmann::json tree_json(const std::string& target, const LoadTree& t, const PathStyle& ps) {
  nlohmann::json j;
  j["schema"] = "dlenv.deps/1";
  j["target"] = target;
  j["os"] = ps.windows ? "windows" : "linux";
  j["errors"] = t.errors;
  j["warnings"] = t.warnings;
  if (t.truncated) {
    j["truncated"] = true;
    j["object_limit"] = t.object_limit;
  }
  if (!t.timing_ms.empty()) j["timing_ms"] = t.timing_ms;
  if (!t.trace.empty()) {
    auto a = nlohmann::json::array();
    for (const auto& s : t.trace) {
      a.push_back(
          {{"what", s.what}, {"thread", s.thread}, {"start_ms", s.start_ms}, {"end_ms", s.end_ms}});
    }
    j["trace"] = std::move(a);
  }
  auto objs = nlohmann::json::array();
  for (size_t i = 0; i < t.objects.size(); ++i) {
    const auto& o = t.objects[i];
    nlohmann::json x;
    x["index"] = i;
    x["name"] = o.name;
    x["parent"] = o.parent;
    x["companion"] = o.companion;
    if (o.companion) x["companion_note"] = o.companion_note;
    x["rule"] = search_rule_name(o.rule);
    x["rule_detail"] = o.rule_detail;
    x["path"] = o.path ? nlohmann::json(ps(*o.path)) : nlohmann::json(nullptr);
    if (!o.real_path.empty()) x["real_path"] = ps(o.real_path);
    if (o.same_as >= 0) x["same_as"] = o.same_as;
    if (o.elf) {
      x["soname"] = o.elf->soname ? nlohmann::json(*o.elf->soname) : nlohmann::json(nullptr);
      x["class"] = o.elf->is_64 ? "ELF64" : "ELF32";
      x["machine"] = elf_machine_name(o.elf->machine);
      if (o.elf->rpath) x["rpath"] = *o.elf->rpath;
      if (o.elf->runpath) x["runpath"] = *o.elf->runpath;
    }
    if (o.pe) {
      x["class"] = o.pe->is_64 ? "PE32+" : "PE32";
      x["machine"] = pe_machine_name(o.pe->machine);
      if (o.pe->file_version) x["file_version"] = *o.pe->file_version;
    }
    if (ps.windows) {
      x["delay_load"] = o.delay_load;
      x["win_error"] = o.win_error;
    }
    if (!o.version.empty()) x["version"] = o.version;
    x["shadowed"] = candidates_json(o.shadowed, ps);
    x["rejected"] = candidates_json(o.rejected, ps);
    if (o.missing) x["searched"] = o.searched;
    x["missing"] = o.missing;
    x["wrong_class"] = o.wrong_class;
    x["missing_symbols"] = o.missing_symbols;
    x["missing_versions"] = o.missing_versions;
    if (!o.family_mismatch.empty()) x["family_mismatch"] = o.family_mismatch;
    x["severity"] = severity_name(o.severity);
    if (!o.problem.empty()) x["problem"] = o.problem;
    x["children"] = o.children;
    objs.push_back(std::move(x));
  }
  j["objects"] = std::move(objs);
  return j;
}

std::string object_line(const LoadedObject& o, const PathStyle& ps) {
  std::string s = o.name;
  if (o.same_as != -1 && o.missing) return s + "  (not found: see above)";
  if (o.same_as != -1) {
    return s + "  (already loaded" + (o.path ? ": " + ps(*o.path) : std::string()) + ")";
  }
  const std::string rule =
      o.rule_detail.empty() ? std::string(search_rule_name(o.rule)) : o.rule_detail;
  if (o.missing) {
    s += o.wrong_class ? "  => WRONG CLASS" : "  => NOT FOUND";
    if (o.win_error) s += fmt::format(" ({})", o.win_error);
  } else if (o.path) {
    if (*o.path != o.name) s += "  => " + ps(*o.path);
    s += "  [" + rule + "]";
    if (o.pe && o.win_error == 193) s += "  WRONG BITNESS (193)";
  } else {
    s += "  [" + rule + "]";
  }
  if (!o.version.empty()) s += "  v" + o.version;
  if (o.delay_load) s += "  (delay-load)";
  if (o.companion) s += "  (run-time companion)";
  if (o.win_error == 127) {
    s += "  ! 127";
  } else if (o.severity == LoadSeverity::error && !o.missing && o.win_error != 193) {
    s += "  !";
  }
  return s;
}

void print_details(std::ostream& out, const LoadedObject& o, const std::string& indent,
                   const PathStyle& ps) {
  for (const auto& c : o.shadowed) {
    out << indent << "shadows " << ps(c.path) << "  (" << search_rule_name(c.rule)
        << (c.note.empty() ? "" : ", " + c.note) << ")\n";
  }
  for (const auto& c : o.rejected) {
    out << indent << "skipped " << ps(c.path) << ": " << c.note << "\n";
  }
}

void print_tree(std::ostream& out, const LoadTree& t, int i, int depth, const PathStyle& ps) {
  const auto& o = t.objects[static_cast<size_t>(i)];
  const std::string indent(static_cast<size_t>(depth) * 4, ' ');
  out << indent << (depth > 0 ? "+-- " : "") << object_line(o, ps) << "\n";
  print_details(out, o, indent + (depth > 0 ? "      " : "  "), ps);
  // Children already loaded elsewhere in the tree (and, on Windows, API sets
  // and KnownDLLs): one line each kind, not one line per child.
  std::vector<std::string> again, system;
  for (int c : o.children) {
    const auto& ch = t.objects[static_cast<size_t>(c)];
    if (ch.same_as != -1 && ch.problem.empty() && !ch.missing) {
      again.push_back(ch.name);
    } else if ((ch.rule == SearchRule::api_set || ch.rule == SearchRule::known_dll) &&
               ch.problem.empty()) {
      system.push_back(ch.name);
    } else {
      print_tree(out, t, c, depth + 1, ps);
    }
  }
  const std::string sub(static_cast<size_t>(depth + 1) * 4, ' ');
  if (!system.empty()) out << sub << "+-- (KnownDLLs / API sets) " << join(system, ", ") << "\n";
  if (!again.empty()) out << sub << "+-- (already loaded) " << join(again, ", ") << "\n";
}

int render(const std::string& target, const LoadTree& t, bool flat, bool json, std::ostream& out,
           const PathStyle& ps) {
  if (json) {
    out << json_text(tree_json(target, t, ps), 2) << "\n";
  } else {
    if (flat) {
      for (const auto& o : t.objects) {
        if (o.same_as != -1) continue;
        out << object_line(o, ps) << "\n";
        print_details(out, o, "    ", ps);
      }
    } else {
      print_tree(out, t, 0, 0, ps);
    }
    size_t unique = 0, companions = 0;
    for (const auto& o : t.objects) {
      if (o.same_as == -1 && o.path) ++unique;
      if (o.companion && o.same_as == -1) ++companions;
    }
    out << fmt::format("\n{} objects ({} run-time companions), {} error(s), {} warning(s)\n",
                       unique, companions, t.errors, t.warnings);
    if (t.truncated) {
      out << fmt::format(
          "  [warning] stopped at {} objects (the limit): the dependency closure is larger and "
          "the objects past the limit are not listed\n",
          t.object_limit);
    }
    for (const auto& o : t.objects) {
      if (o.problem.empty()) continue;
      out << "  [" << severity_name(o.severity) << "] " << o.problem << "\n";
      if (o.missing) {
        out << "      searched:";
        if (o.searched.empty()) out << " nothing";
        out << "\n";
        for (const auto& s : o.searched) out << "        " << s << "\n";
      }
    }
    if (!t.trace.empty()) out << "\ntrace (ms from the walk's start, thread, work):\n";
    for (const auto& s : t.trace) {
      out << fmt::format("  {:8.3f} {:8.3f}  t{:<2} {}\n", s.start_ms, s.end_ms, s.thread, s.what);
    }
  }
  return t.errors > 0 ? kExitFindings : kExitOk;
}

}  // namespace

int run_deps(const DepsOptions& o, std::ostream& out, std::ostream& err) {
  if (o.target.empty()) {
    err << "dlenv deps: give a file (path) or a library name, e.g. `dlenv deps libcudnn.so.9`\n";
    return kExitUsage;
  }
  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  const auto t_setup = Clock::now();
  auto setup = open_deps_view(o.root, o.env_file);
  if (!setup) {
    err << "dlenv deps: " << setup.error().message << "\n";
    return kExitUsage;
  }
  const double setup_ms = ms_since(t_setup);
  auto os = pick_os(o.os, *setup->fs, o.target);
  if (!os) {
    err << "dlenv deps: " << os.error().message << "\n";
    return kExitUsage;
  }
  Result<LoadTree> tree = fail("");
  if (*os == Os::windows && !o.dlopen_from.empty()) {
    err << "dlenv deps: --dlopen-from is for the Linux loader model; on Windows give the "
           "caller's directories with --app-dir / --add-dll-dir\n";
    return kExitUsage;
  }
  if (*os == Os::windows) {
    tree = model_windows_load(*setup->fs, *setup->kb, o.target, windows_settings_for(*setup, o));
  } else {
    const auto t_config = Clock::now();
    auto settings = settings_for(*setup, !o.root.empty());
    settings.trace = o.trace;
    settings.keep_resources = true;  // see keep_until_exit below
    if (!o.dlopen_from.empty()) {
      auto caller = dlopen_caller(*setup->fs, o.dlopen_from, o.target);
      if (!caller) {
        err << "dlenv deps: " << caller.error().message << "\n";
        return kExitUsage;
      }
      settings.dlopen_caller = std::move(*caller);
    }
    const double config_ms = ms_since(t_config);
    const auto t_model = Clock::now();
    tree = model_linux_load(*setup->fs, *setup->kb, o.target, settings);
    const double model_ms = ms_since(t_model);
    if (tree) {
      tree->timing_ms["loader_config"] = config_ms;
      // After "total": the model's threads brought to rest (keep_resources), its files
      // still mapped for the process exit (cli/process_exit.h).
      if (auto t = tree->timing_ms.find("total"); t != tree->timing_ms.end()) {
        tree->timing_ms["teardown"] = std::max(0.0, model_ms - t->second);
      }
    }
  }
  if (!tree) {
    err << "dlenv deps: " << tree.error().message << "\n";
    return kExitUsage;
  }
  tree->timing_ms["setup"] = setup_ms;
  const int code = render(o.target, *tree, o.flat, o.json, out, PathStyle{*os == Os::windows});
  // The walk's threads and mappings: left to the process's exit when main allows it.
  keep_until_exit(std::move(tree->resources));
  return code;
}

std::vector<std::string> explain_windows_load_failure(const LoadTree& tree,
                                                      const std::string& target, int code) {
  std::vector<std::string> out;
  const PathStyle ps{true};
  switch (code) {
    case 126:
      out.push_back(
          "error 126 (ERROR_MOD_NOT_FOUND): the DLL or one of the DLLs it imports was not found");
      break;
    case 127:
      out.push_back(
          "error 127 (ERROR_PROC_NOT_FOUND): a DLL in the chain imports a function its "
          "dependency does not export (an older or different build was found first)");
      break;
    case 193:
      out.push_back(
          "error 193 (ERROR_BAD_EXE_FORMAT): a DLL in the chain is for another machine (32-bit "
          "vs 64-bit) or not a DLL at all");
      break;
    case 1114:
      out.push_back(
          "error 1114 (ERROR_DLL_INIT_FAILED): every DLL was found, but one's initialisation "
          "(DllMain) failed: typically an older Visual C++ runtime (msvcp140.dll / "
          "vcruntime140.dll) found first, or a CUDA DLL failing to start (driver too old)");
      break;
    default: break;
  }
  if (tree.objects.empty()) return out;
  const auto& root = tree.objects[0];
  std::vector<std::string> problems;
  for (const auto& o : tree.objects) {
    if (!o.problem.empty() && o.severity == LoadSeverity::error) problems.push_back(o.problem);
  }
  if (root.path && !root.missing) {
    const std::string rule =
        root.rule_detail.empty() ? std::string(search_rule_name(root.rule)) : root.rule_detail;
    std::string first =
        fmt::format("{} was found in {} ({})", target, ps(path_dirname(*root.path)), rule);
    if (root.problem.empty() && !problems.empty()) {
      first += ", but: " + problems[0];
      problems.erase(problems.begin());
    }
    out.push_back(first);
  }
  for (auto& p : problems) out.push_back(std::move(p));
  if (tree.errors == 0 && (code == 126 || code == 127 || code == 193)) {
    out.push_back(
        "the loader model finds every DLL of the import tables: the failing DLL is loaded at run "
        "time by the library itself, or the program changes the search path "
        "(SetDllDirectory/AddDllDirectory) in a way the model was not told (see --app-dir, "
        "--add-dll-dir, --python-ext)");
  }
  return out;
}

std::vector<std::string> windows_import_errors(const LoadTree& tree) {
  std::vector<std::string> out;
  for (const auto& ob : tree.objects) {
    if (ob.delay_load || ob.same_as != -1 || !ob.path) continue;
    const std::string who = path_basename(*ob.path);
    for (const auto& [fn, from] : ob.missing_imports) {
      out.push_back(fmt::format(
          "on Windows this load fails with error 127: {} imports {} from {}, which does not "
          "export it",
          who, fn, from));
    }
  }
  return out;
}

int run_load(const LoadOptions& o, std::ostream& out, std::ostream& err) {
  if (o.target.empty()) {
    err << "dlenv load: give a library name or path, e.g. `dlenv load libcudnn.so.9`\n";
    return kExitUsage;
  }
  Os os = this_host_os();
  if (o.os == "windows") {
    os = Os::windows;
  } else if (o.os == "linux") {
    os = Os::linux;
  } else if (!o.os.empty()) {
    err << "dlenv load: --os " << o.os << ": give linux or windows\n";
    return kExitUsage;
  }
  // Under --root or for the other OS: no real load, the model's explanation only.
  const bool model_only = !o.root.empty() || os != this_host_os();
  nlohmann::json j{{"schema", "dlenv.load/1"}, {"target", o.target}};
  std::string error_text;
  int load_error_code = 0;  // Windows: the failed LoadLibrary's GetLastError
  if (!model_only) {
    // The pre-check: the target and everything it needs, as the loader model finds them,
    // read by our own ELF parser first; a truncated or corrupt file is never loaded.
    std::optional<LiveProbeFailure> refused;
    // A path is checked alone first: a FIFO, a device or a directory is never read whole.
    if (o.target.find('/') != std::string::npos) {
      if (auto why = library_file_problem(o.target)) {
        refused = LiveProbeFailure{"load", o.target, o.target, "", *why, o.target};
      }
    }
    if (os == Os::linux && !refused) {
      if (auto setup = open_deps_view("", o.env_file)) {
        auto settings = settings_for(*setup, false);
        settings.companions = false;
        if (auto tree = model_linux_load(*setup->fs, *setup->kb, o.target, settings)) {
          for (const auto& ob : tree->objects) {
            if (!ob.path) continue;
            if (auto why = library_file_problem(setup->fs->host_path(*ob.path))) {
              refused = LiveProbeFailure{"load", o.target, tree->objects[0].path.value_or(""),
                                         "",     *why,     *ob.path};
              break;
            }
          }
        }
      }
    }
    std::optional<LoadAnswer> answer;
    if (!refused) {
      // The real load, in a probe process: a crash or hang there is this command's answer.
      LiveProbeSession session(live_probe_argv(), LiveLimits{});
      session.request({LiveRequest::Kind::load, {}, o.target});
      LiveAnswers answers = session.finish();
      answer = answers.load;
      if (!answer && !answers.failures.empty()) refused = answers.failures.front();
      if (answer && answer->refused && !answers.failures.empty()) {
        refused = answers.failures.front();
      }
    }
    j["loaded"] = answer && answer->loaded;
    if (answer && answer->loaded) {
      const std::string path = answer->path;
      j["path"] = path;
      if (!answer->version.empty()) {
        j["version"] = answer->version;
        j["version_call"] = answer->version_call;
      }
      // Windows: LoadLibrary succeeded, but under Wine an imported function that the DLL
      // found does not export is bound to a stub instead of failing with 127, so the import
      // tables are checked against the exports (the loader model's walk of the same load).
      std::vector<std::string> import_errors;
      if (os == Os::windows) {
        if (auto setup = open_deps_view("", o.env_file)) {
          // A path is loaded with LOAD_WITH_ALTERED_SEARCH_PATH (platform/dynamic_library):
          // the search starts in the DLL's own directory, as in place of the app directory.
          DepsOptions d;
          if (o.target.find_first_of("/\\") != std::string::npos)
            d.app_dir = path_dirname(o.target);
          auto ws = windows_settings_for(*setup, d);
          ws.companions = false;
          // The target as given (the model's file system knows relative and C: paths), else
          // the file that really loaded.
          auto tree = model_windows_load(*setup->fs, *setup->kb, o.target, ws);
          if (!tree && !path.empty()) {
            d.app_dir = path_dirname(path);
            ws = windows_settings_for(*setup, d);
            ws.companions = false;
            tree = model_windows_load(*setup->fs, *setup->kb, path, ws);
          }
          if (tree) import_errors = windows_import_errors(*tree);
        }
        if (!import_errors.empty()) j["import_errors"] = import_errors;
      }
      if (o.json) {
        out << json_text(j, 2) << "\n";
      } else {
        out << "loaded " << o.target << "\n  path     " << path << "\n";
        if (!answer->version.empty()) {
          out << "  version  " << answer->version << "  (" << answer->version_call << ")\n";
        } else {
          out << "  version  no version call known for this library\n";
        }
        for (const auto& e : import_errors) out << "  error    " << e << "\n";
        if (!import_errors.empty()) {
          out << "  (this LoadLibrary succeeded only because the loader here binds a missing "
                 "import to a stub, as Wine does; the first call of it would fail)\n";
        }
      }
      return import_errors.empty() ? kExitOk : kExitFindings;
    }
    if (refused) {
      error_text = describe_live_failure(*refused);
      j["refused"] = refused->failure.empty();
      j["failure"] = nlohmann::json{{"library", refused->library},
                                    {"path", refused->path},
                                    {"failure", refused->failure},
                                    {"file_problem", refused->file_problem},
                                    {"problem_path", refused->problem_path}};
    } else {
      error_text = answer ? answer->error : "the probe process did not answer";
    }
    j["error"] = error_text;
    if (answer && answer->error_code != 0 && o.error_code == 0)
      load_error_code = answer->error_code;
  } else {
    j["loaded"] = nullptr;
    j["model_only"] = true;
  }
  // The dependency walk that explains the failure.
  auto setup = open_deps_view(o.root, o.env_file);
  std::vector<std::string> explanation;
  if (!setup) {
    err << "dlenv load: " << setup.error().message << "\n";
    return kExitUsage;
  }
  if (os == Os::windows) {
    int code = o.error_code != 0 ? o.error_code : load_error_code;
    if (code == 0) {
      for (int c : {126, 127, 193, 1114}) {
        if (error_text.find(fmt::format("{}", c)) != std::string::npos) code = c;
      }
    }
    DepsOptions d;
    auto ws = windows_settings_for(*setup, d);
    ws.companions = false;  // LoadLibrary itself does not load them
    auto tree = model_windows_load(*setup->fs, *setup->kb, o.target, ws);
    if (!tree) {
      explanation.push_back(tree.error().message);
    } else {
      explanation = explain_windows_load_failure(*tree, o.target, code);
    }
  } else {
    auto settings = settings_for(*setup, !o.root.empty());
    settings.companions = false;  // dlopen itself does not load them
    auto tree = model_linux_load(*setup->fs, *setup->kb, o.target, settings);
    if (!tree) {
      explanation.push_back(tree.error().message);
    } else {
      const auto& root = tree->objects[0];
      if (root.path) {
        explanation.push_back(fmt::format("{} was found at {} ({})", o.target, *root.path,
                                          root.rule_detail.empty()
                                              ? std::string(search_rule_name(root.rule))
                                              : root.rule_detail));
      }
      for (const auto& ob : tree->objects) {
        if (!ob.problem.empty() && ob.severity == LoadSeverity::error) {
          explanation.push_back(ob.problem);
        }
      }
    }
  }
  j["explanation"] = explanation;
  if (o.json) {
    out << json_text(j, 2) << "\n";
  } else {
    if (model_only) {
      out << "not loaded " << o.target << " (" << (o.root.empty() ? "another OS" : "--root")
          << ": the loader model's explanation only)\n";
    } else {
      out << "failed to load " << o.target << "\n  error: " << error_text << "\n";
    }
    if (!explanation.empty()) {
      out << "  why:\n";
      for (const auto& e : explanation) out << "    " << e << "\n";
    }
  }
  return kExitFindings;
}

}  // namespace dlenv
