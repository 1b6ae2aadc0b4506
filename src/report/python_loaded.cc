#include "report/python_loaded.h"

#include <cctype>
#include <set>

#include "probe/process_maps.h"
#include "util/strings.h"

namespace dlenv {
namespace {

// The library families shown, by the kind nvidia_library_kind / nvidia_dll_kind give;
// sub-libraries (libcudnn_ops, cudnn_ops64_9.dll, nvrtc-builtins) follow their family.
const std::set<std::string>& families() {
  static const std::set<std::string> f = {
      "cudnn",  "cublas", "cublasLt", "cudart",   "nvJitLink",     "cusparse", "cufft",
      "curand", "nccl",   "nvrtc",    "cusolver", "cuda (driver)", "zlibwapi"};
  return f;
}

bool is_windows_name(std::string_view name) {
  return to_lower(name).ends_with(".dll");
}

struct Key {
  std::string family;  // "cudnn": nvidia_*_kind of the file
  int major = 0;       // 9 of libcudnn.so.9 / cudnn64_9.dll; 11 of cudart64_110.dll
  std::string suffix;  // "9.1.0" of libcudnn.so.9.1.0; "" on Windows
  bool sub = false;    // a sub-library of the family (libcudnn_ops.so.9, cudnn_ops64_9.dll)
  std::string row;     // the row's name: "libcudnn.so.9", or the DLL's name
};

// "cudnn64_9.dll" -> 9, "cudart64_110.dll" -> 11, "nvJitLink_120_0.dll" -> 12,
// "nvrtc64_112_0.dll" -> 11; 0 for names without a number (nvcuda.dll, zlibwapi.dll).
int dll_major(const std::string& lower) {
  size_t at = lower.rfind("64_");
  size_t start = at == std::string::npos ? std::string::npos : at + 3;
  if (start == std::string::npos && lower.starts_with("nvjitlink_")) start = 10;
  if (start == std::string::npos) return 0;
  size_t end = start;
  while (end < lower.size() && std::isdigit(static_cast<unsigned char>(lower[end]))) ++end;
  if (end == start || end - start > 3) return 0;
  int v = static_cast<int>(parse_int(lower.substr(start, end - start)).value_or(0));
  return end - start == 3 ? v / 10 : v;
}

std::optional<Key> key_of(const MappedLibrary& lib) {
  if (!families().contains(lib.library)) return std::nullopt;
  Key k;
  k.family = lib.library;
  if (is_windows_name(lib.name)) {
    const std::string b = to_lower(lib.name);
    k.major = dll_major(b);
    const std::string fam = to_lower(lib.library);
    k.sub = !(b.starts_with(fam + "64_") || b.starts_with("nvjitlink_") || b == "nvcuda.dll" ||
              b == "zlibwapi.dll");
    k.row = lib.name;
    return k;
  }
  auto p = lib.name.find(".so.");
  if (p == std::string::npos) return std::nullopt;
  auto v = Version::parse(std::string_view(lib.name).substr(p + 4));
  if (!v) return std::nullopt;
  const std::string stem = lib.name.substr(0, p);
  const std::string main_stem = lib.library == "cuda (driver)" ? "libcuda" : "lib" + lib.library;
  if (stem != main_stem && !stem.starts_with(main_stem + "_") &&
      !stem.starts_with(main_stem + "-")) {
    return std::nullopt;  // libcudart_static, libcuda_something: not shown
  }
  k.major = v->major();
  k.suffix = lib.name.substr(p + 4);
  k.sub = stem != main_stem;
  k.row = stem + ".so." + std::to_string(k.major);
  return k;
}

// A path compared as the loader would: Windows paths case-insensitively with either
// separator, without the \\?\ prefix and without drive C: (a --root tree's logical paths
// have none).
std::string norm(std::string_view p, bool win) {
  std::string s(p);
  if (!win) return s;
  for (auto& c : s) {
    if (c == '\\') c = '/';
  }
  s = to_lower(s);
  if (s.starts_with("//?/")) s = s.substr(4);
  if (s.starts_with("c:/")) s = s.substr(2);
  return s;
}
std::string norm_dir(std::string_view p, bool win) {
  std::string n = norm(p, win);
  auto slash = n.find_last_of('/');
  return slash == std::string::npos ? std::string() : n.substr(0, slash);
}
std::string dir_as_given(const std::string& p) {
  auto slash = p.find_last_of(is_windows_name(p) ? "/\\" : "/");
  return slash == std::string::npos ? std::string() : p.substr(0, slash);
}

struct Copy {
  std::string path;
  std::string label;
  std::optional<Version> version;
};

// The copies of the library and major, named as the loaded one is (a Windows process's
// DLLs are not compared with .so files, nor the other way round).
std::vector<Copy> installed_copies(const Facts& f, const PythonEnv& e, const Key& k, bool win) {
  std::vector<Copy> copies;
  for (const auto& l : e.cuda_libs) {
    if (l.library != k.family || l.major != k.major || is_windows_name(l.path) != win) continue;
    copies.push_back({l.path,
                      l.path + (l.package.empty() ? "" : " (" + l.package + " " + l.version + ")"),
                      // torch\lib copies carry torch's version, not the library's.
                      l.package == "torch" ? std::nullopt : Version::parse(l.version)});
  }
  if (k.family == "cudnn") {
    for (const auto& c : f.cudnn) {
      if (c.major != k.major || is_windows_name(c.library) != win) continue;
      bool dup = false;
      for (const auto& x : copies) dup |= norm_dir(x.path, win) == norm(c.dir, win);
      if (dup) continue;
      std::optional<Version> v =
          c.library_version ? std::optional<Version>(*c.library_version) : std::nullopt;
      copies.push_back({c.library, c.library + (v ? " (" + v->str() + ")" : ""), v});
    }
  }
  if (k.family == "cudart") {
    for (const auto& t : f.toolkits) {
      if (!t.cudart_library || !t.version || t.version->major() != k.major ||
          is_windows_name(*t.cudart_library) != win) {
        continue;
      }
      copies.push_back(
          {*t.cudart_library, *t.cudart_library + " (CUDA " + t.version->str() + ")", *t.version});
    }
  }
  return copies;
}

// The libraries the run reported: classified by the probe, else (facts built by hand)
// named from the paths alone.
std::vector<MappedLibrary> reported(const DeepProbe& d) {
  if (!d.loaded.empty()) return d.loaded;
  std::vector<MappedLibrary> out;
  for (const auto& p : d.loaded_libraries) {
    MappedLibrary m;
    m.path = p;
    const bool win = is_windows_name(p);
    const auto slash = p.find_last_of(win ? "/\\" : "/");
    m.name = slash == std::string::npos ? p : p.substr(slash + 1);
    auto kind = win ? nvidia_dll_kind(m.name) : nvidia_library_kind(m.name);
    if (!kind) continue;
    m.library = *kind;
    out.push_back(std::move(m));
  }
  return out;
}

void add_warning(std::string& w, const std::string& text) {
  w += (w.empty() ? "" : "; ") + text;
}

}  // namespace

std::vector<LoadedLibraryView> loaded_vs_installed(const Facts& f, const PythonEnv& e) {
  std::vector<LoadedLibraryView> out;
  if (!e.deep) return out;
  const std::vector<MappedLibrary> libs = reported(*e.deep);
  std::set<std::string> shown;  // family/major
  for (const auto& lib : libs) {
    auto k = key_of(lib);
    if (!k || k->sub) continue;
    const bool win = is_windows_name(lib.name);
    const std::string id = k->major ? k->family + "/" + std::to_string(k->major) : to_lower(k->row);
    if (!shown.insert(id).second) continue;
    const std::vector<Copy> copies = installed_copies(f, e, *k, win);
    LoadedLibraryView v;
    v.name = k->row;
    v.loaded = lib.path;
    if (!lib.origin.empty()) {
      v.origin = lib.origin + (lib.origin_detail.empty() ? "" : ": " + lib.origin_detail);
    }
    // The version: the file's own (a full version from its name, soname or PE resource;
    // a wheel's metadata only for NVIDIA's wheels), else the installed copy it is.
    std::optional<Version> lv;
    const bool own =
        lib.version.find('.') != std::string::npos &&
        !(lib.version_source == "pip wheel metadata" && !lib.origin_detail.starts_with("nvidia-"));
    if (own) lv = Version::parse(lib.version);
    for (const auto& c : copies) {
      if (!lv && norm_dir(c.path, win) == norm_dir(lib.path, win)) lv = c.version;
    }
    if (!lv && k->suffix.find('.') != std::string::npos) lv = Version::parse(k->suffix);
    if (lv) v.version = lv->str();
    const Copy* newest = nullptr;
    for (const auto& c : copies) {
      v.installed.push_back(c.label);
      if (c.version && (!newest || *newest->version < *c.version)) newest = &c;
    }
    if (lv && newest && *lv < *newest->version &&
        norm_dir(newest->path, win) != norm_dir(lib.path, win)) {
      add_warning(v.warning, "older than the " + newest->version->str() + " at " + newest->path);
    }
    // Sub-libraries of this family and major from another folder: mixed copies.
    for (const auto& s : libs) {
      auto sk = key_of(s);
      if (!sk || !sk->sub || sk->family != k->family || sk->major != k->major) continue;
      if (norm_dir(s.path, win) == norm_dir(lib.path, win)) continue;
      add_warning(v.warning, s.name + " came from " + dir_as_given(s.path) +
                                 ", not from beside it (mixed copies)");
    }
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace dlenv
