// Forward compatibility: the cuda-compat package puts a newer libcuda.so (a newer
// CUDA driver API) in /usr/local/cuda-X.Y/compat, used only when the loader picks
// it (LD_LIBRARY_PATH, an ld.so.conf entry). Which libcuda.so.1 the loader picks is
// decided by the loader model, from files, so it works under --root.
#include "probe/system_probe.h"
#include "util/strings.h"

namespace dlenv {
namespace {

// A path component named "compat" (/usr/local/cuda-13.0/compat/libcuda.so.1).
bool in_compat_dir(std::string_view path) {
  for (const std::string& part : split(path, '/')) {
    if (part == "compat") return true;
  }
  return false;
}

// "libcuda.so.590.44.01" -> "590.44.01"; "" for libcuda.so / libcuda.so.1.
std::string driver_version_of(std::string_view file_name) {
  constexpr std::string_view stem = "libcuda.so.";
  if (!starts_with(file_name, stem)) return {};
  std::string_view rest = file_name.substr(stem.size());
  auto v = Version::parse(rest);
  return v && v->parts().size() >= 2 ? std::string(rest) : std::string();
}

}  // namespace

void probe_forward_compat(const ProbeContext& ctx, const LoaderConfig& loader,
                          ForwardCompatFacts& out) {
  const FileSystem& fs = ctx.fs;
  // The cuda-compat copies present: /usr/local/cuda*/compat (real directories once).
  std::vector<std::string> dirs;
  if (auto local = fs.list_dir("/usr/local")) {
    for (const auto& e : *local) {
      if (!starts_with(e.name, "cuda")) continue;
      std::string dir = "/usr/local/" + e.name + "/compat";
      if (!fs.is_dir(dir)) continue;
      std::string real = fs.real_path(dir).value_or(dir);
      if (std::find(dirs.begin(), dirs.end(), real) == dirs.end()) dirs.push_back(real);
    }
  }
  for (const auto& dir : dirs) {
    auto entries = fs.list_dir(dir);
    if (!entries) continue;
    for (const auto& e : *entries) {
      std::string v = driver_version_of(e.name);
      if (!v.empty()) out.compat_copies.push_back(path_join(dir, e.name) + " (" + v + ")");
    }
  }

  // The libcuda.so.1 that dlopen("libcuda.so.1") (what cudart does) would map.
  auto tree = model_linux_load(fs, ctx.kb, "libcuda.so.1", linux_loader_settings(loader));
  if (!tree) {
    out.libcuda = Fact<std::string>::unknown(FactStatus::error, tree.error().message,
                                             "loader model (libcuda.so.1)");
    return;
  }
  const LoadedObject* o = tree->objects.empty() ? nullptr : &tree->objects[0];
  if (!o || !o->path || o->missing || o->wrong_class) {
    out.libcuda =
        Fact<std::string>::unknown(FactStatus::not_found, "the loader finds no usable libcuda.so.1",
                                   "loader model (libcuda.so.1)");
    return;
  }
  out.rule = o->rule_detail.empty() ? std::string(search_rule_name(o->rule)) : o->rule_detail;
  out.libcuda = Fact<std::string>::known(*o->path, "loader model (libcuda.so.1): " + out.rule);
  std::string real = o->real_path.empty() ? *o->path : o->real_path;
  out.version = driver_version_of(path_basename(real));
  out.compat = in_compat_dir(*o->path) || in_compat_dir(real);
}

}  // namespace dlenv
