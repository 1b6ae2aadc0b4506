// Rules for native Windows (failure catalog section A): what the DLL search path finds
// (System32, the Windows directory, PATH in order, and the folder of python.exe, which
// Windows searches first), the cuDNN / CUDA DLL names each framework build loads, the
// MSVC and OpenMP run times, CUDA_PATH and the registry's PATH. They read Facts::windows
// (probe/windows_*.cc), the common toolkit / cuDNN / Python facts and kb/tensorflow.json.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "rules/checks.h"
#include "rules/loader_coverage.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using Findings = std::vector<Finding>;
using Ctx = RuleContext;
using json = nlohmann::json;

// A logical path as the user sees it on Windows: "/Program Files/X" -> "C:\Program Files\X".
std::string winpath(std::string_view p) {
  std::string s(p);
  if (!s.empty() && s.front() == '/') s = "C:" + s;
  std::replace(s.begin(), s.end(), '/', '\\');
  return s;
}

Evidence ev(std::string fact, std::string source) {
  return {std::move(fact), winpath(source)};
}
FixStep ps(std::string text, std::string command = {}) {
  std::string shell = command.empty() ? "" : "powershell";
  return {std::move(text), std::move(command), shell};
}

// PowerShell that appends `dir` to the user's PATH for new shells.
std::string add_to_user_path(const std::string& dir) {
  return "[Environment]::SetEnvironmentVariable('Path', "
         "[Environment]::GetEnvironmentVariable('Path', 'User') + ';" +
         winpath(dir) + "', 'User')";
}

const WindowsFacts* win(const Ctx& c) {
  if (c.os != Os::windows || !c.f.windows) return nullptr;
  return &*c.f.windows;
}

std::string env_name(const PythonEnv& e) {
  return winpath(e.interpreter ? *e.interpreter : e.prefix);
}
std::string pip(const PythonEnv& e) {
  std::string p = env_name(e);
  if (p.find(' ') != std::string::npos) p = "& \"" + p + "\"";
  return p + " -m pip";
}
const FrameworkFacts* framework(const PythonEnv& e, std::string_view name) {
  for (const auto& f : e.frameworks) {
    if (f.name == name) return &f;
  }
  return nullptr;
}
const PythonPackage* pkg(const PythonEnv& e, std::string_view name) {
  for (const auto& p : e.packages) {
    if (p.name == name) return &p;
  }
  return nullptr;
}
Evidence pkg_ev(const PythonEnv& e, const FrameworkFacts& f) {
  if (const auto* p = pkg(e, f.package)) {
    return ev(p->name + " " + p->version + " installed in " + winpath(p->location), p->source);
  }
  return ev(f.package + " " + f.version + " installed", env_name(e));
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  return starts_with(to_lower(s), to_lower(prefix));
}

// Copies of a DLL the search path finds (in order).
std::vector<std::string> on_search_path(const WindowsFacts& w, std::string_view name) {
  std::string n = to_lower(name);
  for (const auto& r : w.resolved) {
    if (r.name == n) return r.paths;
  }
  return {};
}
// Copies of a DLL in one Python environment (torch\lib, nvidia\*\bin, ...).
std::vector<std::string> in_env(const WindowsFacts& w, const PythonEnv& e, std::string_view name) {
  std::vector<std::string> out;
  auto it = w.python_dlls.find(to_lower(name));
  if (it == w.python_dlls.end()) return out;
  for (const auto& p : it->second) {
    if (starts_with_ci(p, e.prefix + "/")) out.push_back(p);
  }
  return out;
}
// What a framework in `e` finds by name: the folder of python.exe first, then the search path.
std::vector<std::string> findable(const Ctx& c, const WindowsFacts& w, const PythonEnv& e,
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

// Every file name matching "<stem>NN.dll" on the search path ("cudart64_" -> cudart64_12.dll...).
std::vector<std::pair<std::string, std::string>> family_on_path(const WindowsFacts& w,
                                                                std::string_view stem) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& r : w.resolved) {
    if (starts_with(r.name, stem) && !r.paths.empty()) out.push_back({r.name, r.paths.front()});
  }
  return out;
}

// ---- TensorFlow (2.10 and older: the last native-Windows GPU builds) -----------------

struct TfNeeds {
  std::string tf;
  std::string cuda;   // "11.2"
  std::string cudnn;  // "8.1"
  std::string source;
};
std::optional<TfNeeds> tf_needs(const Kb& kb, const Version& tf) {
  auto text = kb.file_text("tensorflow.json");
  if (!text) return std::nullopt;
  json j = json::parse(*text, nullptr, false);
  if (!j.is_object() || !j.contains("windows_native_gpu")) return std::nullopt;
  for (const auto& r : j["windows_native_gpu"]) {
    auto v = Version::parse(r.value("tf_version", ""));
    if (!v || !(v->truncated(2) == tf.truncated(2))) continue;
    return TfNeeds{r.value("tf_version", ""), r.value("cuda", ""), r.value("cudnn", ""),
                   r.value("source", "")};
  }
  return std::nullopt;
}
std::string cudart_dll(const Kb& kb, const Version& cuda) {
  if (cuda.major() >= 11) {
    if (auto n = kb.library_file_name("cudart", cuda.major(), Os::windows)) return *n;
  }
  return "cudart64_" + std::to_string(cuda.major()) + std::to_string(cuda.minor()) + ".dll";
}

// ---- cuDNN copies ------------------------------------------------------------------

bool copy_on_search_path(const WindowsFacts& w, const CudnnCopy& k) {
  auto paths = on_search_path(w, path_basename(k.library));
  for (const auto& p : paths) {
    if (to_lower(path_dirname(p)) == to_lower(k.dir)) return true;
  }
  return false;
}

// The CUDA DLLs that copy `k`'s DLLs import and the search path does not find.
std::vector<const WinMissingImport*> missing_imports_of(const WindowsFacts& w, const CudnnCopy& k) {
  std::vector<const WinMissingImport*> out;
  for (const auto& m : w.cudnn_missing_imports) {
    if (to_lower(path_dirname(m.dll)) == to_lower(k.dir)) out.push_back(&m);
  }
  return out;
}

std::optional<Version> copy_version(const CudnnCopy& k) {
  if (k.library_version) return *k.library_version;
  if (k.header_version) return *k.header_version;
  return std::nullopt;
}

// ---- MSVC and OpenMP run times -----------------------------------------------------------

bool any_framework(const Facts& f) {
  for (const auto& e : f.python) {
    if (!e.frameworks.empty()) return true;
  }
  return false;
}
bool has_torch(const Facts& f) {
  for (const auto& e : f.python) {
    if (framework(e, "torch")) return true;
  }
  return false;
}

const WinFile* system_copy(const WindowsFacts& w, std::string_view name) {
  for (const auto& f : w.msvc_runtime) {
    if (f.name == name && to_lower(path_dirname(f.path)) == to_lower(w.system32)) return &f;
  }
  return nullptr;
}

// ---- CUDA_PATH and PATH ------------------------------------------------------------------

const ToolkitFacts* toolkit_at(const Facts& f, std::string_view root) {
  for (const auto& t : f.toolkits) {
    if (to_lower(t.root) == to_lower(root)) return &t;
  }
  return nullptr;
}

void toolkit_order(const Ctx& c, Findings& out);

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
    x.evidence.push_back(ev("PATH #" + std::to_string(i + 1) + ": " + bins[i]->entry + " (CUDA " +
                                ver(toolkit_at(c.f, bins[i]->toolkit_root)) + ")",
                            "PATH"));
  }
  x.evidence.push_back(ev("CUDA_PATH=" + w->cuda_path_vars.at("CUDA_PATH"), "CUDA_PATH"));
  for (const auto& r : w->resolved) {
    if (r.paths.size() < 2) continue;
    if (r.name != "nvcc.exe" && !starts_with(r.name, "cudart64_") &&
        !starts_with(r.name, "cublas64_")) {
      continue;
    }
    x.evidence.push_back(ev(r.name + " resolves to " + winpath(r.paths.front()) + " (" +
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

// ---- frameworks that use the system CUDA/cuDNN through PATH -------------------------

}  // namespace

namespace checks {

void windows_no_driver(const RuleContext& c, std::vector<Finding>& out) {
  if (c.os != Os::windows || !c.f.windows || c.f.driver.windows_dll_version.ok()) return;
  const WindowsFacts& w = *c.f.windows;
  if (!w.nvcuda.empty() || !w.nvml.empty()) return;  // present but unreadable: not "none"
  Finding x =
      make_finding(FindingId::no_nvidia_driver, Severity::info,
                   w.registry_gpus.empty() ? "No NVIDIA driver (no nvcuda.dll in System32)"
                                           : "An NVIDIA GPU is present but no NVIDIA driver is "
                                             "installed (no nvcuda.dll)");
  if (!w.registry_gpus.empty()) x.severity = Severity::error;
  x.evidence.push_back(
      ev(c.f.driver.windows_dll_version.reason, c.f.driver.windows_dll_version.source));
  for (const auto& g : w.registry_gpus)
    x.evidence.push_back(ev("display adapter " + g, "registry"));
  x.fix.push_back(
      ps(w.registry_gpus.empty()
             ? "nothing to fix if this machine is meant to run on the CPU; GPU work needs an "
               "NVIDIA GPU and its driver (then run `dlenv doctor` again)"
             : "install the NVIDIA driver for the GPU (nvidia.com/drivers or the GeForce/RTX "
               "Experience app), then run `dlenv doctor` again"));
  out.push_back(std::move(x));
}

void win_tf_libraries(const Ctx& c, Findings& out) {
  const WindowsFacts* w = win(c);
  if (!w) return;
  for (const auto& e : c.f.python) {
    const auto* tf = framework(e, "tensorflow");
    if (!tf) continue;
    auto v = Version::parse(tf->version);
    if (!v || !(*v < Version{2, 11})) continue;  // 2.11+: win-tf-gpu-after-2.10
    if (tf->cuda_build && !*tf->cuda_build) continue;
    auto needs = tf_needs(c.kb, *v);
    if (!needs) continue;
    auto cuda = Version::parse(needs->cuda);
    auto cudnn = Version::parse(needs->cudnn);
    if (!cuda || !cudnn) continue;
    std::string cudart = cudart_dll(c.kb, *cuda);
    if (findable(c, *w, e, cudart).empty()) {
      Finding x =
          make_finding(FindingId::win_tf_cudart_wrong_cuda_major, Severity::error,
                       "TensorFlow " + tf->version + " in " + env_name(e) + " loads " + cudart +
                           " (CUDA " + needs->cuda + "), which is not on the DLL search path");
      x.evidence.push_back(pkg_ev(e, *tf));
      x.evidence.push_back(ev("TensorFlow " + needs->tf + " for Windows was built with CUDA " +
                                  needs->cuda + " and cuDNN " + needs->cudnn,
                              needs->source));
      for (const auto& [name, path] : family_on_path(*w, "cudart64_")) {
        x.evidence.push_back(ev(name + " is on the search path (another CUDA)", path));
      }
      for (const auto& [k, val] : w->cuda_path_vars) x.evidence.push_back(ev(k + "=" + val, k));
      x.fix.push_back(ps("install CUDA " + needs->cuda +
                             " (or a TensorFlow matching the CUDA "
                             "you have) and put its bin folder on PATH, then open a new terminal",
                         add_to_user_path("C:\\Program Files\\NVIDIA GPU Computing "
                                          "Toolkit\\CUDA\\v" +
                                          needs->cuda + "\\bin")));
      out.push_back(std::move(x));
    }
    std::string cudnn_name = "cudnn64_" + std::to_string(cudnn->major()) + ".dll";
    if (findable(c, *w, e, cudnn_name).empty()) {
      Finding x = make_finding(FindingId::win_tf_cudnn64_dll_not_found, Severity::error,
                               "TensorFlow " + tf->version + " in " + env_name(e) + " loads " +
                                   cudnn_name + ", which is not on the DLL search path");
      x.evidence.push_back(pkg_ev(e, *tf));
      x.evidence.push_back(ev("TensorFlow " + needs->tf + " for Windows needs cuDNN " +
                                  needs->cudnn + " (" + cudnn_name + ")",
                              needs->source));
      std::string elsewhere;
      for (const auto& k : c.f.cudnn) {
        bool on_path =
            !on_search_path(*w, path_basename(k.library)).empty() &&
            to_lower(on_search_path(*w, path_basename(k.library)).front()) == to_lower(k.library);
        if (k.major == cudnn->major() && !on_path && elsewhere.empty()) elsewhere = k.dir;
        x.evidence.push_back(ev("cuDNN " + std::to_string(k.major) + " in " + winpath(k.dir) +
                                    (on_path ? " (on the search path)" : " (not on PATH)"),
                                k.library));
      }
      if (!elsewhere.empty()) {
        x.fix.push_back(ps("add the folder that has it to PATH, then open a new terminal",
                           add_to_user_path(elsewhere)));
      } else {
        x.fix.push_back(ps("download cuDNN " + needs->cudnn + " for CUDA " + needs->cuda +
                           " and copy its bin, include and lib folders into the CUDA " +
                           needs->cuda +
                           " toolkit folder (whose bin is on PATH); then open a new terminal"));
      }
      out.push_back(std::move(x));
    }
  }
}

// A3: sub-libraries missing from the folder, or a CUDA DLL the cuDNN DLLs import
// (cuBLASLt, cuBLAS, cudart) that the DLL search path cannot find.
void win_cudnn_incomplete(const Ctx& c, Findings& out) {
  const WindowsFacts* w = win(c);
  if (!w) return;
  for (const auto& k : c.f.cudnn) {
    // cuDNN 8 copies a modelled load takes: decided by the loader model (loader_rules.cc).
    if (k.major == 8 && loader_loads_win_cudnn8(c.f, k.library)) continue;
    const auto imports = missing_imports_of(*w, k);
    if (k.sublibraries_missing.empty() && imports.empty()) continue;
    bool v8 = k.major == 8;
    std::string title = "cuDNN " + std::to_string(k.major) + " in " + winpath(k.dir);
    if (!k.sublibraries_missing.empty()) {
      title += " is incomplete: " + std::to_string(k.sublibraries_missing.size()) +
               " of its DLLs are missing";
    } else {
      std::set<std::string> names;
      for (const auto* m : imports) names.insert(m->needs);
      title += " cannot load: it needs " +
               join(std::vector<std::string>(names.begin(), names.end()), ", ") +
               ", which is not on the DLL search path (LoadLibrary error 126)";
    }
    Finding x = make_finding(
        v8 ? FindingId::win_cudnn8_sublibrary_missing : FindingId::cudnn_sublibrary_missing,
        Severity::error, title);
    if (!k.sublibraries_missing.empty()) {
      x.evidence.push_back(ev("missing: " + join(k.sublibraries_missing, ", "), k.dir));
    }
    if (!k.sublibraries_present.empty()) {
      x.evidence.push_back(ev("present: " + join(k.sublibraries_present, ", "), k.dir));
    }
    for (const auto* m : imports) {
      x.evidence.push_back(ev(path_basename(m->dll) + " imports " + m->needs +
                                  ": not beside it, not in System32 and not on PATH",
                              m->dll));
    }
    if (copy_on_search_path(*w, k)) {
      x.evidence.push_back(ev("this folder is on the DLL search path", k.dir));
    }
    if (!k.sublibraries_missing.empty()) {
      x.fix.push_back(ps("copy every cudnn*64_" + std::to_string(k.major) +
                         ".dll from the bin folder of the same cuDNN archive into " +
                         winpath(k.dir) + " (cudnn64_" + std::to_string(k.major) +
                         ".dll loads the others by name at the first convolution)"));
    }
    std::set<std::string> fixed;
    for (const auto* m : imports) {
      if (!fixed.insert(m->needs).second) continue;
      if (!m->copies.empty()) {
        x.fix.push_back(ps("copy " + m->needs + " from " + winpath(m->copies.front()) + " into " +
                               winpath(k.dir) + ", or put " + winpath(m->copies.front()) +
                               " on PATH; then open a new terminal",
                           "Copy-Item '" + winpath(path_join(m->copies.front(), m->needs)) + "' '" +
                               winpath(k.dir) + "'"));
      } else {
        x.fix.push_back(ps(m->needs +
                           " is part of the CUDA toolkit this cuDNN was built for: "
                           "reinstall (or repair) that toolkit's cuBLAS / runtime so that " +
                           m->needs + " is in " + winpath(k.dir) +
                           " or in a folder on PATH; then open a new terminal"));
      }
    }
    if (v8) {
      x.fix.push_back(ps("cuDNN 8.3 and later also need zlibwapi.dll (x64) on PATH"));
    }
    out.push_back(std::move(x));
  }
}

void win_zlibwapi(const Ctx& c, Findings& out) {
  const WindowsFacts* w = win(c);
  if (!w) return;
  for (const auto& k : c.f.cudnn) {
    auto v = copy_version(k);
    if (k.major != 8 || !v || *v < Version{8, 3} || loader_loads_win_cudnn8(c.f, k.library))
      continue;
    bool used = copy_on_search_path(*w, k) || !k.toolkit_root.empty();
    if (!used) continue;
    auto on_path = on_search_path(*w, "zlibwapi.dll");
    bool beside = false;
    for (const auto& z : w->zlibwapi) beside |= to_lower(path_dirname(z.path)) == to_lower(k.dir);
    if (!on_path.empty() || beside) continue;
    Finding x = make_finding(FindingId::win_zlibwapi_missing, Severity::error,
                             "cuDNN " + v->str() + " in " + winpath(k.dir) +
                                 " needs zlibwapi.dll, which is not on the DLL search path");
    x.evidence.push_back(
        ev("cuDNN " + v->str() + " (8.3 to 8.9 load zlibwapi.dll)",
           k.library_version ? k.library_version.source : k.header_version.source));
    x.evidence.push_back(
        ev("no zlibwapi.dll in System32, on PATH or beside " + path_basename(k.library), k.dir));
    for (const auto& z : w->zlibwapi) {
      x.evidence.push_back(ev("a copy in " + winpath(path_dirname(z.path)) + " (" + z.found_via +
                                  ") is not searched for other programs",
                              z.path));
    }
    x.fix.push_back(
        ps("put a 64-bit zlibwapi.dll (ZLIB 1.2.3 WINAPI build, as NVIDIA's cuDNN 8 "
           "install guide describes) into " +
           winpath(k.dir) + ", or move to cuDNN 9, which does not need it"));
    out.push_back(std::move(x));
  }
}

void win_vcredist(const Ctx& c, Findings& out) {
  const WindowsFacts* w = win(c);
  if (!w || !any_framework(c.f)) return;
  std::vector<std::string> missing;
  for (const char* n : {"vcruntime140.dll", "vcruntime140_1.dll", "msvcp140.dll"}) {
    if (!system_copy(*w, n)) missing.push_back(n);
  }
  // Several copies of one DLL with different versions (conda roots, IDE folders, System32).
  std::vector<Evidence> divergent;
  for (const char* n : {"vcruntime140.dll", "vcruntime140_1.dll", "msvcp140.dll"}) {
    std::set<std::string> versions;
    std::vector<const WinFile*> copies;
    for (const auto& f : w->msvc_runtime) {
      if (f.name != n) continue;
      copies.push_back(&f);
      if (f.version) versions.insert(*f.version);
    }
    if (versions.size() < 2) continue;
    for (const auto* f : copies) {
      divergent.push_back(
          ev(std::string(n) + " " + (f->version ? *f->version : "?") + " (" + f->found_via + ")",
             f->path));
    }
  }
  if (missing.empty() && divergent.empty()) return;
  Finding x = make_finding(
      FindingId::win_vcredist_not_detected_warning, Severity::warning,
      missing.empty() ? "Copies of the MSVC run-time DLLs with different versions"
                      : "The Microsoft Visual C++ run time is not installed in System32 (" +
                            join(missing, ", ") + " missing)");
  if (!missing.empty()) x.evidence.push_back(ev("missing: " + join(missing, ", "), w->system32));
  for (auto& d : divergent) x.evidence.push_back(std::move(d));
  x.fix.push_back(ps("install (or repair) the latest Microsoft Visual C++ Redistributable x64",
                     "winget install Microsoft.VCRedist.2015+.x64"));
  if (!divergent.empty()) {
    x.fix.push_back(
        ps("remove stale copies that sit before System32 in the search order (beside "
           "python.exe)"));
  }
  out.push_back(std::move(x));
}

void win_msvc_too_old(const Ctx& c, Findings& out) {
  const WindowsFacts* w = win(c);
  if (!w || !has_torch(c.f)) return;
  // Every torch 2.x Windows wheel is built with a VS 2019 16.10+ / VS 2022 toolset (14.29+);
  // a run time older than the toolset fails c10.dll's initialisation (error 1114).
  const Version floor{14, 29};
  for (const auto& e : c.f.python) {
    const auto* torch = framework(e, "torch");
    if (!torch) continue;
    std::vector<Evidence> old;
    bool shadowed = false;
    for (const char* n : {"vcruntime140.dll", "msvcp140.dll"}) {
      // The copy that wins: beside python.exe first, then System32.
      const WinFile* winner = nullptr;
      for (const auto& f : w->msvc_runtime) {
        if (f.name == n && to_lower(path_dirname(f.path)) == to_lower(e.prefix)) winner = &f;
      }
      const WinFile* sys = system_copy(*w, n);
      if (!winner) winner = sys;
      if (!winner || !winner->version) continue;
      auto v = Version::parse(*winner->version);
      if (!v) continue;
      bool older_than_system = false;
      if (sys && sys != winner && sys->version) {
        auto sv = Version::parse(*sys->version);
        older_than_system = sv && *v < *sv;
      }
      if (*v < floor || older_than_system) {
        shadowed |= older_than_system;
        old.push_back(
            ev(std::string(n) + " " + *winner->version + " (" + winner->found_via + ")" +
                   (older_than_system ? ", older than System32's copy " + *sys->version : ""),
               winner->path));
      }
    }
    if (old.empty()) continue;
    Finding x = make_finding(
        FindingId::win_torch_c10_dll_init_1114, shadowed ? Severity::error : Severity::warning,
        "torch " + torch->version + " in " + env_name(e) +
            " runs with an MSVC run time older than the one it was built with");
    x.evidence.push_back(pkg_ev(e, *torch));
    for (auto& o : old) x.evidence.push_back(std::move(o));
    if (!shadowed) {
      x.evidence.push_back(
          ev("torch 2.x Windows wheels are built with MSVC toolset 14.29 or "
             "newer",
             "dlenv (unconfirmed)"));
      x.confirmed = false;
    }
    x.fix.push_back(ps("install the latest Microsoft Visual C++ Redistributable x64",
                       "winget install Microsoft.VCRedist.2015+.x64"));
    if (shadowed) {
      x.fix.push_back(
          ps("remove (or update) the old copies beside python.exe: they are found "
             "before System32"));
    }
    out.push_back(std::move(x));
  }
}

void win_libomp140(const Ctx& c, Findings& out) {
  const WindowsFacts* w = win(c);
  if (!w) return;
  for (const auto& e : c.f.python) {
    const auto* torch = framework(e, "torch");
    if (!torch) continue;
    auto v = Version::parse(torch->version);
    if (!v || *v < Version{2, 4}) continue;
    const std::string name = "libomp140.x86_64.dll";
    if (!in_env(*w, e, name).empty() || !findable(c, *w, e, name).empty()) continue;
    bool system = false;
    for (const auto& f : w->openmp) {
      system |= f.name == name && to_lower(path_dirname(f.path)) == to_lower(w->system32);
    }
    if (system) continue;
    Finding x = make_finding(FindingId::win_torch_fbgemm_libomp140, Severity::error,
                             "torch " + torch->version + " in " + env_name(e) +
                                 ": fbgemm.dll needs libomp140.x86_64.dll, which is not installed");
    x.evidence.push_back(pkg_ev(e, *torch));
    x.evidence.push_back(
        ev("torch 2.4 and later: fbgemm.dll imports libomp140.x86_64.dll", "failure catalog A9"));
    x.evidence.push_back(ev("not in torch\\lib, System32 or on PATH", w->system32));
    x.fix.push_back(
        ps("install the current Microsoft Visual C++ Redistributable x64 (it ships "
           "libomp140.x86_64.dll)",
           "winget install Microsoft.VCRedist.2015+.x64"));
    x.fix.push_back(
        ps("or install the Visual Studio C++ build tools; copying the DLL into "
           "torch\\lib was the reported workaround"));
    out.push_back(std::move(x));
  }
}

void win_duplicate_openmp(const Ctx& c, Findings& out) {
  const WindowsFacts* w = win(c);
  if (!w) return;
  for (const auto& e : c.f.python) {
    std::vector<const WinFile*> copies;
    for (const auto& f : w->openmp) {
      if (f.name == "libiomp5md.dll" && starts_with_ci(f.path, e.prefix + "/")) {
        copies.push_back(&f);
      }
    }
    if (copies.size() < 2) continue;
    Finding x = make_finding(FindingId::win_duplicate_openmp_runtime, Severity::warning,
                             std::to_string(copies.size()) + " copies of libiomp5md.dll in " +
                                 env_name(e) + ": loading two aborts with OMP: Error #15");
    for (const auto* f : copies) {
      x.evidence.push_back(ev(
          "libiomp5md.dll " + (f->version ? *f->version : std::string("?")) + " in " + f->found_via,
          f->path));
    }
    x.fix.push_back(
        ps("keep one Intel OpenMP: install numpy/MKL and torch from one channel "
           "(all pip, or all conda), or remove the extra copy"));
    x.fix.push_back(
        ps("KMP_DUPLICATE_LIB_OK=TRUE silences it, but Intel calls that unsafe and "
           "unsupported"));
    out.push_back(std::move(x));
  }
}

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
  for (const auto& [k, v] : w->cuda_path_vars) x.evidence.push_back(ev(k + "=" + v, k));
  for (const auto& t : c.f.toolkits) {
    x.evidence.push_back(ev("toolkit " + winpath(t.root) + " (CUDA " +
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
    x.evidence.push_back(ev(p + " is in the registry's Path, not in this process's PATH",
                            w->user_path ? w->user_path.source : w->machine_path.source));
  }
  x.evidence.push_back(ev("this process's PATH", c.f.env.source));
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
    hits.push_back(ev(what + ": " + winpath(p), p));
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

void win_paddle_dso(const Ctx& c, Findings& out) {
  const WindowsFacts* w = win(c);
  if (!w) return;
  for (const auto& e : c.f.python) {
    const auto* pd = framework(e, "paddle");
    if (!pd || !pd->cudnn) continue;
    auto want = Version::parse(*pd->cudnn);
    if (!want) continue;
    std::string name = "cudnn64_" + std::to_string(want->major()) + ".dll";
    auto found = findable(c, *w, e, name);
    auto paddle_libs = in_env(*w, e, name);
    Finding x = make_finding(FindingId::win_paddle_third_party_dso, Severity::error, "");
    x.covers.push_back(e.prefix);  // a --deep finding of this id joins it
    x.evidence.push_back(pkg_ev(e, *pd));
    x.evidence.push_back(ev("built with cuDNN " + *pd->cudnn, pd->cudnn.source));
    if (found.empty() && paddle_libs.empty()) {
      x.title = "paddle " + pd->version + " in " + env_name(e) + " loads " + name +
                ", which is not on the DLL search path (error code 126)";
      x.fix.push_back(ps("install cuDNN " + want->truncated(2).str() +
                         " for the CUDA paddle was built with and put its bin folder on PATH, or "
                         "install the paddle wheel whose postXXX tag matches your CUDA/cuDNN"));
      out.push_back(std::move(x));
      continue;
    }
    // The copy that loads: is it complete, and not older than the build?
    const CudnnCopy* copy = nullptr;
    for (const auto& k : c.f.cudnn) {
      if (!found.empty() && to_lower(k.dir) == to_lower(path_dirname(found.front())) &&
          k.major == want->major()) {
        copy = &k;
      }
    }
    if (!copy) continue;
    auto have = copy_version(*copy);
    if (!copy->sublibraries_missing.empty()) {
      x.title = "paddle " + pd->version + " in " + env_name(e) + " loads the incomplete cuDNN in " +
                winpath(copy->dir);
      x.evidence.push_back(ev("missing: " + join(copy->sublibraries_missing, ", "), copy->dir));
      x.fix.push_back(
          ps("copy the complete bin folder of the cuDNN archive into " + winpath(copy->dir)));
    } else if (have && have->truncated(2) < want->truncated(2)) {
      x.severity = Severity::warning;
      x.title = "paddle " + pd->version + " in " + env_name(e) + " was built with cuDNN " +
                want->truncated(2).str() + " but finds cuDNN " + have->str();
      x.evidence.push_back(ev("cuDNN " + have->str() + " first on the search path", copy->library));
      x.fix.push_back(ps("install cuDNN " + want->truncated(2).str() +
                         " (or newer within 8.x) and put it first on PATH"));
    } else {
      continue;
    }
    out.push_back(std::move(x));
  }
}

void win_ctranslate2_cudnn9(const Ctx& c, Findings& out) {
  const WindowsFacts* w = win(c);
  if (!w) return;
  for (const auto& e : c.f.python) {
    const auto* ct = framework(e, "ctranslate2");
    if (!ct) continue;
    auto v = Version::parse(ct->version);
    if (!v || *v < Version{4, 5}) continue;
    std::vector<std::string> where;
    for (const char* n : {"cudnn_ops64_9.dll", "cudnn64_9.dll"}) {
      for (const auto& p : in_env(*w, e, n)) where.push_back(p);
      for (const auto& p : on_search_path(*w, n)) where.push_back(p);
    }
    if (!where.empty()) continue;
    Finding x = make_finding(FindingId::win_cudnn9_required_by_ctranslate2, Severity::error,
                             "ctranslate2 " + ct->version + " in " + env_name(e) +
                                 " needs cuDNN 9 (cudnn_ops64_9.dll), which it cannot find");
    x.evidence.push_back(pkg_ev(e, *ct));
    x.evidence.push_back(ev("ctranslate2 4.5 and later link cuDNN 9", "failure catalog A17"));
    for (const auto& [name, paths] : w->python_dlls) {
      if (!starts_with(name, "cudnn") || !ends_with(name, "64_8.dll")) continue;
      for (const auto& p : paths) {
        if (starts_with_ci(p, e.prefix + "/") && name == "cudnn64_8.dll") {
          x.evidence.push_back(ev("cuDNN 8 only (" + name + ")", p));
        }
      }
    }
    if (const auto* torch = framework(e, "torch")) {
      x.evidence.push_back(pkg_ev(e, *torch));
    }
    x.fix.push_back(ps(
        "upgrade torch to 2.4 or later (it bundles cuDNN 9)",
        pip(e) + " install -U \"torch>=2.4\" --index-url https://download.pytorch.org/whl/cu124"));
    x.fix.push_back(
        ps("or stay on cuDNN 8 with ctranslate2 4.4.0", pip(e) + " install ctranslate2==4.4.0"));
    out.push_back(std::move(x));
  }
}

// This file's entries of the check table (rules/check_table.cc).
const Check windows_no_driver_entry{"windows_no_driver",
                                    "no NVIDIA driver (no nvcuda.dll)",
                                    windows_no_driver,
                                    {FindingId::no_nvidia_driver},
                                    fact_area::driver | fact_area::windows};
const Check win_tf_libraries_entry{
    "win_tf_libraries",
    "the CUDA DLLs TensorFlow loads on Windows",
    win_tf_libraries,
    {FindingId::win_tf_cudart_wrong_cuda_major, FindingId::win_tf_cudnn64_dll_not_found},
    fact_area::cudnn | fact_area::python | fact_area::windows};
const Check win_cudnn_incomplete_entry{
    "win_cudnn_incomplete",
    "cuDNN 8 copies no modelled load takes, missing sub-libraries",
    win_cudnn_incomplete,
    {FindingId::cudnn_sublibrary_missing, FindingId::win_cudnn8_sublibrary_missing},
    fact_area::cudnn | fact_area::loader | fact_area::windows};
const Check win_zlibwapi_entry{"win_zlibwapi",
                               "cuDNN 8.3-8.9 copies no modelled load takes, without zlibwapi.dll",
                               win_zlibwapi,
                               {FindingId::win_zlibwapi_missing},
                               fact_area::cudnn | fact_area::loader | fact_area::windows};
const Check win_vcredist_entry{"win_vcredist",
                               "the Visual C++ runtime",
                               win_vcredist,
                               {FindingId::win_vcredist_not_detected_warning},
                               fact_area::python | fact_area::windows};
const Check win_msvc_too_old_entry{"win_msvc_too_old",
                                   "an MSVC runtime too old for torch (c10.dll, 1114)",
                                   win_msvc_too_old,
                                   {FindingId::win_torch_c10_dll_init_1114},
                                   fact_area::python | fact_area::windows};
const Check win_libomp140_entry{"win_libomp140",
                                "fbgemm.dll's libomp140",
                                win_libomp140,
                                {FindingId::win_torch_fbgemm_libomp140},
                                fact_area::python | fact_area::windows};
const Check win_duplicate_openmp_entry{"win_duplicate_openmp",
                                       "several OpenMP runtimes",
                                       win_duplicate_openmp,
                                       {FindingId::win_duplicate_openmp_runtime},
                                       fact_area::python | fact_area::windows};
const Check win_cuda_path_entry{"win_cuda_path",
                                "CUDA_PATH and the toolkits PATH selects",
                                win_cuda_path,
                                {FindingId::win_cuda_path_confusion},
                                fact_area::toolkits | fact_area::windows};
const Check win_path_not_reloaded_entry{"win_path_not_reloaded",
                                        "a PATH the shell has not reloaded",
                                        win_path_not_reloaded,
                                        {FindingId::win_path_not_reloaded},
                                        fact_area::env | fact_area::windows};
const Check win_special_chars_entry{
    "win_special_chars",
    "install paths with special characters",
    win_special_chars,
    {FindingId::win_install_path_special_chars},
    fact_area::cudnn | fact_area::python | fact_area::toolkits | fact_area::windows};
const Check win_paddle_dso_entry{"win_paddle_dso",
                                 "paddle's third-party DLLs",
                                 win_paddle_dso,
                                 {FindingId::win_paddle_third_party_dso},
                                 fact_area::cudnn | fact_area::python | fact_area::windows};
const Check win_ctranslate2_cudnn9_entry{"win_ctranslate2_cudnn9",
                                         "ctranslate2's cuDNN 9 on Windows",
                                         win_ctranslate2_cudnn9,
                                         {FindingId::win_cudnn9_required_by_ctranslate2},
                                         fact_area::python | fact_area::windows};

}  // namespace checks
}  // namespace dlenv
