// Loader facts for doctor: the loads a process on this machine would really
// make, modelled on the files of the analysed tree by the Linux and Windows
// loader models (never executed, never loaded), plus the preload lists and the
// LD_LIBRARY_PATH entries that are not fixed directories.
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "binfmt/elf.h"
#include "binfmt/pe.h"
#include "platform/parallel.h"
#include "probe/loader_model.h"
#include "probe/loader_model_win.h"
#include "probe/probe.h"
#include "probe/windows_probes.h"
#include "util/strings.h"
#include "util/version.h"

namespace dlenv {
namespace {

// At most this many extension modules are modelled per framework (the GPU ones
// are found within the first few; a bound keeps doctor fast on huge trees).
constexpr size_t kMaxExtensionsPerFramework = 12;

ResolvedLib flatten(const LoadTree& tree, const LoadedObject& o, bool windows) {
  ResolvedLib r;
  r.name = o.name;
  if (o.parent >= 0 && static_cast<size_t>(o.parent) < tree.objects.size()) {
    const auto& p = tree.objects[static_cast<size_t>(o.parent)];
    r.requester = path_basename(p.path.value_or(p.name));
  }
  if (o.path && !o.missing) r.path = *o.path;
  r.rule = std::string(search_rule_name(o.rule));
  r.rule_detail = o.rule_detail;
  r.version = o.version;
  if (windows && o.pe) r.machine = pe_machine_name(o.pe->machine);
  r.companion = o.companion;
  r.delay_load = o.delay_load;
  r.missing = o.missing;
  r.wrong_class = o.wrong_class;
  r.win_error = o.win_error;
  r.family_mismatch = o.family_mismatch;
  r.missing_imports = o.missing_imports;
  for (const auto& s : o.shadowed) r.shadowed.push_back(s.path);
  if (o.missing) r.searched = o.searched;
  r.stub = !r.path.empty() && (contains(r.path, "/stubs/") || contains(o.real_path, "/stubs/"));
  r.problem = o.problem;
  return r;
}

void take_tree(LoadContext& c, const Result<LoadTree>& tree, bool windows) {
  if (!tree) {
    c.error = tree.error().message;
    return;
  }
  for (const auto& o : tree->objects) c.libs.push_back(flatten(*tree, o, windows));
}

// ---- Linux -------------------------------------------------------------------------

std::string real_version(const FileSystem& fs, const std::string& path) {
  std::string base = path_basename(fs.real_path(path).value_or(path));
  auto pos = base.find(".so.");
  return pos == std::string::npos ? "" : base.substr(pos + 4);
}

// Calls fn(i) for each i in [0, count), on the machine's hardware threads: doctor's walks
// (each cuDNN copy, each environment's frameworks) are independent, and each one runs on
// one thread (LinuxLoaderSettings::parallel_lookups off).
void in_parallel(size_t count, const std::function<void(size_t)>& fn) {
  for_each_range(
      count,
      [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) fn(i);
      },
      1);
}

// probe/loader.cc's settings, with the NVIDIA run-time companions, and the files the walks
// share: every environment's framework libraries, mostly hard links of one set, and the
// cuDNN copies are parsed once, their directories read once.
LinuxLoaderSettings linux_settings(const LoaderConfig& loader,
                                   const std::shared_ptr<LoaderFileCache>& files) {
  LinuxLoaderSettings ls = linux_loader_settings(loader);
  ls.files = files;
  ls.parallel_lookups = false;  // the walks run side by side instead (in_parallel)
  ls.companions = true;
  // The cuDNN sub-libraries come from the companion table; scanning the libraries' data
  // for the cuBLASLt/NVRTC they dlopen reads hundreds of MB (110 ms of a 150 ms doctor
  // on the build machine's cuDNN 9.14, measured with perf): not in doctor's budget.
  ls.companion_strings = false;
  return ls;
}

// LD_PRELOAD (separated by spaces or colons) and /etc/ld.so.preload (white space).
void read_preload(const ProbeContext& ctx, const LoaderConfig& loader,
                  const std::shared_ptr<LoaderFileCache>& files, LoaderFacts& out) {
  std::vector<std::pair<std::string, std::string>> entries;  // entry, source
  if (auto v = ctx.env.get("LD_PRELOAD")) {
    std::string s = *v;
    std::replace(s.begin(), s.end(), ':', ' ');
    for (const auto& e : split(s, ' ')) {
      if (!trim(e).empty()) entries.emplace_back(std::string(trim(e)), "LD_PRELOAD");
    }
  }
  if (auto text = ctx.fs.read_file("/etc/ld.so.preload")) {
    std::string s = *text;
    for (char& ch : s) {
      if (ch == '\t' || ch == '\n' || ch == '\r' || ch == ':') ch = ' ';
    }
    for (const auto& e : split(s, ' ')) {
      if (!trim(e).empty()) entries.emplace_back(std::string(trim(e)), "/etc/ld.so.preload");
    }
  }
  LinuxLoaderSettings ls = linux_settings(loader, files);
  ls.companions = false;
  for (const auto& [entry, source] : entries) {
    PreloadEntry p;
    p.entry = entry;
    p.source = source;
    if (entry.find('/') != std::string::npos) {
      if (ctx.fs.exists(entry)) p.path = entry;
    } else {
      // A bare name is searched like a DT_NEEDED entry of the program.
      auto tree = model_linux_load(ctx.fs, ctx.kb, entry, ls);
      if (tree && !tree->objects.empty() && tree->objects[0].path && !tree->objects[0].missing) {
        p.path = *tree->objects[0].path;
      }
    }
    if (!p.path.empty()) {
      if (auto m = ctx.fs.map_file(p.path)) {
        auto elf = parse_elf((*m)->bytes(), p.path);
        if (elf && *elf && (**elf).soname) p.soname = *(**elf).soname;
      }
      p.version = real_version(ctx.fs, p.path);
      p.stub = contains(p.path, "/stubs/");
    }
    out.preload.push_back(std::move(p));
  }
}

void ld_library_path_issues(const ProbeContext& ctx, LoaderFacts& out) {
  auto v = ctx.env.get("LD_LIBRARY_PATH");
  if (!v) return;
  out.ld_library_path = *v;
  if (v->empty()) return;
  auto parts = split(*v, ':', true);
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& e = parts[i];
    LdPathIssue x;
    x.entry = e;
    x.position = static_cast<int>(i + 1);
    if (e.empty()) {
      x.kind = "empty";
      x.meaning =
          "an empty entry (a leading, trailing or doubled ':') makes ld.so search the current "
          "directory of whatever program runs";
    } else if (contains(e, "$ORIGIN") || contains(e, "${ORIGIN}")) {
      x.kind = "origin";
      x.meaning =
          "$ORIGIN in LD_LIBRARY_PATH is the directory of the program's executable (e.g. the "
          "python binary's bin directory), not of the library that needs a dependency; it is "
          "ignored entirely for setuid programs";
    } else if (e[0] == '~' || (e.find('$') != std::string::npos && !contains(e, "$LIB") &&
                               !contains(e, "${LIB}") && !contains(e, "$PLATFORM") &&
                               !contains(e, "${PLATFORM}"))) {
      x.kind = "token";
      x.meaning =
          "ld.so does not expand shell variables or '~': the entry is read literally as a "
          "directory name, which does not exist";
    } else if (e[0] != '/' && e[0] != '$') {
      x.kind = "relative";
      x.meaning =
          "a relative entry is taken relative to the current directory of whatever program "
          "runs, so it changes with `cd`";
    } else {
      continue;
    }
    out.ld_library_path_issues.push_back(std::move(x));
  }
}

void framework_contexts(const ProbeContext& ctx, const LinuxLoaderSettings& base, const Facts& f,
                        LoaderFacts& out);

void linux_contexts(const ProbeContext& ctx, const LoaderConfig& loader,
                    const std::shared_ptr<LoaderFileCache>& files, const Facts& f,
                    LoaderFacts& out) {
  LinuxLoaderSettings ls = linux_settings(loader, files);
  for (const auto& p : out.preload) {
    if (!p.soname.empty()) ls.preloaded.push_back(p.soname);
  }
  // Each cuDNN copy's main library with the sub-libraries it opens at run time.
  std::vector<const CudnnCopy*> copies;
  for (const auto& k : f.cudnn) {
    if (ctx.fs.exists(k.library)) copies.push_back(&k);
  }
  // A program that opens the CUDA libraries by name (dlopen from a binary without
  // RPATH/RUNPATH): what LD_PRELOAD, LD_LIBRARY_PATH and the cache make it take.
  std::set<std::string> name_set;
  for (const auto& k : f.cudnn) name_set.insert("libcudnn.so." + std::to_string(k.major));
  for (const auto& t : f.toolkits) {
    if (!t.version) continue;
    const std::string m = std::to_string(t.version->major());
    name_set.insert("libcublas.so." + m);
    name_set.insert("libcudart.so." + m);
  }
  name_set.insert("libcuda.so.1");
  // Some loaders (numba, older code) open the unversioned name, which the toolkit's stubs
  // directory provides by default.
  name_set.insert("libcuda.so");
  const std::vector<std::string> names(name_set.begin(), name_set.end());
  LinuxLoaderSettings plain = ls;
  plain.companions = false;
  // The copies, then the names, each walk on its own (in_parallel), kept in this order.
  std::vector<LoadContext> contexts(copies.size() + names.size());
  in_parallel(contexts.size(), [&](size_t i) {
    LoadContext& c = contexts[i];
    if (i < copies.size()) {
      const CudnnCopy& k = *copies[i];
      c.kind = "cudnn-copy";
      c.root = k.library;
      c.label = "cuDNN " + std::to_string(k.major) + " in " + k.dir;
      take_tree(c, model_linux_load(ctx.fs, ctx.kb, k.library, ls), false);
      return;
    }
    const std::string& n = names[i - copies.size()];
    c.kind = "by-name";
    c.root = n;
    c.label = "a program opening " + n + " by name (dlopen)";
    take_tree(c, model_linux_load(ctx.fs, ctx.kb, n, plain), false);
    // dlopen(name) matches the soname of an object already in the process first: a
    // preloaded library with that soname wins over every search.
    for (const auto& p : out.preload) {
      if (p.soname != n || c.libs.empty()) continue;
      ResolvedLib& r = c.libs[0];
      if (!r.path.empty() && r.path != p.path) r.shadowed.insert(r.shadowed.begin(), r.path);
      r.path = p.path;
      r.version = p.version;
      r.missing = false;
      r.rule = "already loaded";
      r.rule_detail = "preloaded in the process by " + p.source + " ('" + p.entry + "')";
      r.problem.clear();
      break;
    }
  });
  for (auto& c : contexts) out.contexts.push_back(std::move(c));
  framework_contexts(ctx, ls, f, out);
}

// ---- Linux: the frameworks of each Python environment -------------------------------

// The library of a framework's wheel that links (or opens) cuDNN and cuBLAS, relative to
// site-packages: the first of these that exists. Listed directories are searched for a
// file name prefix (their names carry a hash or the Python tag).
struct ExtensionPlace {
  std::vector<std::string> files;
  std::string dir;     // or: the first file in this directory
  std::string prefix;  // whose name starts with this
  std::string suffix;  // and contains this
};

ExtensionPlace extension_place(const std::string& fw) {
  if (fw == "torch") return {{"torch/lib/libtorch_cuda.so"}, "", "", ""};
  if (fw == "jax") return {{}, "jax_plugins", "xla_cuda", ""};  // .../xla_cuda_plugin.so
  if (fw == "paddle")
    return {{"paddle/base/libpaddle.so", "paddle/fluid/libpaddle.so"}, "", "", ""};
  if (fw == "onnxruntime")
    return {{"onnxruntime/capi/libonnxruntime_providers_cuda.so"}, "", "", ""};
  if (fw == "ctranslate2") return {{}, "ctranslate2.libs", "libctranslate2", ".so"};
  if (fw == "cupy") return {{}, "cupy_backends/cuda/libs", "cudnn.", ".so"};
  if (fw == "tensorflow") {
    return {{"tensorflow/python/_pywrap_tensorflow_internal.so", "tensorflow/libtensorflow_cc.so.2",
             "tensorflow/libtensorflow_framework.so.2"},
            "",
            "",
            ""};
  }
  return {};
}

std::optional<std::string> extension_file(const FileSystem& fs, const std::string& site,
                                          const std::string& fw) {
  const ExtensionPlace p = extension_place(fw);
  for (const auto& f : p.files) {
    if (fs.exists(path_join(site, f))) return path_join(site, f);
  }
  if (p.dir.empty()) return std::nullopt;
  auto entries = fs.list_dir(path_join(site, p.dir));
  if (!entries) return std::nullopt;
  std::vector<std::string> names;
  for (const auto& e : *entries) {
    if (starts_with(e.name, p.prefix) && contains(e.name, p.suffix)) names.push_back(e.name);
  }
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    std::string f = path_join(path_join(site, p.dir), n);
    if (fw == "jax") f = path_join(f, "xla_cuda_plugin.so");
    if (fs.exists(f)) return f;
  }
  return std::nullopt;
}

int version_major(const std::string& v) {
  return Version::parse(v).value_or(Version{}).major();
}

// The cuDNN major a framework opens by name at run time (dlopen), when its extension does
// not list cuDNN as DT_NEEDED: the cuDNN it says it was built for, else what its release
// is known to load (failure catalog: TF <= 2.15 and ctranslate2 < 4.5 load cuDNN 8, ORT 1.x
// for CUDA 11 cuDNN 8).
int dlopened_cudnn_major(const FrameworkFacts& fw) {
  if (fw.cudnn.ok()) {
    if (int m = version_major(*fw.cudnn); m > 0) return m;
  }
  auto v = Version::parse(fw.version);
  if (!v) return 0;
  if (fw.name == "tensorflow") return *v <= Version{2, 15, 99} ? 8 : 9;
  if (fw.name == "ctranslate2") return *v < Version{4, 5} ? 8 : 9;
  if (fw.name == "onnxruntime" && fw.cuda.ok()) {
    const int cm = version_major(*fw.cuda);
    return cm == 11 || *v < Version{1, 19} ? 8 : 9;
  }
  return 0;
}

// ctranslate2's Linux wheels are always CUDA builds (the package says nothing).
bool cuda_framework(const FrameworkFacts& fw) {
  if (fw.cuda_build.ok()) return *fw.cuda_build;
  return fw.cuda.ok() || fw.name == "ctranslate2";
}

// A framework library's load into `c`. The run-time companions of each cuDNN main library
// it reaches come from that copy's own "cudnn-copy" context (modelled before): a main library
// with DT_RUNPATH opens its sub-libraries through LD_LIBRARY_PATH and its own DT_RUNPATH only
// (the loading chain's DT_RPATH does not apply), so they resolve the same, and cuDNN's large
// sub-libraries are not read a second time (doctor's time budget). A main library without
// DT_RUNPATH (cuDNN 8), or a copy without a context, gets the whole load modelled.
// The "cudnn-copy" contexts modelled without an error, as (real path of the root, index in
// LoaderFacts::contexts), in context order: resolved once, not once per framework library.
using CudnnCopies = std::vector<std::pair<std::string, size_t>>;

CudnnCopies cudnn_copies(const ProbeContext& ctx, const LoaderFacts& out) {
  CudnnCopies copies;
  for (size_t i = 0; i < out.contexts.size(); ++i) {
    const LoadContext& k = out.contexts[i];
    if (k.kind == "cudnn-copy" && k.error.empty()) {
      copies.emplace_back(ctx.fs.real_path(k.root).value_or(k.root), i);
    }
  }
  return copies;
}

Result<LoadTree> model_framework(const ProbeContext& ctx, const std::string& file,
                                 const LinuxLoaderSettings& ls, const LoaderFacts& out,
                                 const CudnnCopies& copies, LoadContext& c) {
  LinuxLoaderSettings plain = ls;
  plain.companions = false;
  auto tree = model_linux_load(ctx.fs, ctx.kb, file, plain);
  if (!tree) {
    take_tree(c, tree, false);
    return tree;
  }
  std::vector<const LoadContext*> grafts;
  bool whole = false;
  for (const auto& o : tree->objects) {
    if (!starts_with(o.name, "libcudnn") || !o.path || o.missing || !o.elf) continue;
    const LoadContext* copy = nullptr;
    const std::string real = ctx.fs.real_path(*o.path).value_or(*o.path);
    for (const auto& [root, k] : copies) {
      if (root == real) copy = &out.contexts[k];  // the last match
    }
    if (!o.elf->runpath || !copy) {
      whole = true;
      break;
    }
    grafts.push_back(copy);
  }
  if (whole) {
    tree = model_linux_load(ctx.fs, ctx.kb, file, ls);
    take_tree(c, tree, false);
    return tree;
  }
  take_tree(c, tree, false);
  for (const auto* copy : grafts) {
    for (size_t i = 1; i < copy->libs.size(); ++i) {
      const ResolvedLib& l = copy->libs[i];
      if (std::none_of(c.libs.begin(), c.libs.end(),
                       [&](const ResolvedLib& x) { return x.name == l.name; })) {
        c.libs.push_back(l);
      }
    }
  }
  return tree;
}

void framework_contexts(const ProbeContext& ctx, const LinuxLoaderSettings& base, const Facts& f,
                        LoaderFacts& out) {
  LinuxLoaderSettings ls = base;
  ls.companions = true;
  ls.companion_strings = false;
  ls.symbols = false;
  const CudnnCopies copies = cudnn_copies(ctx, out);
  std::vector<std::pair<const PythonEnv*, const FrameworkFacts*>> jobs;
  for (const auto& e : f.python) {
    for (const auto& fw : e.frameworks) {
      if (cuda_framework(fw)) jobs.emplace_back(&e, &fw);
    }
  }
  // Each environment's framework: its library's load, then the cuDNN it opens at run time;
  // side by side (in_parallel), kept in environment order.
  std::vector<std::vector<LoadContext>> made(jobs.size());
  in_parallel(jobs.size(), [&](size_t j) {
    const PythonEnv& e = *jobs[j].first;
    const FrameworkFacts& fw = *jobs[j].second;
    std::optional<std::string> file;
    for (const auto& site : e.site_packages) {
      if ((file = extension_file(ctx.fs, site, fw.name))) break;
    }
    if (!file) return;
    LoadContext c;
    c.kind = "framework";
    c.root = *file;
    c.framework = fw.name;
    c.python_prefix = e.prefix;
    c.python_interpreter = e.interpreter.value.value_or("");
    c.cuda = fw.cuda.value.value_or("");
    c.label = fw.name + " " + fw.version + " (" + path_basename(*file) + ") in " + e.prefix;
    auto tree = model_framework(ctx, *file, ls, out, copies, c);
    bool needs_cudnn = false;
    for (const auto& l : c.libs) needs_cudnn |= starts_with(l.name, "libcudnn");
    made[j].push_back(c);
    if (!tree || needs_cudnn) return;
    const int major = dlopened_cudnn_major(fw);
    if (major <= 0 || tree->objects.empty() || !tree->objects[0].elf) return;
    // dlopen("libcudnn.so.N") from the extension: its DT_RPATH (when it has no
    // DT_RUNPATH), LD_LIBRARY_PATH, its DT_RUNPATH, then the cache and default dirs.
    const ElfInfo& elf = *tree->objects[0].elf;
    LinuxLoaderSettings dl = ls;
    dl.companions = false;
    dl.dlopen_caller = LinuxLoaderSettings::DlopenCaller{*file, elf.rpath, elf.runpath};
    const std::string name = "libcudnn.so." + std::to_string(major);
    LoadContext d = c;
    d.kind = "framework-dlopen";
    d.libs.clear();
    d.label = c.label + " opening " + name + " at run time (dlopen)";
    take_tree(d, model_linux_load(ctx.fs, ctx.kb, name, dl), false);
    if (!d.libs.empty()) {
      d.libs[0].requester = path_basename(*file);
      d.libs[0].companion = true;
    }
    made[j].push_back(std::move(d));
  });
  for (auto& m : made) {
    for (auto& c : m) out.contexts.push_back(std::move(c));
  }
}

// ---- Windows -----------------------------------------------------------------------

WindowsLoaderSettings windows_settings(const ProbeContext& ctx) {
  WindowsLoaderSettings ws;
  ws.windows_dir = win_windows_dir(ctx);
  if (auto p = win_env(ctx, "PATH")) {
    for (const auto& e : win_path_entries(*p)) {
      std::string l = win_logical(ctx, e);
      if (!l.empty()) ws.path.push_back(l);
    }
  }
  for (const auto& [k, v] : ctx.env.all()) {
    if (to_lower(k) == "cuda_path" || starts_with(to_lower(k), "cuda_path_v")) {
      std::string l = win_logical(ctx, v);
      if (!l.empty()) ws.hint_dirs.push_back(path_join(l, "bin"));
    }
  }
  return ws;
}

std::optional<Version> python_version(const PythonEnv& e) {
  if (!e.version) return std::nullopt;
  return Version::parse(*e.version);
}

// A 32-bit python.exe loads only x86 DLLs (a 64-bit one there is error 193 too).
uint16_t python_machine(const PythonEnv& e) {
  return e.bits && *e.bits == 32 ? 0x14c : 0;
}

// The package directory of a framework ("<site>/torch") and the directories its
// own __init__ registers with os.add_dll_directory.
struct FrameworkDirs {
  std::string package_dir;
  std::vector<std::string> user_dirs;
};

std::optional<FrameworkDirs> framework_dirs(const ProbeContext& ctx, const PythonEnv& e,
                                            const FrameworkFacts& fw) {
  static const std::map<std::string, std::string> import_names = {{"torch", "torch"},
                                                                  {"tensorflow", "tensorflow"},
                                                                  {"jax", "jaxlib"},
                                                                  {"paddle", "paddle"},
                                                                  {"onnxruntime", "onnxruntime"},
                                                                  {"cupy", "cupy"},
                                                                  {"ctranslate2", "ctranslate2"}};
  auto it = import_names.find(fw.name);
  if (it == import_names.end()) return std::nullopt;
  for (const auto& site : e.site_packages) {
    auto dir = win_child(ctx.fs, site, it->second);
    if (!dir || !ctx.fs.is_dir(*dir)) continue;
    FrameworkDirs d;
    d.package_dir = *dir;
    if (fw.name == "torch") {
      // torch/__init__.py (_load_dll_libraries): torch\lib, <prefix>\Library\bin and,
      // when none of them holds a cudart64*.dll, CUDA_PATH_V<major>_<minor>\bin (else the
      // default toolkit folder) of the CUDA it was built for.
      auto lib = win_child(ctx.fs, *dir, "lib");
      if (lib) d.user_dirs.push_back(*lib);
      bool cudart = false;
      if (lib) {
        if (auto es = ctx.fs.list_dir(*lib)) {
          for (const auto& x : *es) cudart |= starts_with(to_lower(x.name), "cudart64");
        }
      }
      if (!cudart && fw.cuda) {
        std::string var = "CUDA_PATH_V" + *fw.cuda;
        std::replace(var.begin(), var.end(), '.', '_');
        auto v = win_env(ctx, var);
        std::string root =
            v ? win_logical(ctx, *v)
              : path_join(win_program_files(ctx), "NVIDIA GPU Computing Toolkit/CUDA/v" + *fw.cuda);
        if (!root.empty()) d.user_dirs.push_back(path_join(root, "bin"));
      }
    }
    if (auto lb = win_find(ctx.fs, path_join(win_logical(ctx, e.prefix), "Library/bin"));
        lb && (fw.name == "torch" || e.kind == "conda")) {
      d.user_dirs.push_back(*lb);
    }
    return d;
  }
  return std::nullopt;
}

// The extension modules (*.pyd) of a package, its top directory first, then one
// and two levels down, in name order.
std::vector<std::string> extension_modules(const FileSystem& fs, const std::string& dir) {
  std::vector<std::string> out;
  std::vector<std::string> level = {dir};
  for (int depth = 0; depth < 3 && out.size() < kMaxExtensionsPerFramework; ++depth) {
    std::vector<std::string> next;
    for (const auto& d : level) {
      auto entries = fs.list_dir(d);
      if (!entries) continue;
      std::vector<std::string> names;
      for (const auto& e : *entries) names.push_back(e.name);
      std::sort(names.begin(), names.end());
      for (const auto& n : names) {
        std::string p = path_join(d, n);
        if (ends_with(to_lower(n), ".pyd")) {
          if (out.size() < kMaxExtensionsPerFramework) out.push_back(p);
        } else if (n != "__pycache__" && n != "include" && n != "test" && n != "tests" &&
                   fs.is_dir(p)) {
          next.push_back(p);
        }
      }
    }
    level = std::move(next);
  }
  return out;
}

// Copies of `name` in the PATH directories (case-insensitive).
std::vector<std::string> copies_on_path(const ProbeContext& ctx,
                                        const std::vector<std::string>& path,
                                        const std::string& name) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& d : path) {
    if (!seen.insert(to_lower(d)).second) continue;
    if (auto p = win_child(ctx.fs, d, name)) out.push_back(*p);
  }
  return out;
}

bool cuda_family_dll(std::string_view lower) {
  for (const char* p : {"cudnn", "cublas", "cudart", "cufft", "curand", "cusolver", "cusparse",
                        "nvrtc", "nvjitlink", "zlibwapi"}) {
    if (lower.starts_with(p)) return true;
  }
  return false;
}

void windows_contexts(const ProbeContext& ctx, const Facts& f, LoaderFacts& out) {
  const WindowsLoaderSettings base = windows_settings(ctx);
  std::string app_dir;
  uint16_t machine = 0;  // the process's: x64 unless the first Python is 32-bit
  for (const auto& e : f.python) {
    if (e.interpreter) {
      app_dir = path_dirname(win_logical(ctx, *e.interpreter));
      machine = python_machine(e);
      break;
    }
  }
  // The CUDA-family DLLs a program (python.exe) opens by name with the standard search.
  std::set<std::string> names;
  for (const auto& k : f.cudnn) names.insert(to_lower(path_basename(k.library)));
  if (f.windows) {
    for (const auto& r : f.windows->resolved) {
      if (ends_with(r.name, ".dll") && cuda_family_dll(r.name) && !starts_with(r.name, "zlib")) {
        names.insert(r.name);
      }
    }
  }
  for (const auto& n : names) {
    WindowsLoaderSettings ws = base;
    ws.app_dir = app_dir;
    ws.machine = machine;
    LoadContext c;
    c.kind = "by-name";
    c.root = n;
    c.label = (app_dir.empty() ? std::string("a program") : "python.exe") + " loading " + n +
              " by name (standard search: application directory, System32, Windows, PATH)";
    take_tree(c, model_windows_load(ctx.fs, ctx.kb, n, ws), true);
    out.contexts.push_back(std::move(c));
  }
  // Python >= 3.8: a framework's extension modules, loaded with
  // LOAD_LIBRARY_SEARCH_DEFAULT_DIRS | LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR (PATH not searched).
  for (const auto& e : f.python) {
    auto pv = python_version(e);
    if (!pv || *pv < Version{3, 8} || !e.interpreter) continue;
    for (const auto& fw : e.frameworks) {
      auto dirs = framework_dirs(ctx, e, fw);
      if (!dirs) continue;
      for (const auto& pyd : extension_modules(ctx.fs, dirs->package_dir)) {
        WindowsLoaderSettings ws = base;
        ws.app_dir = path_dirname(win_logical(ctx, *e.interpreter));
        ws.machine = python_machine(e);
        ws.user_dirs = dirs->user_dirs;
        ws.flags = kLoadLibrarySearchDefaultDirs | kLoadLibrarySearchDllLoadDir;
        ws.python_extension = true;
        LoadContext c;
        c.kind = "python-extension";
        c.root = pyd;
        c.python_interpreter = *e.interpreter;
        c.python_version = *e.version;
        c.framework = fw.name;
        c.user_dirs = dirs->user_dirs;
        c.label =
            "Python " + *e.version + " (" + *e.interpreter + ") importing " + path_basename(pyd);
        take_tree(c, model_windows_load(ctx.fs, ctx.kb, pyd, ws), true);
        for (auto& lib : c.libs) {
          if (lib.missing) lib.path_copy = copies_on_path(ctx, ws.path, lib.name);
        }
        // Only extension modules that reach a CUDA-family DLL matter here.
        bool cuda = false;
        for (const auto& lib : c.libs) cuda |= cuda_family_dll(to_lower(path_basename(lib.name)));
        if (cuda) out.contexts.push_back(std::move(c));
      }
    }
  }
}

}  // namespace

LoaderFacts probe_loader_facts(const ProbeContext& ctx, const LoaderConfig& loader,
                               const Facts& facts) {
  LoaderFacts out;
  if (ctx.os == Os::windows) {
    windows_contexts(ctx, facts, out);
    return out;
  }
  const auto files = std::make_shared<LoaderFileCache>(ctx.fs);
  read_preload(ctx, loader, files, out);
  ld_library_path_issues(ctx, out);
  linux_contexts(ctx, loader, files, facts, out);
  return out;
}

}  // namespace dlenv
