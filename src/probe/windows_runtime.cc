// The Windows run-time picture: MSVC run-time DLLs (System32 and beside each python.exe,
// which Windows searches first), OpenMP run times, zlibwapi.dll, the CUDA DLLs inside Python
// environments, how the process PATH orders CUDA directories (the first copy of a DLL wins),
// and the PATH stored in the registry, which new shells get but a running one does not.
#include <algorithm>
#include <regex>
#include <set>

#include "probe/windows_probes.h"
#include "util/strings.h"

namespace dlenv {
namespace {

bool interesting(const std::string& lower) {
  static const std::regex re(
      R"((cudart64_\d+|cudnn(_[a-z_]+)?64_\d+|cublas(lt)?64_\d+|cufft64_\d+|curand64_\d+|)"
      R"(cusolver64_\d+|cusparse64_\d+|nvrtc64_\d+(_0)?|nvjitlink_\d+_0|zlibwapi|libiomp5md|)"
      R"(libomp140\.x86_64|vcomp140|vcruntime140(_1)?|msvcp140)\.dll|nvcc\.exe)");
  return std::regex_match(lower, re);
}

bool is_openmp(const std::string& lower) {
  return lower == "libiomp5md.dll" || lower == "libomp140.x86_64.dll" || lower == "vcomp140.dll";
}
bool is_msvc(const std::string& lower) {
  return lower == "vcruntime140.dll" || lower == "vcruntime140_1.dll" || lower == "msvcp140.dll";
}

struct Dir {
  std::string path;  // logical, as found on disk
  std::string via;
};

std::string key_of(const std::string& p) {
  return to_lower(path_normalize(p));
}

}  // namespace

void probe_windows_runtime(const ProbeContext& ctx, const std::vector<ToolkitFacts>& toolkits,
                           const std::vector<CudnnCopy>& cudnn,
                           const std::vector<PythonEnv>& python, WindowsFacts& win) {
  const FileSystem& fs = ctx.fs;
  if (win.system32.empty()) win.system32 = win_system32(ctx);

  // CUDA_PATH and the per-version variables.
  static const std::regex versioned(R"(CUDA_PATH(_V\d+_\d+)?)", std::regex::icase);
  for (const auto& [k, v] : ctx.env.all()) {
    if (std::regex_match(k, versioned)) win.cuda_path_vars[k] = v;
  }

  // The DLL search path of a process started from this shell: System32, the Windows
  // directory, then PATH in order (the application directory comes first; per python below).
  std::vector<Dir> search;
  search.push_back({win.system32, "System32"});
  search.push_back({win_windows_dir(ctx), "Windows"});
  std::set<std::string> process_path;  // normalised lower-case logical dirs
  if (auto p = win_env(ctx, "PATH")) {
    for (const auto& entry : win_path_entries(*p)) {
      WinPathEntry pe;
      pe.entry = entry;
      std::string logical = win_logical(ctx, entry);
      auto found = win_find(fs, logical);
      pe.logical = found.value_or(logical);
      pe.exists = found && fs.is_dir(*found);
      if (!logical.empty()) process_path.insert(key_of(logical));
      if (pe.exists) {
        process_path.insert(key_of(*found));
        for (const auto& t : toolkits) {
          for (const auto& d : t.lib_dirs) {
            if (key_of(d) == key_of(*found)) pe.toolkit_root = t.root;
          }
          if (pe.toolkit_root.empty() && key_of(path_join(t.root, "bin")) == key_of(*found)) {
            pe.toolkit_root = t.root;
          }
        }
        if (auto entries = fs.list_dir(*found)) {
          for (const auto& e : *entries) {
            if (interesting(to_lower(e.name))) pe.cuda_files.push_back(to_lower(e.name));
          }
        }
        search.push_back({*found, "PATH"});
      }
      win.path.push_back(std::move(pe));
    }
  }

  // Which copy of each CUDA / run-time DLL the search path finds, in order.
  std::set<std::string> seen_dirs;
  for (const auto& d : search) {
    if (!seen_dirs.insert(key_of(d.path)).second) continue;
    auto entries = fs.list_dir(d.path);
    if (!entries) continue;
    for (const auto& e : *entries) {
      std::string n = to_lower(e.name);
      if (!interesting(n)) continue;
      auto it = std::find_if(win.resolved.begin(), win.resolved.end(),
                             [&](const WinResolved& r) { return r.name == n; });
      if (it == win.resolved.end()) {
        win.resolved.push_back({n, {}});
        it = win.resolved.end() - 1;
      }
      it->paths.push_back(path_join(d.path, e.name));
    }
  }
  std::sort(win.resolved.begin(), win.resolved.end(),
            [](const WinResolved& a, const WinResolved& b) { return a.name < b.name; });

  // The CUDA DLLs each cuDNN copy's DLLs import (cuBLAS, cuBLASLt, cudart): beside them or
  // on the search path, else a missing import (error 126, with where copies are).
  auto on_search_path = [&](const std::string& lower) {
    auto it = std::find_if(win.resolved.begin(), win.resolved.end(),
                           [&](const WinResolved& r) { return r.name == lower; });
    return it != win.resolved.end() && !it->paths.empty();
  };
  std::vector<std::string> copy_dirs;  // where a missing DLL may be found nonetheless
  for (const auto& t : toolkits) {
    for (const auto& d : t.lib_dirs) copy_dirs.push_back(d);
    copy_dirs.push_back(path_join(t.root, "bin"));
  }
  std::set<std::string> checked;
  for (const auto& k : cudnn) {
    if (!checked.insert(key_of(k.dir)).second) continue;
    auto entries = fs.list_dir(k.dir);
    if (!entries) continue;
    std::set<std::string> beside;
    for (const auto& e : *entries) beside.insert(to_lower(e.name));
    for (const auto& e : *entries) {
      const std::string n = to_lower(e.name);
      if (!n.starts_with("cudnn") || !n.ends_with(".dll")) continue;
      WinFile f = win_read_file(fs, path_join(k.dir, e.name), "cuDNN");
      for (const auto& imp : f.imports) {
        auto lib = ctx.kb.library_from_file_name(imp);
        if (!lib ||
            (lib->first != "cublas" && lib->first != "cublasLt" && lib->first != "cudart")) {
          continue;
        }
        if (beside.count(imp) || on_search_path(imp)) continue;
        WinMissingImport m{f.path, imp, {}};
        std::set<std::string> seen;
        for (const auto& d : copy_dirs) {
          if (!seen.insert(key_of(d)).second || key_of(d) == key_of(k.dir)) continue;
          if (win_child(fs, d, imp)) m.copies.push_back(d);
        }
        win.cudnn_missing_imports.push_back(std::move(m));
      }
    }
  }

  // MSVC run time, OpenMP and zlibwapi copies: the search path, and beside each python.exe.
  std::set<std::string> recorded;
  auto record = [&](const std::string& path, const std::string& via) {
    if (!recorded.insert(key_of(path)).second) return;
    std::string n = to_lower(path_basename(path));
    if (is_msvc(n)) win.msvc_runtime.push_back(win_read_file(fs, path, via));
    if (is_openmp(n)) win.openmp.push_back(win_read_file(fs, path, via));
    if (n == "zlibwapi.dll") win.zlibwapi.push_back(win_read_file(fs, path, via));
  };
  auto scan = [&](const std::string& dir, const std::string& via) {
    auto found = win_find(fs, dir);
    if (!found) return;
    auto entries = fs.list_dir(*found);
    if (!entries) return;
    for (const auto& e : *entries) {
      std::string n = to_lower(e.name);
      if (is_msvc(n) || is_openmp(n) || n == "zlibwapi.dll") record(path_join(*found, e.name), via);
    }
  };
  for (const auto& env : python) {
    scan(env.prefix, "beside " + (env.interpreter ? *env.interpreter : env.prefix));
  }
  for (const auto& d : search) scan(d.path, d.via);
  for (const auto& t : toolkits) {
    for (const auto& d : t.lib_dirs) scan(d, "toolkit " + t.root);
  }
  for (const auto& c : cudnn) scan(c.dir, "cuDNN folder");

  // Inside Python environments: torch\lib, nvidia\*\bin, ctranslate2, paddle\libs and conda's
  // Library\bin.
  for (const auto& env : python) {
    std::vector<std::pair<std::string, std::string>> dirs;
    dirs.push_back({path_join(env.prefix, "Library/bin"), "conda Library\\bin"});
    for (const auto& site : env.site_packages) {
      dirs.push_back({path_join(site, "torch/lib"), "torch\\lib"});
      dirs.push_back({path_join(site, "ctranslate2"), "ctranslate2"});
      dirs.push_back({path_join(site, "paddle/libs"), "paddle\\libs"});
      dirs.push_back({path_join(site, "onnxruntime/capi"), "onnxruntime\\capi"});
      if (auto nv = win_find(fs, path_join(site, "nvidia"))) {
        if (auto subs = fs.list_dir(*nv)) {
          for (const auto& s : *subs) {
            dirs.push_back({path_join(path_join(*nv, s.name), "bin"), "nvidia\\" + s.name});
          }
        }
      }
    }
    for (const auto& [dir, via] : dirs) {
      auto found = win_find(fs, dir);
      if (!found) continue;
      auto entries = fs.list_dir(*found);
      if (!entries) continue;
      for (const auto& e : *entries) {
        std::string n = to_lower(e.name);
        if (!interesting(n)) continue;
        std::string p = path_join(*found, e.name);
        win.python_dlls[n].push_back(p);
        if (is_openmp(n) || n == "zlibwapi.dll") record(p, via);
      }
    }
  }

  // The registry's PATH (what a new shell gets) vs this process's.
  const std::string machine_key =
      "SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment";
  if (!ctx.registry) {
    std::string why = ctx.fs.is_rooted() ? "not read: --root without --registry-file"
                                         : "no registry on this system";
    win.user_path = Fact<std::string>::unknown(FactStatus::skipped, why, "HKCU\\Environment");
    win.machine_path = Fact<std::string>::unknown(FactStatus::skipped, why, "HKLM\\" + machine_key);
    return;
  }
  auto read = [&](RegistryHive hive, const std::string& key, const std::string& label) {
    if (auto v = ctx.registry(hive, key, "Path")) {
      return Fact<std::string>::known(*v, label + " Path (" + ctx.registry_source + ")");
    }
    return Fact<std::string>::unknown(FactStatus::not_found, "no Path value",
                                      label + " (" + ctx.registry_source + ")");
  };
  win.machine_path = read(RegistryHive::local_machine, machine_key, "HKLM\\" + machine_key);
  win.user_path = read(RegistryHive::current_user, "Environment", "HKCU\\Environment");
  for (const auto* f : {&win.machine_path, &win.user_path}) {
    if (!f->ok()) continue;
    for (const auto& entry : win_path_entries(**f)) {
      std::string expanded = win_expand(ctx, entry);
      if (expanded.find('%') != std::string::npos) continue;  // an unknown variable
      std::string logical = win_logical(ctx, expanded);
      if (logical.empty() || process_path.count(key_of(logical))) continue;
      auto found = win_find(fs, logical);
      if (!found || !fs.is_dir(*found) || process_path.count(key_of(*found))) continue;
      if (std::find(win.path_not_in_process.begin(), win.path_not_in_process.end(), expanded) ==
          win.path_not_in_process.end()) {
        win.path_not_in_process.push_back(expanded);
      }
    }
  }
}

}  // namespace dlenv
