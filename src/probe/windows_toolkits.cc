// CUDA toolkits on Windows: CUDA_PATH, every CUDA_PATH_V<major>_<minor> the installer
// sets, Program Files\NVIDIA GPU Computing Toolkit\CUDA\v*, and the toolkits whose
// nvcc.exe / cudart64_*.dll are on PATH. CUDA 13 moved the DLLs to bin\x64.
#include <algorithm>
#include <regex>

#include "probe/windows_probes.h"
#include "util/strings.h"

namespace dlenv {
namespace {

std::optional<std::string> json_version(const std::string& text, const std::string& key) {
  size_t k = text.find("\"" + key + "\"");
  if (k == std::string::npos) return std::nullopt;
  size_t close = text.find('}', k);
  size_t v = text.find("\"version\"", k);
  if (v == std::string::npos || (close != std::string::npos && v > close)) return std::nullopt;
  size_t colon = text.find(':', v);
  if (colon == std::string::npos) return std::nullopt;
  size_t q1 = text.find('"', colon + 1);
  if (q1 == std::string::npos) return std::nullopt;
  size_t q2 = text.find('"', q1 + 1);
  if (q2 == std::string::npos) return std::nullopt;
  return text.substr(q1 + 1, q2 - q1 - 1);
}

bool looks_like_toolkit(const FileSystem& fs, const std::string& root) {
  for (const char* f : {"version.json", "version.txt", "bin/nvcc.exe", "include/cuda.h"}) {
    if (win_find(fs, path_join(root, f))) return true;
  }
  return false;
}

// "cudart64_110.dll" -> 11, "cudart64_101.dll" -> 10.1, "cudart64_12.dll" -> 12.
std::optional<Version> cudart_dll_version(std::string_view name) {
  static const std::regex re(R"(cudart64_(\d+)\.dll)", std::regex::icase);
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_match(name.begin(), name.end(), m, re)) return std::nullopt;
  std::string d = m[1].str();
  if (d.size() == 3 && d[0] == '1' && d[1] == '0') return Version{10, d[2] - '0'};
  if (d.size() == 3) return Version{std::stoi(d.substr(0, 2))};
  return Version{std::stoi(d)};
}

// The toolkit root a PATH directory belongs to: <root>\bin or <root>\bin\x64.
std::string root_of_bin(const std::string& dir) {
  std::string d = dir;
  if (to_lower(path_basename(d)) == "x64") d = path_dirname(d);
  if (to_lower(path_basename(d)) != "bin") return "";
  return path_dirname(d);
}

void read_toolkit(const ProbeContext& ctx, ToolkitFacts& t) {
  const FileSystem& fs = ctx.fs;
  if (auto vj = win_child(fs, t.root, "version.json")) {
    if (auto text = fs.read_file(*vj)) {
      if (auto v = json_version(*text, "cuda"); v && Version::parse(*v)) {
        t.version = Fact<Version>::known(*Version::parse(*v), *vj);
      }
      if (auto v = json_version(*text, "cuda_nvcc"); v && Version::parse(*v)) {
        t.nvcc_version = Fact<Version>::known(*Version::parse(*v), *vj + " (cuda_nvcc)");
      }
    }
  }
  if (!t.version) {
    if (auto vt = win_child(fs, t.root, "version.txt")) {
      if (auto text = fs.read_file(*vt)) {
        auto pos = text->find("Version");
        if (pos != std::string::npos) {
          if (auto v = Version::parse(trim(std::string_view(*text).substr(pos + 7)))) {
            t.version = Fact<Version>::known(*v, *vt);
          }
        }
      }
    }
  }
  if (!t.version) {
    if (auto h = win_find(fs, path_join(t.root, "include/cuda.h"))) {
      if (auto text = fs.read_file(*h)) {
        static const std::regex re(R"(#define\s+CUDA_VERSION\s+(\d+))");
        std::smatch m;
        if (std::regex_search(*text, m, re)) {
          t.version = Fact<Version>::known(
              Version::from_cuda_int(static_cast<int>(parse_int(m[1].str()).value_or(0))),
              *h + " (CUDA_VERSION)");
        }
      }
    }
  }
  // DLL directories: bin\x64 (CUDA 13) and bin.
  for (const char* sub : {"bin/x64", "bin"}) {
    if (auto d = win_find(fs, path_join(t.root, sub)); d && fs.is_dir(*d)) t.lib_dirs.push_back(*d);
  }
  for (const auto& d : t.lib_dirs) {
    auto entries = fs.list_dir(d);
    if (!entries) continue;
    for (const auto& e : *entries) {
      if (cudart_dll_version(e.name)) {
        t.cudart_library = Fact<std::string>::known(path_join(d, e.name), d);
        break;
      }
    }
    if (t.cudart_library) break;
  }
  if (!t.cudart_library) {
    t.cudart_library =
        Fact<std::string>::unknown(FactStatus::not_found, "no cudart64_*.dll in bin", t.root);
  }
  if (!t.version) {
    std::string dir = path_basename(t.root);
    if (!dir.empty() && (dir[0] == 'v' || dir[0] == 'V') && Version::parse(dir)) {
      t.version = Fact<Version>::known(*Version::parse(dir), t.root + " (directory name)");
    } else if (t.cudart_library) {
      if (auto v = cudart_dll_version(path_basename(*t.cudart_library))) {
        t.version = Fact<Version>::known(*v, *t.cudart_library + " (file name)");
      }
    }
  }
  if (!t.version) {
    t.version = Fact<Version>::unknown(
        FactStatus::not_found, "no version.json, version.txt, cuda.h or cudart64_*.dll", t.root);
  }
  if (auto nvcc = win_find(fs, path_join(t.root, "bin/nvcc.exe"))) {
    t.nvcc = Fact<std::string>::known(*nvcc, *nvcc);
  } else {
    t.nvcc = Fact<std::string>::unknown(FactStatus::not_found, "no bin\\nvcc.exe", t.root);
  }
  if (!t.nvcc_version) {
    t.nvcc_version =
        Fact<Version>::unknown(FactStatus::not_found, "no cuda_nvcc entry in version.json", t.root);
  }
}

}  // namespace

std::vector<ToolkitFacts> probe_windows_toolkits(const ProbeContext& ctx) {
  const FileSystem& fs = ctx.fs;
  std::vector<ToolkitFacts> out;
  auto add = [&](const std::string& logical, const std::string& via) -> ToolkitFacts* {
    auto found = win_find(fs, logical);
    if (!found || !fs.is_dir(*found) || !looks_like_toolkit(fs, *found)) return nullptr;
    std::string root = path_normalize(*found);
    for (auto& t : out) {
      if (to_lower(t.real_root) == to_lower(root)) {
        if (std::find(t.found_via.begin(), t.found_via.end(), via) == t.found_via.end()) {
          t.found_via.push_back(via);
        }
        return &t;
      }
    }
    ToolkitFacts t;
    t.root = root;
    t.real_root = root;
    t.found_via.push_back(via);
    out.push_back(std::move(t));
    return &out.back();
  };

  std::string cuda_path_root;
  if (auto v = win_env(ctx, "CUDA_PATH"); v && !v->empty()) {
    if (add(win_logical(ctx, *v), "CUDA_PATH")) {
      cuda_path_root = to_lower(win_find(fs, win_logical(ctx, *v)).value_or(""));
    }
  }
  static const std::regex versioned(R"(CUDA_PATH_V\d+_\d+)", std::regex::icase);
  for (const auto& [k, v] : ctx.env.all()) {
    if (std::regex_match(k, versioned) && !v.empty()) add(win_logical(ctx, v), k);
  }
  std::string base = path_join(win_program_files(ctx), "NVIDIA GPU Computing Toolkit/CUDA");
  if (auto dir = win_find(fs, base)) {
    if (auto entries = fs.list_dir(*dir)) {
      for (const auto& e : *entries) {
        if (!e.name.empty() && (e.name[0] == 'v' || e.name[0] == 'V')) {
          add(path_join(*dir, e.name), "Program Files\\NVIDIA GPU Computing Toolkit\\CUDA");
        }
      }
    }
  }
  // PATH: nvcc.exe or cudart64_*.dll in <root>\bin or <root>\bin\x64. The first wins.
  std::string first_path_root;
  if (auto p = win_env(ctx, "PATH")) {
    for (const auto& entry : win_path_entries(*p)) {
      auto dir = win_find(fs, win_logical(ctx, entry));
      if (!dir || !fs.is_dir(*dir)) continue;
      bool nvcc = win_child(fs, *dir, "nvcc.exe").has_value();
      bool cudart = false;
      if (auto entries = fs.list_dir(*dir)) {
        for (const auto& e : *entries) cudart |= cudart_dll_version(e.name).has_value();
      }
      if (!nvcc && !cudart) continue;
      std::string root = root_of_bin(*dir);
      if (root.empty()) continue;
      if (auto* t = add(root, nvcc ? "PATH (nvcc.exe)" : "PATH (cudart64_*.dll)")) {
        if (first_path_root.empty()) first_path_root = to_lower(t->real_root);
      }
    }
  }
  for (auto& t : out) {
    read_toolkit(ctx, t);
    t.active_cuda_home = !cuda_path_root.empty() && to_lower(t.real_root) == cuda_path_root;
    t.active_path = !first_path_root.empty() && to_lower(t.real_root) == first_path_root;
  }
  std::sort(out.begin(), out.end(), [](const ToolkitFacts& a, const ToolkitFacts& b) {
    if (a.version && b.version && !(*a.version == *b.version)) return *b.version < *a.version;
    return a.root < b.root;
  });
  return out;
}

}  // namespace dlenv
