#include "rules/loader_coverage.h"

#include "util/strings.h"

namespace dlenv {

bool framework_context(const LoadContext& c) {
  return (c.kind == "framework" || c.kind == "framework-dlopen") && c.error.empty();
}

bool loader_resolves_cudnn(const Facts& f, const PythonEnv& e) {
  for (const auto& c : f.loader.contexts) {
    if (!framework_context(c) || c.python_prefix != e.prefix) continue;
    for (const auto& l : c.libs) {
      if (starts_with(l.name, "libcudnn") && !l.path.empty()) return true;
    }
  }
  return false;
}

bool loader_looks_for_libcudnn(const Facts& f, const PythonEnv& e, std::string_view framework) {
  for (const auto& c : f.loader.contexts) {
    if (!framework_context(c) || c.python_prefix != e.prefix) continue;
    if (!framework.empty() && c.framework != framework) continue;
    for (const auto& l : c.libs) {
      if (starts_with(l.name, "libcudnn.so.")) return true;
    }
  }
  return false;
}

bool loader_resolves_libcuda(const Facts& f) {
  for (const auto& ctx : f.loader.contexts) {
    if (ctx.kind != "by-name" && !framework_context(ctx)) continue;
    for (const auto& l : ctx.libs) {
      if (l.name == "libcuda.so.1" && !l.path.empty()) return true;
    }
  }
  return false;
}

const ResolvedLib* cudnn8_dll_loaded_by(const LoadContext& ctx) {
  for (const auto& l : ctx.libs) {
    if (to_lower(path_basename(l.name)) == "cudnn64_8.dll" && !l.path.empty()) return &l;
  }
  return nullptr;
}

bool loader_loads_win_cudnn8(const Facts& f, const std::string& library) {
  for (const auto& ctx : f.loader.contexts) {
    if (ctx.kind != "by-name" && ctx.kind != "python-extension") continue;
    if (const auto* m = cudnn8_dll_loaded_by(ctx); m && to_lower(m->path) == to_lower(library)) {
      return true;
    }
  }
  return false;
}

}  // namespace dlenv
