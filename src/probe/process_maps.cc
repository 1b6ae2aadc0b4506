// /proc/PID/maps parsing and the classification of mapped NVIDIA libraries
// (see process_maps.h).
#include "probe/process_maps.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "binfmt/elf.h"
#include "binfmt/pe.h"
#include "util/strings.h"

namespace dlenv {

namespace {

constexpr size_t kMaxMapsBytes = 64u << 20;
constexpr size_t kMaxRecordBytes = 8u << 20;

bool parse_hex(std::string_view s, uint64_t& out) {
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), out, 16);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_dec(std::string_view s, uint64_t& out) {
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), out, 10);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// The next space-separated field of `line` from `pos` (pos moves past it).
std::string_view next_field(std::string_view line, size_t& pos) {
  while (pos < line.size() && line[pos] == ' ') ++pos;
  const size_t start = pos;
  while (pos < line.size() && line[pos] != ' ') ++pos;
  return line.substr(start, pos - start);
}

std::string dir_version_json(const FileSystem& fs, const std::string& root,
                             const std::string& key) {
  auto text = fs.read_file(path_join(root, "version.json"), 1u << 20);
  if (!text) return "";
  const size_t k = text->find("\"" + key + "\"");
  if (k == std::string::npos) return "";
  const size_t v = text->find("\"version\"", k);
  const size_t close = text->find('}', k);
  if (v == std::string::npos || (close != std::string::npos && v > close)) return "";
  const size_t q1 = text->find('"', text->find(':', v) + 1);
  if (q1 == std::string::npos) return "";
  const size_t q2 = text->find('"', q1 + 1);
  if (q2 == std::string::npos) return "";
  return text->substr(q1 + 1, q2 - q1 - 1);
}

// The pip distribution that installed `rel` (a path relative to `site`), from
// the RECORD files of the nvidia_* / torch* dist-info directories.
std::optional<std::pair<std::string, std::string>> owning_wheel(const FileSystem& fs,
                                                                const std::string& site,
                                                                const std::string& rel) {
  auto entries = fs.list_dir(site);
  if (!entries) return std::nullopt;
  const std::string top = rel.substr(0, rel.find('/'));
  std::optional<std::pair<std::string, std::string>> by_top;
  for (const auto& e : *entries) {
    if (!e.name.ends_with(".dist-info")) continue;
    const std::string stem = e.name.substr(0, e.name.size() - 10);
    const size_t dash = stem.find('-');
    if (dash == std::string::npos) continue;
    std::string name = stem.substr(0, dash);
    const std::string version = stem.substr(dash + 1);
    const std::string lname = to_lower(name);
    if (!lname.starts_with("nvidia") && !lname.starts_with(to_lower(top))) continue;
    std::replace(name.begin(), name.end(), '_', '-');
    auto record = fs.read_file(path_join(path_join(site, e.name), "RECORD"), kMaxRecordBytes);
    if (record &&
        (record->starts_with(rel + ",") || record->find("\n" + rel + ",") != std::string::npos)) {
      return std::make_pair(name, version);
    }
    if (lname == to_lower(top)) by_top = std::make_pair(name, version);
  }
  return by_top;
}

// The wheel (name, version) among the dist-info directories of `dir` whose
// RECORD lists a file named `file_name` (in any directory).
std::optional<std::pair<std::string, std::string>> wheel_by_file_name(
    const FileSystem& fs, const std::string& dir, const std::string& file_name) {
  auto entries = fs.list_dir(dir);
  if (!entries) return std::nullopt;
  for (const auto& e : *entries) {
    if (!e.name.ends_with(".dist-info")) continue;
    const std::string stem = e.name.substr(0, e.name.size() - 10);
    const size_t dash = stem.find('-');
    if (dash == std::string::npos) continue;
    auto record = fs.read_file(path_join(path_join(dir, e.name), "RECORD"), kMaxRecordBytes);
    if (!record || record->find("/" + file_name + ",") == std::string::npos) continue;
    std::string name = stem.substr(0, dash);
    std::replace(name.begin(), name.end(), '_', '-');
    return std::make_pair(name, stem.substr(dash + 1));
  }
  return std::nullopt;
}

}  // namespace

Result<std::vector<MapsEntry>> parse_proc_maps(std::string_view text, const std::string& source) {
  std::vector<MapsEntry> out;
  size_t line_no = 0;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(at, nl - at);
    at = nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (trim(line).empty()) continue;
    auto bad = [&](std::string_view what) {
      return fail(
          fmt::format("{}: line {}: {} in \"{}\"", source, line_no, what, line.substr(0, 120)));
    };
    MapsEntry e;
    size_t pos = 0;
    const std::string_view range = next_field(line, pos);
    const size_t dash = range.find('-');
    if (dash == std::string_view::npos || !parse_hex(range.substr(0, dash), e.start) ||
        !parse_hex(range.substr(dash + 1), e.end) || e.end < e.start) {
      return bad("bad address range");
    }
    const std::string_view perms = next_field(line, pos);
    if (perms.size() != 4 || perms.find_first_not_of("rwxsp-") != std::string_view::npos) {
      return bad("bad permissions");
    }
    e.perms = std::string(perms);
    if (!parse_hex(next_field(line, pos), e.offset)) return bad("bad offset");
    const std::string_view dev = next_field(line, pos);
    if (dev.find(':') == std::string_view::npos) return bad("bad device");
    e.dev = std::string(dev);
    if (!parse_dec(next_field(line, pos), e.inode)) return bad("bad inode");
    while (pos < line.size() && line[pos] == ' ') ++pos;
    std::string path(line.substr(pos));
    constexpr std::string_view kDeleted = " (deleted)";
    if (path.ends_with(kDeleted)) {
      e.deleted = true;
      path.resize(path.size() - kDeleted.size());
    }
    e.path = std::move(path);
    out.push_back(std::move(e));
  }
  return out;
}

std::optional<std::string> nvidia_library_kind(std::string_view file_name) {
  const std::string b = path_basename(file_name);
  if (b.find(".so") == std::string::npos) return std::nullopt;
  // Longest prefixes first. A prefix must be followed by '.', '_', '-' or a digit.
  static const std::vector<std::pair<std::string_view, std::string_view>> kinds = {
      {"libcublasLt", "cublasLt"},    {"libcublas", "cublas"},
      {"libcudart", "cudart"},        {"libcudnn", "cudnn"},
      {"libcuda", "cuda (driver)"},   {"libnvidia-ml", "nvml (driver)"},
      {"libnvidia-", "driver"},       {"libnccl", "nccl"},
      {"libnvrtc-builtins", "nvrtc"}, {"libnvrtc", "nvrtc"},
      {"libcufft", "cufft"},          {"libcusparseLt", "cusparseLt"},
      {"libcusparse", "cusparse"},    {"libcusolver", "cusolver"},
      {"libcurand", "curand"},        {"libnvJitLink", "nvJitLink"},
      {"libnvjpeg", "nvjpeg"},        {"libcupti", "cupti"},
      {"libnvToolsExt", "nvtx"},      {"libcufile", "cufile"},
      {"libnvshmem", "nvshmem"},      {"libcudss", "cudss"},
      {"libnvperf", "cupti"}};
  for (const auto& [prefix, kind] : kinds) {
    if (!b.starts_with(prefix)) continue;
    const char next = b.size() > prefix.size() ? b[prefix.size()] : '\0';
    if (prefix == "libnvidia-" || next == '.' || next == '_' || next == '-' ||
        std::isdigit(static_cast<unsigned char>(next))) {
      return std::string(kind);
    }
  }
  return std::nullopt;
}

namespace {

// pip wheel, conda env or CUDA toolkit, from the path and the files around it;
// false when it is none of those. `p` uses '/' separators.
bool classify_by_tree(const FileSystem& fs, MappedLibrary& lib, const std::string& p) {
  // Windows module paths come in any case ("C:\PYTHON311\LIB\SITE-PACKAGES\...").
  const std::string lower = to_lower(p);
  for (std::string_view marker : {"/site-packages/", "/dist-packages/"}) {
    const size_t m = lower.find(marker);
    if (m == std::string::npos) continue;
    const std::string site = p.substr(0, m + marker.size() - 1);
    const std::string rel = p.substr(m + marker.size());
    lib.origin = "pip wheel";
    if (auto w = owning_wheel(fs, site, rel)) {
      lib.origin_detail = fmt::format("{} {} in {}", w->first, w->second, site);
      if (lib.version.empty() && lib.library != "driver") {
        lib.version = w->second;
        lib.version_source = "pip wheel metadata";
      }
    } else {
      lib.origin_detail = fmt::format("package {} in {}", rel.substr(0, rel.find('/')), site);
    }
    return true;
  }
  // Walk up: a conda prefix (conda-meta/) or a CUDA toolkit root (version.json, bin/nvcc).
  std::string d = path_dirname(p);
  for (int up = 0; up < 5 && d.size() > 1; ++up, d = path_dirname(d)) {
    if (fs.is_dir(path_join(d, "conda-meta"))) {
      lib.origin = "conda env";
      lib.origin_detail = d;
      return true;
    }
    if (fs.exists(path_join(d, "version.json")) || fs.exists(path_join(d, "bin/nvcc")) ||
        fs.exists(path_join(d, "bin/nvcc.exe"))) {
      lib.origin = "CUDA toolkit";
      const std::string v = dir_version_json(fs, d, "cuda");
      lib.origin_detail = v.empty() ? d : fmt::format("{} (CUDA {})", d, v);
      // The library's own version: its version.json component, or the wheel
      // that installed it (toolkits assembled from pip wheels keep dist-info/).
      if (lib.version.find('.') == std::string::npos) {
        static const std::map<std::string, std::string> component = {
            {"cublas", "libcublas"},     {"cublasLt", "libcublas"},   {"cudart", "cuda_cudart"},
            {"nvrtc", "cuda_nvrtc"},     {"cufft", "libcufft"},       {"curand", "libcurand"},
            {"cusolver", "libcusolver"}, {"cusparse", "libcusparse"}, {"nvJitLink", "libnvjitlink"},
            {"cupti", "cuda_cupti"},     {"nvjpeg", "libnvjpeg"}};
        std::string cv;
        if (auto it = component.find(lib.library); it != component.end()) {
          cv = dir_version_json(fs, d, it->second);
        }
        if (!cv.empty()) {
          lib.version = cv;
          lib.version_source = "toolkit version.json";
        } else if (auto w = wheel_by_file_name(fs, path_join(d, "dist-info"), lib.name)) {
          lib.version = w->second;
          lib.version_source = fmt::format("{}/dist-info ({})", d, w->first);
        }
      }
      return true;
    }
  }
  return false;
}

}  // namespace

void classify_origin(const FileSystem& fs, MappedLibrary& lib) {
  const std::string& p = lib.path;
  if (classify_by_tree(fs, lib, p)) return;
  const std::string dir = path_dirname(p);
  const bool system =
      dir.starts_with("/usr/lib") || dir.starts_with("/lib") || dir.starts_with("/usr/local/lib");
  if (lib.library.find("driver") != std::string::npos) {
    lib.origin = "driver";
    lib.origin_detail = system ? dir : dir + " (not a system directory)";
    return;
  }
  lib.origin = system ? "system" : "other";
  lib.origin_detail = dir;
}

std::vector<MappedLibrary> nvidia_libraries(const FileSystem& fs,
                                            const std::vector<MapsEntry>& maps) {
  std::vector<MappedLibrary> out;
  std::set<std::string> seen;
  for (const auto& e : maps) {
    if (e.path.empty() || e.path[0] != '/') continue;
    auto kind = nvidia_library_kind(e.path);
    if (!kind || !seen.insert(e.path).second) continue;
    MappedLibrary lib;
    lib.path = e.path;
    lib.name = path_basename(e.path);
    lib.library = *kind;
    lib.deleted = e.deleted;
    if (const size_t so = lib.name.find(".so."); so != std::string::npos) {
      const std::string v = lib.name.substr(so + 4);
      if (v.find('.') != std::string::npos) {
        lib.version = v;
        lib.version_source = "file name";
      }
    }
    if (auto m = fs.map_file(e.path)) {
      if (auto elf = parse_elf((*m)->bytes(), e.path); elf && *elf && (*elf)->soname) {
        lib.soname = *(*elf)->soname;
      }
    }
    if (lib.version.empty() && !lib.soname.empty()) {
      if (const size_t so = lib.soname.find(".so."); so != std::string::npos) {
        lib.version = lib.soname.substr(so + 4);
        lib.version_source = "soname (major only)";
      }
    }
    classify_origin(fs, lib);
    out.push_back(std::move(lib));
  }
  return out;
}

std::optional<std::string> nvidia_dll_kind(std::string_view file_name) {
  const std::string b = to_lower(file_name_of(file_name));
  if (!b.ends_with(".dll")) return std::nullopt;
  if (b == "nvcuda.dll") return "cuda (driver)";
  if (b == "nvml.dll") return "nvml (driver)";
  // Longest prefixes first; a prefix must be followed by '.', '_', '-' or a digit
  // ("cudnn64_8.dll", "cudnn_ops_infer64_8.dll", "nvrtc-builtins64_118.dll").
  static const std::vector<std::pair<std::string_view, std::string_view>> kinds = {
      {"cublaslt", "cublasLt"}, {"cublas", "cublas"},        {"cudart", "cudart"},
      {"cudnn", "cudnn"},       {"nvrtc-builtins", "nvrtc"}, {"nvrtc", "nvrtc"},
      {"cufftw", "cufft"},      {"cufft", "cufft"},          {"cusparselt", "cusparseLt"},
      {"cusparse", "cusparse"}, {"cusolvermg", "cusolver"},  {"cusolver", "cusolver"},
      {"curand", "curand"},     {"nvjitlink", "nvJitLink"},  {"nvjpeg", "nvjpeg"},
      {"cupti", "cupti"},       {"nvtoolsext", "nvtx"},      {"nvperf", "cupti"},
      {"zlibwapi", "zlibwapi"}, {"cudss", "cudss"}};
  for (const auto& [prefix, kind] : kinds) {
    if (!b.starts_with(prefix)) continue;
    const char next = b[prefix.size()];
    if (next == '.' || next == '_' || next == '-' ||
        std::isdigit(static_cast<unsigned char>(next))) {
      return std::string(kind);
    }
  }
  return std::nullopt;
}

namespace {

// "C:\x\y.dll", "\\?\C:\x\y.dll" -> "C:/x/y.dll" (what the FileSystem reads).
std::string slash_path(std::string_view p) {
  std::string s(p);
  if (s.starts_with("\\\\?\\UNC\\")) {
    s = "\\\\" + s.substr(8);
  } else if (s.starts_with("\\\\?\\")) {
    s = s.substr(4);
  }
  std::replace(s.begin(), s.end(), '\\', '/');
  return s;
}

// "cudnn64_8.dll" -> "8", "cudart64_110.dll" -> "11", "cublasLt64_12.dll" -> "12":
// the major version the DLL name carries, empty when it carries none.
std::string dll_name_major(std::string_view name) {
  const std::string b = to_lower(name);
  const size_t at = b.rfind("64_");
  if (at == std::string::npos) return "";
  size_t end = at + 3;
  while (end < b.size() && std::isdigit(static_cast<unsigned char>(b[end]))) ++end;
  std::string digits = b.substr(at + 3, end - at - 3);
  if (digits.empty()) return "";
  if (digits.size() >= 3) digits.resize(2);  // cudart64_110: CUDA 11.x
  return digits;
}

// Windows places that are not a pip wheel, a conda env or a toolkit with its
// version.json. `p` uses '/' separators.
void classify_windows_place(MappedLibrary& lib, const std::string& p) {
  const std::string lower = to_lower(p);
  const std::string dir = path_dirname(p);
  const bool driver = lib.library.find("driver") != std::string::npos;
  if (lower.find("/windows/system32/driverstore/") != std::string::npos) {
    lib.origin = "driver";
    lib.origin_detail = "driver store: " + dir;
    return;
  }
  if (lower.find("/windows/system32/") != std::string::npos ||
      lower.find("/windows/syswow64/") != std::string::npos) {
    lib.origin = driver ? "driver" : "system";
    lib.origin_detail = dir + (driver ? "" : " (copied into the Windows system directory)");
    return;
  }
  constexpr std::string_view kToolkit = "/nvidia gpu computing toolkit/cuda/v";
  if (const size_t t = lower.find(kToolkit); t != std::string::npos) {
    const size_t v = t + kToolkit.size();
    const size_t slash = p.find('/', v);
    lib.origin = "CUDA toolkit";
    lib.origin_detail = fmt::format("{} (CUDA {})", p.substr(0, slash),
                                    p.substr(v, slash == std::string::npos ? slash : slash - v));
    return;
  }
  if (lower.find("/nvidia/cudnn/v") != std::string::npos) {
    lib.origin = "cuDNN installer";
    lib.origin_detail = dir;
    return;
  }
  lib.origin = driver ? "driver" : "other";
  lib.origin_detail = driver ? dir + " (not a system directory)" : dir;
}

}  // namespace

std::vector<MappedLibrary> nvidia_modules(const FileSystem& fs,
                                          const std::vector<std::string>& module_paths) {
  std::vector<MappedLibrary> out;
  std::set<std::string> seen;
  for (const auto& native : module_paths) {
    auto kind = nvidia_dll_kind(native);
    const std::string p = slash_path(native);
    if (!kind || !seen.insert(to_lower(p)).second) continue;
    MappedLibrary lib;
    lib.path = native;
    lib.name = path_basename(p);
    lib.library = *kind;
    if (auto m = fs.map_file(p)) {
      if (auto pe = parse_pe((*m)->bytes(), native); pe && *pe && (*pe)->file_version) {
        lib.version = *(*pe)->file_version;
        lib.version_source = "PE version resource";
      }
    }
    // Without a version resource the wheel's version (set while classifying)
    // is more precise than the major the name carries.
    if (!classify_by_tree(fs, lib, p)) classify_windows_place(lib, p);
    const std::string name_major = dll_name_major(lib.name);
    if (lib.version.empty() && !name_major.empty()) {
      lib.version = name_major;
      lib.version_source = "file name (major only)";
    }
    if (native.find('\\') != std::string::npos) {
      std::replace(lib.origin_detail.begin(), lib.origin_detail.end(), '/', '\\');
      std::replace(lib.version_source.begin(), lib.version_source.end(), '/', '\\');
    }
    out.push_back(std::move(lib));
  }
  return out;
}

Result<ProcessLibraries> read_process_libraries(const FileSystem& fs, int pid) {
  const std::string maps_path = fmt::format("/proc/{}/maps", pid);
  auto text = fs.read_file(maps_path, kMaxMapsBytes);
  if (!text) return std::unexpected(text.error());
  auto maps = parse_proc_maps(*text, maps_path);
  if (!maps) return std::unexpected(maps.error());
  ProcessLibraries p;
  p.pid = pid;
  if (auto comm = fs.read_file(fmt::format("/proc/{}/comm", pid), 4096)) {
    p.command = std::string(trim(*comm));
  }
  p.libraries = nvidia_libraries(fs, *maps);
  return p;
}

HoldingScan processes_holding(const FileSystem& fs, std::string_view name) {
  HoldingScan scan;
  auto entries = fs.list_dir("/proc");
  if (!entries) return scan;
  for (const auto& e : *entries) {
    auto pid = parse_int(e.name);
    if (!pid || *pid <= 0 || e.name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    ++scan.scanned;
    const std::string maps_path = fmt::format("/proc/{}/maps", *pid);
    auto text = fs.read_file(maps_path, kMaxMapsBytes);
    if (!text) {
      // A process that exited meanwhile is not worth a line.
      if (fs.exists(fmt::format("/proc/{}", *pid))) {
        scan.unreadable.emplace_back(static_cast<int>(*pid), text.error().message);
      }
      continue;
    }
    auto maps = parse_proc_maps(*text, maps_path);
    if (!maps) {
      scan.unreadable.emplace_back(static_cast<int>(*pid), maps.error().message);
      continue;
    }
    HoldingProcess h;
    h.pid = static_cast<int>(*pid);
    std::set<std::string> seen;
    for (const auto& m : *maps) {
      if (m.path.empty() || m.path[0] != '/') continue;
      if (path_basename(m.path).find(name) == std::string::npos) continue;
      if (seen.insert(m.path).second) h.paths.push_back(m.path);
    }
    if (h.paths.empty()) continue;
    if (auto comm = fs.read_file(fmt::format("/proc/{}/comm", *pid), 4096)) {
      h.command = std::string(trim(*comm));
    }
    scan.holders.push_back(std::move(h));
  }
  std::sort(scan.holders.begin(), scan.holders.end(),
            [](const auto& a, const auto& b) { return a.pid < b.pid; });
  return scan;
}

}  // namespace dlenv
