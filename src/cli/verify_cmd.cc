#include "cli/verify_cmd.h"

#include <ostream>

#include "cli/cli.h"
#include "gpu/verify.h"
#include "platform/env.h"
#include "platform/filesystem.h"
#include "probe/probe.h"
#include "util/strings.h"

namespace dlenv {
namespace {

// The directory holding libcublas.so.<major> that the user's framework would use:
// a pip wheel next to the python on PATH / in the active env, else the toolkit.
std::string find_cublas_dir(const FileSystem& fs, const Env& env, const std::string& mode,
                            const Kb& kb, std::string& why) {
  auto has_cublas = [&](const std::string& dir) {
    auto entries = fs.list_dir(dir);
    if (!entries) return false;
    for (const auto& e : *entries) {
      if (starts_with(e.name, "libcublas.so.")) return true;
    }
    return false;
  };
  if (mode == "auto") {
    std::vector<std::string> prefixes;
    for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
      if (auto v = env.get(var); v && !v->empty()) prefixes.push_back(*v);
    }
    if (auto p = env.get("PATH")) {
      for (const auto& d : split_path_list(*p, ':')) {
        if (fs.exists(path_join(d, "python3"))) prefixes.push_back(path_dirname(d));
      }
    }
    for (const auto& prefix : prefixes) {
      auto libs = fs.list_dir(path_join(prefix, "lib"));
      if (!libs) continue;
      for (const auto& e : *libs) {
        if (!starts_with(e.name, "python3")) continue;
        for (const char* sub :
             {"site-packages/nvidia/cu13/lib", "site-packages/nvidia/cublas/lib",
              "dist-packages/nvidia/cu13/lib", "dist-packages/nvidia/cublas/lib"}) {
          std::string d = path_join(path_join(path_join(prefix, "lib"), e.name), sub);
          if (has_cublas(d)) {
            why = "the pip wheel copy the Python at " + prefix + " would load";
            return d;
          }
        }
      }
    }
  }
  ProbeContext ctx{fs, env, kb, Os::linux, false, "process environment"};
  LoaderConfig loader = read_loader_config(ctx);
  for (const auto& t : probe_toolkits(ctx, loader)) {
    for (const auto& d : t.lib_dirs) {
      if (has_cublas(d)) {
        why = "the CUDA toolkit at " + t.root;
        return d;
      }
    }
  }
  why = "the dynamic loader's search path";
  return "";
}

}  // namespace

int run_verify_command(const VerifyCliOptions& o, std::ostream& out, std::ostream& err) {
  auto kb = o.kb_dir.empty() ? Kb::load_embedded() : Kb::load_dir(o.kb_dir);
  if (!kb) {
    err << "dlenv verify: knowledge base: " << kb.error().message << "\n";
    return kExitToolFailed;
  }
  VerifyOptions vo;
  vo.kb = kb->get();
  vo.full = o.full;
  if (o.device != "all") {
    auto d = parse_int(o.device);
    if (!d || *d < 0) {
      err << "dlenv verify: --device must be a GPU index or 'all', not '" << o.device << "'\n";
      return kExitUsage;
    }
    vo.device = static_cast<int>(*d);
  }
  auto fs = make_real_filesystem();
  auto env = make_process_env();
  std::string why;
  if (o.libs == "auto" || o.libs == "toolkit") {
    vo.cublas_dir = find_cublas_dir(*fs, *env, o.libs, **kb, why);
  } else {
    if (!fs->is_dir(o.libs)) {
      err << "dlenv verify: --libs " << o.libs << ": not a directory (use auto, toolkit or DIR)\n";
      return kExitUsage;
    }
    vo.cublas_dir = o.libs;
    why = "--libs";
  }
  if (!vo.cublas_dir.empty()) {
    // The soname's major is what the directory holds.
    if (auto entries = fs->list_dir(vo.cublas_dir)) {
      for (const auto& e : *entries) {
        if (starts_with(e.name, "libcublas.so.")) {
          if (auto v = parse_int(e.name.substr(13))) vo.cuda_major = static_cast<int>(*v);
        }
      }
    }
  }
  VerifyResult r = run_verify(vo);
  if (o.json) {
    out << render_verify_json(r);
  } else {
    out << render_verify_text(r);
    if (!why.empty() && !r.cublas_library.empty()) out << "(cuBLAS chosen: " << why << ")\n";
  }
  for (const auto& p : r.problems) {
    if (p.severity == "error") return kExitFindings;
  }
  if (r.devices.empty()) return kExitFindings;
  return kExitOk;
}

}  // namespace dlenv
