#include "probe/python_gpu.h"

#include <algorithm>
#include <set>

#include "binfmt/elf.h"
#include "binfmt/pe.h"
#include "platform/env.h"
#include "probe/loader_model.h"
#include "util/strings.h"

namespace dlenv {
namespace {

const FrameworkFacts* find_fw(const PythonEnv& e, std::string_view name) {
  for (const auto& f : e.frameworks) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// Names of CUDA libraries worth reporting among a GPU library's dependencies.
bool cuda_name(std::string_view n) {
  std::string l = to_lower(n);
  for (const char* p : {"libcu", "libnv", "libnccl", "cublas", "cudnn", "cudart", "cufft", "curand",
                        "cusparse", "cusolver", "nvrtc", "nvjitlink", "nvinfer"}) {
    if (starts_with(l, p)) return true;
  }
  return false;
}

// A file named `name` in site-packages/nvidia/*/lib (bin on Windows): the pip wheels'
// copies, which the system loader does not search. "" when none.
std::string wheel_copy(const FileSystem& fs, const PythonEnv& e, const std::string& name,
                       bool windows) {
  for (const auto& site : e.site_packages) {
    std::string nv = path_join(site, "nvidia");
    auto subs = fs.list_dir(nv);
    if (!subs) continue;
    for (const auto& s : *subs) {
      std::string dir = path_join(path_join(nv, s.name), windows ? "bin" : "lib");
      auto files = fs.list_dir(dir);
      if (!files) continue;
      for (const auto& f : *files) {
        if (windows ? to_lower(f.name) == to_lower(name) : f.name == name) {
          return path_join(dir, f.name);
        }
      }
    }
  }
  return "";
}

NeededLibrary from_object(const LoadedObject& o) {
  NeededLibrary n;
  n.name = o.name;
  if (o.path && !o.missing && !o.wrong_class) {
    n.resolved = *o.path;
    n.version = o.version;
    // The detail already names the rule ("DT_RUNPATH of libx.so: $ORIGIN").
    n.via = o.rule_detail.empty() ? std::string(search_rule_name(o.rule)) : o.rule_detail;
  }
  return n;
}

// Windows DLL search for a DLL loaded by a DLL in `own_dir` (LoadLibraryEx with the
// default flags): its own directory, System32, then PATH. Case-insensitive.
NeededLibrary find_dll(const ProbeContext& ctx, const std::string& name,
                       const std::vector<std::pair<std::string, std::string>>& first_dirs) {
  NeededLibrary n;
  n.name = name;
  std::vector<std::pair<std::string, std::string>> dirs = first_dirs;
  dirs.push_back({"C:/Windows/System32", "System32"});
  if (auto p = ctx.env.get("PATH")) {
    for (const auto& d : split_path_list(*p, ';')) dirs.push_back({d, "PATH"});
  }
  std::string want = to_lower(name);
  for (const auto& [dir, via] : dirs) {
    auto files = ctx.fs.list_dir(dir);
    if (!files) continue;
    for (const auto& f : *files) {
      if (to_lower(f.name) == want) {
        n.resolved = path_join(dir, f.name);
        n.via = via;
        return n;
      }
    }
  }
  return n;
}

void ort_provider(const ProbeContext& ctx, const LoaderConfig& loader, PythonEnv& e,
                  FrameworkFacts& f, const std::string& location) {
  const bool win = ctx.os == Os::windows;
  std::string capi = path_join(location, "onnxruntime/capi");
  std::string prov =
      path_join(capi, win ? "onnxruntime_providers_cuda.dll" : "libonnxruntime_providers_cuda.so");
  if (!ctx.fs.exists(prov)) return;
  f.gpu_library = prov;
  if (win) {
    auto mapped = ctx.fs.map_file(prov);
    if (!mapped) return;
    auto pe = parse_pe((*mapped)->bytes(), prov);
    if (!pe || !*pe) return;
    std::vector<std::string> names;
    for (const auto* list : {&(**pe).imports, &(**pe).delay_imports}) {
      for (const auto& imp : *list) {
        if (cuda_name(imp.dll)) names.push_back(imp.dll);
      }
    }
    for (const auto& n : names) {
      NeededLibrary x = find_dll(ctx, n, {{capi, "the provider's directory"}});
      if (x.resolved.empty()) x.wheel_copy = wheel_copy(ctx.fs, e, n, true);
      f.needed.push_back(std::move(x));
    }
    return;
  }
  auto tree = model_linux_load(ctx.fs, ctx.kb, prov, linux_loader_settings(loader));
  if (!tree) return;
  for (const auto& o : tree->objects) {
    if (o.parent != 0 || !cuda_name(o.name)) continue;
    NeededLibrary x = from_object(o);
    if (x.resolved.empty()) x.wheel_copy = wheel_copy(ctx.fs, e, o.name, false);
    f.needed.push_back(std::move(x));
  }
}

// PaddlePaddle opens cuDNN by name at run time (phi/backends/dynload): wheels built with
// pip CUDA libraries take libcudnn.so.N from site-packages/nvidia/cudnn/lib; the others
// dlopen the unversioned "libcudnn.so" (which only the -dev packages provide), then try
// /usr/local/cuda/lib64.
void paddle_cudnn(const ProbeContext& ctx, const LoaderConfig& loader, PythonEnv& e,
                  FrameworkFacts& f) {
  if (!f.cuda_build.ok() || !*f.cuda_build) return;
  auto cudnn = f.cudnn ? Version::parse(*f.cudnn) : std::nullopt;
  if (ctx.os == Os::windows) return;  // cudnn64_N.dll on PATH: rules/windows_*_checks.cc
  if (f.pip_cuda_libraries) {
    if (!cudnn) return;
    std::string name = "libcudnn.so." + std::to_string(cudnn->major());
    f.gpu_library = "paddle (pip CUDA libraries: " + name + " from site-packages/nvidia/cudnn/lib)";
    NeededLibrary x;
    x.name = name;
    for (const auto& site : e.site_packages) {
      std::string p = path_join(site, "nvidia/cudnn/lib/" + name);
      if (ctx.fs.exists(p)) {
        x.resolved = p;
        x.via = "pip wheel directory";
        for (const auto& pk : e.packages) {
          if (starts_with(pk.name, "nvidia-cudnn-cu")) x.version = pk.version;
        }
        break;
      }
    }
    f.needed.push_back(std::move(x));
    return;
  }
  f.gpu_library = "paddle (GetCUDNNDsoHandle: dlopen libcudnn.so, then /usr/local/cuda/lib64)";
  NeededLibrary x;
  x.name = "libcudnn.so";
  if (auto tree = model_linux_load(ctx.fs, ctx.kb, "libcudnn.so", linux_loader_settings(loader));
      tree && !tree->objects.empty()) {
    x = from_object(tree->objects[0]);
  }
  if (x.resolved.empty()) {
    std::string fallback = "/usr/local/cuda/lib64/libcudnn.so";
    if (ctx.fs.exists(fallback)) {
      x.resolved = fallback;
      x.via = "paddle's fallback directory /usr/local/cuda/lib64";
      std::string real = ctx.fs.real_path(fallback).value_or(fallback);
      auto b = path_basename(real);
      if (auto p = b.find(".so."); p != std::string::npos) x.version = b.substr(p + 4);
    }
  }
  if (x.resolved.empty() && cudnn) {
    x.wheel_copy = wheel_copy(ctx.fs, e, "libcudnn.so." + std::to_string(cudnn->major()), false);
  }
  f.needed.push_back(std::move(x));
}

// "__nvJitLinkAddData_12_4" -> {12, 4}.
std::optional<Version> nvjitlink_tag(std::string_view sym) {
  if (!starts_with(sym, "__nvJitLink")) return std::nullopt;
  auto last = sym.rfind('_');
  if (last == std::string_view::npos || last == 0) return std::nullopt;
  auto prev = sym.rfind('_', last - 1);
  if (prev == std::string_view::npos) return std::nullopt;
  auto maj = parse_int(sym.substr(prev + 1, last - prev - 1));
  auto min = parse_int(sym.substr(last + 1));
  if (!maj || !min) return std::nullopt;
  return Version{static_cast<int>(*maj), static_cast<int>(*min)};
}

}  // namespace

void read_conda_meta(const FileSystem& fs, PythonEnv& e) {
  if (e.kind != "conda") return;
  std::string meta = path_join(e.prefix, "conda-meta");
  auto entries = fs.list_dir(meta);
  if (!entries) return;
  static const std::set<std::string> wanted = {
      "pytorch",      "pytorch-mutex",   "cpuonly",         "pytorch-cuda", "cudatoolkit",
      "cuda-version", "cuda-cudart",     "cuda-runtime",    "cuda-nvcc",    "cudnn",
      "libtorch",     "tensorflow",      "tensorflow-base", "jaxlib",       "cupy",
      "cupy-core",    "paddlepaddle-gpu"};
  for (const auto& x : *entries) {
    if (!ends_with(x.name, ".json")) continue;
    std::string stem = x.name.substr(0, x.name.size() - 5);
    auto b = stem.rfind('-');
    if (b == std::string::npos || b == 0) continue;
    auto v = stem.rfind('-', b - 1);
    if (v == std::string::npos || v == 0) continue;
    CondaPackage p;
    p.name = stem.substr(0, v);
    if (!wanted.contains(p.name)) continue;
    p.version = stem.substr(v + 1, b - v - 1);
    p.build = stem.substr(b + 1);
    p.source = path_join(meta, x.name);
    e.conda.push_back(std::move(p));
  }
}

void inspect_framework_libraries(const ProbeContext& ctx, const LoaderConfig& loader,
                                 PythonEnv& e) {
  for (auto& f : e.frameworks) {
    std::string location;
    for (const auto& p : e.packages) {
      if (p.name == f.package) location = p.location;
    }
    if (location.empty()) continue;
    if (f.name == "onnxruntime") ort_provider(ctx, loader, e, f, location);
    if (f.name == "paddle") paddle_cudnn(ctx, loader, e, f);
  }
}

void read_cusparse_needs(const FileSystem& fs, PythonEnv& e) {
  for (auto& c : e.cuda_libs) {
    if (c.library != "cusparse") continue;
    auto mapped = fs.map_file(fs.real_path(c.path).value_or(c.path));
    if (!mapped) continue;
    ElfParseOptions o;
    o.symbols = true;
    auto elf = parse_elf((*mapped)->bytes(), c.path, o);
    if (!elf || !*elf) continue;
    std::optional<Version> best;
    for (const auto& s : (**elf).dynamic_symbols) {
      if (s.defined) continue;
      auto v = nvjitlink_tag(s.name);
      if (v && (!best || *best < *v)) best = v;
    }
    if (best) c.needs_nvjitlink = best->str();
  }
}

void find_xla_dirs(const ProbeContext& ctx, PythonEnv& e) {
  if (!find_fw(e, "jax") && !find_fw(e, "tensorflow")) return;
  const auto& fs = ctx.fs;
  auto add = [&](const std::string& dir, const std::string& via) {
    for (const auto& d : e.xla_dirs) {
      if (d.dir == dir) return;
    }
    XlaCudaDir x;
    x.dir = dir;
    x.via = via;
    x.libdevice = fs.exists(path_join(dir, "nvvm/libdevice/libdevice.10.bc"));
    x.ptxas = fs.exists(path_join(dir, ctx.os == Os::windows ? "bin/ptxas.exe" : "bin/ptxas"));
    if (x.libdevice || x.ptxas || via == "XLA_FLAGS --xla_gpu_cuda_data_dir") {
      e.xla_dirs.push_back(std::move(x));
    }
  };
  if (auto flags = ctx.env.get("XLA_FLAGS")) {
    const std::string key = "--xla_gpu_cuda_data_dir=";
    if (auto p = flags->find(key); p != std::string::npos) {
      std::string v = flags->substr(p + key.size());
      v = v.substr(0, v.find(' '));
      if (!v.empty()) add(v, "XLA_FLAGS --xla_gpu_cuda_data_dir");
    }
  }
  for (const auto& site : e.site_packages) {
    add(path_join(site, "nvidia/cuda_nvcc"), "nvidia-cuda-nvcc wheel");
    add(path_join(site, "nvidia/cu13"), "nvidia CUDA 13 wheels");
  }
  if (e.kind == "conda") add(e.prefix, "conda environment");
  for (const char* var : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"}) {
    if (auto v = ctx.env.get(var); v && !v->empty()) add(*v, var);
  }
  if (ctx.os == Os::windows) {
    const std::string base = "C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA";
    if (auto vs = fs.list_dir(base)) {
      for (const auto& v : *vs) add(path_join(base, v.name), "CUDA toolkit");
    }
  } else {
    add("/usr/local/cuda", "default toolkit location");
  }
}

}  // namespace dlenv
