#include "report/python_loaded.h"

#include <set>

#include "util/strings.h"

namespace dlenv {
namespace {

// The library families shown (sub-libraries such as libcudnn_ops follow their family).
const std::set<std::string>& families() {
  static const std::set<std::string> f = {"libcudnn",     "libcublas",   "libcublasLt", "libcudart",
                                          "libnvJitLink", "libcusparse", "libcufft",    "libcurand",
                                          "libnccl",      "libnvrtc",    "libcusolver"};
  return f;
}

struct Key {
  std::string stem;  // "libcudnn"
  int major = 0;
  std::string suffix;  // "9.1.0" of libcudnn.so.9.1.0
};

std::optional<Key> key_of(std::string_view path) {
  std::string b = path_basename(path);
  auto p = b.find(".so.");
  if (p == std::string::npos) return std::nullopt;
  auto v = Version::parse(std::string_view(b).substr(p + 4));
  if (!v) return std::nullopt;
  return Key{b.substr(0, p), v->major(), b.substr(p + 4)};
}

struct Copy {
  std::string path;
  std::string label;
  std::optional<Version> version;
};

}  // namespace

std::vector<LoadedLibraryView> loaded_vs_installed(const Facts& f, const PythonEnv& e) {
  std::vector<LoadedLibraryView> out;
  if (!e.deep) return out;
  std::set<std::string> shown;
  for (const auto& loaded : e.deep->loaded_libraries) {
    auto k = key_of(loaded);
    if (!k || !families().contains(k->stem)) continue;
    std::string name = k->stem + ".so." + std::to_string(k->major);
    if (!shown.insert(name).second) continue;
    std::vector<Copy> copies;
    for (const auto& l : e.cuda_libs) {
      if ("lib" + l.library != k->stem || l.major != k->major) continue;
      copies.push_back(
          {l.path, l.path + (l.package.empty() ? "" : " (" + l.package + " " + l.version + ")"),
           Version::parse(l.version)});
    }
    if (k->stem == "libcudnn") {
      for (const auto& c : f.cudnn) {
        if (c.major != k->major) continue;
        bool dup = false;
        for (const auto& x : copies) dup |= path_dirname(x.path) == c.dir;
        if (dup) continue;
        std::optional<Version> v =
            c.library_version ? std::optional<Version>(*c.library_version) : std::nullopt;
        copies.push_back({c.library, c.library + (v ? " (" + v->str() + ")" : ""), v});
      }
    }
    if (k->stem == "libcudart") {
      for (const auto& t : f.toolkits) {
        if (!t.cudart_library || !t.version || t.version->major() != k->major) continue;
        copies.push_back({*t.cudart_library, *t.cudart_library + " (CUDA " + t.version->str() + ")",
                          *t.version});
      }
    }
    LoadedLibraryView v;
    v.name = name;
    v.loaded = loaded;
    std::optional<Version> lv;
    for (const auto& c : copies) {
      if (c.path == loaded || path_dirname(c.path) == path_dirname(loaded)) lv = c.version;
    }
    if (!lv && k->suffix.find('.') != std::string::npos) lv = Version::parse(k->suffix);
    if (lv) v.version = lv->str();
    const Copy* newest = nullptr;
    for (const auto& c : copies) {
      v.installed.push_back(c.label);
      if (c.version && (!newest || *newest->version < *c.version)) newest = &c;
    }
    if (lv && newest && *lv < *newest->version &&
        path_dirname(newest->path) != path_dirname(loaded)) {
      v.warning = "older than the " + newest->version->str() + " at " + newest->path;
    }
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace dlenv
