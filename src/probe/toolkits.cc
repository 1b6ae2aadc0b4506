// CUDA toolkits: every install the user may be building or running against, its
// version from files (no nvcc run needed), and which settings make it active.
#include <algorithm>
#include <regex>

#include "platform/process.h"
#include "probe/probe.h"
#include "probe/text_formats.h"
#include "util/strings.h"

namespace dlenv {
namespace {

const char* const kLibSubdirs[] = {"lib64", "lib", "targets/x86_64-linux/lib",
                                   "targets/sbsa-linux/lib", "lib/x64"};

// "nvidia_cuda_nvcc-13.0.88.dist-info" -> "13.0.88" for prefix "nvidia_cuda_nvcc".
std::optional<std::string> dist_info_version(const FileSystem& fs, const std::string& dir,
                                             const std::string& prefix, std::string* path_out) {
  auto entries = fs.list_dir(dir);
  if (!entries) return std::nullopt;
  for (const auto& e : *entries) {
    if (!ends_with(e.name, ".dist-info")) continue;
    std::string stem = e.name.substr(0, e.name.size() - 10);
    if (!starts_with(stem, prefix + "-")) continue;
    if (path_out) *path_out = path_join(dir, e.name);
    return stem.substr(prefix.size() + 1);
  }
  return std::nullopt;
}

bool looks_like_toolkit(const FileSystem& fs, const std::string& root) {
  return fs.exists(path_join(root, "bin/nvcc")) || fs.exists(path_join(root, "version.json")) ||
         fs.exists(path_join(root, "version.txt")) ||
         fs.exists(path_join(root, "include/cuda.h")) ||
         fs.exists(path_join(root, "include/cuda_runtime.h"));
}

std::string same_or_real(const FileSystem& fs, const std::string& p) {
  return fs.real_path(p).value_or(path_normalize(p));
}

void read_versions(const ProbeContext& ctx, ToolkitFacts& t) {
  const FileSystem& fs = ctx.fs;
  std::string vj = path_join(t.root, "version.json");
  if (auto text = fs.read_file(vj)) {
    if (auto v = version_json_component(*text, "cuda"); v && Version::parse(*v)) {
      t.version = Fact<Version>::known(*Version::parse(*v), vj);
    }
    if (auto v = version_json_component(*text, "cuda_nvcc"); v && Version::parse(*v)) {
      t.nvcc_version = Fact<Version>::known(*Version::parse(*v), vj + " (cuda_nvcc)");
    }
  }
  std::string vt = path_join(t.root, "version.txt");
  if (!t.version) {
    if (auto text = fs.read_file(vt)) {
      // "CUDA Version 10.2.89"
      auto pos = text->find("Version");
      if (pos != std::string::npos) {
        if (auto v = Version::parse(std::string_view(*text).substr(pos + 7))) {
          t.version = Fact<Version>::known(*v, vt);
        }
      }
    }
  }
  std::string dist = path_join(t.root, "dist-info");
  if (fs.is_dir(dist)) {
    t.pip_assembled = true;
    std::string p;
    if (!t.nvcc_version) {
      if (auto v = dist_info_version(fs, dist, "nvidia_cuda_nvcc", &p); v && Version::parse(*v)) {
        t.nvcc_version = Fact<Version>::known(*Version::parse(*v), p);
      }
    }
    if (!t.version) {
      // The toolkit release is the compiler's; the runtime wheel may be a later patch.
      if (t.nvcc_version) {
        t.version = Fact<Version>::known(*t.nvcc_version, t.nvcc_version.source);
      } else if (auto v = dist_info_version(fs, dist, "nvidia_cuda_runtime", &p);
                 v && Version::parse(*v)) {
        t.version = Fact<Version>::known(*Version::parse(*v), p);
      }
    }
  }
  if (!t.version) {
    for (const char* h : {"include/cuda.h", "targets/x86_64-linux/include/cuda.h"}) {
      std::string hp = path_join(t.root, h);
      auto text = fs.read_file(hp);
      if (!text) continue;
      static const std::regex re(R"(#define\s+CUDA_VERSION\s+(\d+))");
      std::smatch m;
      if (std::regex_search(*text, m, re)) {
        t.version = Fact<Version>::known(
            Version::from_cuda_int(static_cast<int>(parse_int(m[1].str()).value_or(0))),
            hp + " (CUDA_VERSION)");
        break;
      }
    }
  }
  if (!t.version) {
    t.version = Fact<Version>::unknown(FactStatus::not_found,
                                       "no version.json, version.txt, dist-info or cuda.h", t.root);
  }
  std::string nvcc = path_join(t.root, "bin/nvcc");
  if (fs.exists(nvcc)) {
    t.nvcc = Fact<std::string>::known(nvcc, nvcc);
    if (!t.nvcc_version && ctx.live) {
      ProcessOptions po;
      po.timeout = std::chrono::milliseconds(5000);
      auto r = run_process({fs.host_path(nvcc), "--version"}, po);
      if (r && r->exit_code == 0) {
        static const std::regex re(R"(release (\d+\.\d+), V([\d.]+))");
        std::smatch m;
        if (std::regex_search(r->out, m, re)) {
          t.nvcc_version = Fact<Version>::known(*Version::parse(m[2].str()), nvcc + " --version");
        }
      } else {
        t.nvcc_version = Fact<Version>::unknown(
            r && r->timed_out ? FactStatus::timed_out : FactStatus::error,
            r ? ("exit " + std::to_string(r->exit_code) + ": " + std::string(trim(r->err)))
              : r.error().message,
            nvcc + " --version");
      }
    }
  } else {
    t.nvcc = Fact<std::string>::unknown(FactStatus::not_found, "no bin/nvcc", t.root);
  }
  if (!t.nvcc_version) {
    t.nvcc_version =
        Fact<Version>::unknown(FactStatus::not_found, "no nvcc version source", t.root);
  }
  for (const char* sub : kLibSubdirs) {
    std::string d = path_join(t.root, sub);
    if (!fs.is_dir(d)) continue;
    std::string real = same_or_real(fs, d);
    bool dup = false;
    for (const auto& existing : t.lib_dirs) dup |= same_or_real(fs, existing) == real;
    if (!dup) t.lib_dirs.push_back(d);
  }
  for (const auto& d : t.lib_dirs) {
    auto entries = fs.list_dir(d);
    if (!entries) continue;
    for (const auto& e : *entries) {
      static const std::regex re(R"(libcudart\.so\.\d+)");
      if (std::regex_match(e.name, re)) {
        t.cudart_library = Fact<std::string>::known(path_join(d, e.name), d);
        break;
      }
    }
    if (t.cudart_library) break;
  }
  if (!t.cudart_library) {
    t.cudart_library =
        Fact<std::string>::unknown(FactStatus::not_found, "no libcudart.so.N", t.root);
  }
}

}  // namespace

std::vector<ToolkitFacts> probe_toolkits(const ProbeContext& ctx, const LoaderConfig& loader) {
  const FileSystem& fs = ctx.fs;
  std::vector<ToolkitFacts> out;
  auto add = [&](const std::string& root_in, const std::string& via) {
    std::string root = path_normalize(root_in);
    if (!fs.is_dir(root) || !looks_like_toolkit(fs, root)) return;
    std::string real = same_or_real(fs, root);
    for (auto& t : out) {
      if (t.real_root == real) {
        if (std::find(t.found_via.begin(), t.found_via.end(), via) == t.found_via.end()) {
          t.found_via.push_back(via);
        }
        // Show the real directory when it is one of the names found (cuda-13 -> cuda-13.0),
        // else prefer a versioned name over the /usr/local/cuda link.
        if (root == real || (t.root == "/usr/local/cuda" && root != t.root)) t.root = root;
        return;
      }
    }
    ToolkitFacts t;
    t.root = root;
    t.real_root = real;
    t.found_via.push_back(via);
    out.push_back(std::move(t));
  };

  if (auto entries = fs.list_dir("/usr/local")) {
    for (const auto& e : *entries) {
      if (starts_with(e.name, "cuda-")) add("/usr/local/" + e.name, "/usr/local/cuda-*");
    }
  }
  add("/usr/local/cuda", "/usr/local/cuda link");
  add("/opt/cuda", "/opt/cuda");
  for (const char* var : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR"}) {
    if (auto v = ctx.env.get(var); v && !v->empty()) add(*v, var);
  }
  if (auto conda = ctx.env.get("CONDA_PREFIX"); conda && !conda->empty()) {
    add(*conda, "CONDA_PREFIX");
  }
  // nvcc on PATH: the first one is what a build would use.
  std::string first_nvcc_root;
  if (auto p = ctx.env.get("PATH")) {
    for (const auto& dir : split_path_list(*p, ':')) {
      std::string nvcc = path_join(dir, "nvcc");
      if (!fs.is_file(nvcc)) continue;
      // Follow links (/usr/bin/nvcc -> /usr/local/cuda-13.0/bin/nvcc) and wrapper scripts
      // ("#!/bin/sh\nexec /usr/local/cuda-13.0/bin/nvcc \"$@\"").
      std::string target = same_or_real(fs, nvcc);
      if (auto text = fs.read_file(target, 4096); text && starts_with(*text, "#!")) {
        static const std::regex exec_re(R"((/[^\s"';]+/bin/nvcc)\b)");
        std::smatch m;
        if (std::regex_search(*text, m, exec_re) && fs.is_file(m[1].str())) {
          target = same_or_real(fs, m[1].str());
        }
      }
      std::string root = path_dirname(path_dirname(target));
      if (root == "/usr") {
        add("/usr", "distro package (nvcc in /usr/bin)");
      } else {
        add(root, "PATH (nvcc)");
      }
      if (first_nvcc_root.empty()) first_nvcc_root = same_or_real(fs, root);
    }
  }
  if (fs.exists("/usr/bin/nvcc") && fs.exists("/usr/include/cuda.h")) {
    add("/usr", "distro package (nvcc in /usr/bin)");
  }

  // Which settings make which toolkit active.
  std::string link_target = fs.real_path("/usr/local/cuda").value_or("");
  std::string cuda_home;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (auto v = ctx.env.get(var); v && !v->empty()) {
      cuda_home = same_or_real(fs, *v);
      break;
    }
  }
  for (auto& t : out) {
    read_versions(ctx, t);
    t.is_default_link = !link_target.empty() && link_target == t.real_root;
    t.active_cuda_home = !cuda_home.empty() && cuda_home == t.real_root;
    t.active_path = !first_nvcc_root.empty() && first_nvcc_root == t.real_root;
    for (const auto& d : loader.ld_library_path) {
      std::string rd = same_or_real(fs, d);
      for (const auto& ld : t.lib_dirs) t.active_ld_library_path |= same_or_real(fs, ld) == rd;
    }
    if (loader.cache && t.cudart_library) {
      std::string soname = path_basename(*t.cudart_library);
      if (const auto* e = loader.cache->find(soname)) {
        std::string rd = same_or_real(fs, path_dirname(e->path));
        for (const auto& ld : t.lib_dirs) t.in_ld_cache |= same_or_real(fs, ld) == rd;
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const ToolkitFacts& a, const ToolkitFacts& b) {
    if (a.version && b.version && !(*a.version == *b.version)) return *b.version < *a.version;
    return a.root < b.root;
  });
  return out;
}

}  // namespace dlenv
