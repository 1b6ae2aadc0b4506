#include "cli/verify_cmd.h"

#include <algorithm>
#include <ostream>

#include "cli/cli.h"
#include "gpu/verify.h"
#include "platform/env.h"
#include "platform/filesystem.h"
#include "probe/nvml.h"
#include "probe/nvml_health.h"
#include "probe/probe.h"
#include "util/strings.h"

namespace dlenv {
namespace {

// Where verify takes cuBLAS and cuDNN from, and why (shown in the report).
struct LibChoice {
  std::string cublas_dir;  // "" = by soname through the loader
  std::string cudnn_dir;   // "" = by soname through the loader
  std::string why;
};

bool dir_has(const FileSystem& fs, const std::string& dir, std::string_view prefix) {
  auto entries = fs.list_dir(dir);
  if (!entries) return false;
  for (const auto& e : *entries) {
    if (starts_with(e.name, prefix)) return true;
  }
  return false;
}

// The copies a Python environment's frameworks would load: its nvidia-* wheels
// (found by the Python probe), preferring an environment that has a framework.
std::optional<LibChoice> from_python(const ProbeContext& ctx, const std::string& interpreter) {
  ProbeOptions po;
  if (!interpreter.empty()) po.python_paths.push_back(interpreter);
  auto envs = probe_python(ctx, po);
  std::stable_sort(envs.begin(), envs.end(), [](const PythonEnv& a, const PythonEnv& b) {
    return a.frameworks.size() > b.frameworks.size();
  });
  for (const auto& e : envs) {
    if (!interpreter.empty() && e.interpreter.value.value_or("") != interpreter) continue;
    LibChoice c;
    for (const auto& lib : e.cuda_libs) {
      if (lib.library == "cublas" && c.cublas_dir.empty()) c.cublas_dir = path_dirname(lib.path);
      if (lib.library == "cudnn" && c.cudnn_dir.empty()) c.cudnn_dir = path_dirname(lib.path);
    }
    if (c.cublas_dir.empty() && c.cudnn_dir.empty()) continue;
    c.why = "the pip wheel copies of the Python at " + e.interpreter.value.value_or(e.prefix);
    return c;
  }
  return std::nullopt;
}

// The newest toolkit's libraries (cuDNN too when it was copied into the toolkit).
LibChoice from_toolkit(const ProbeContext& ctx) {
  LoaderConfig loader = read_loader_config(ctx);
  auto toolkits = probe_toolkits(ctx, loader);
  std::stable_sort(
      toolkits.begin(), toolkits.end(), [](const ToolkitFacts& a, const ToolkitFacts& b) {
        return a.version.value.value_or(Version{}) > b.version.value.value_or(Version{});
      });
  LibChoice c;
  for (const auto& t : toolkits) {
    for (const auto& d : t.lib_dirs) {
      if (c.cublas_dir.empty() && dir_has(ctx.fs, d, "libcublas.so.")) {
        c.cublas_dir = d;
        c.why = "the CUDA toolkit at " + t.root;
      }
      if (c.cudnn_dir.empty() && dir_has(ctx.fs, d, "libcudnn.so.")) c.cudnn_dir = d;
    }
    if (!c.cublas_dir.empty()) break;
  }
  if (c.cublas_dir.empty()) c.why = "the dynamic loader's search path";
  return c;
}

int soname_major(const FileSystem& fs, const std::string& dir, std::string_view prefix) {
  int best = 0;
  if (auto entries = fs.list_dir(dir)) {
    for (const auto& e : *entries) {
      if (!starts_with(e.name, prefix)) continue;
      if (auto v = parse_int(e.name.substr(prefix.size())); v && *v > best)
        best = static_cast<int>(*v);
    }
  }
  return best;
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
  ProbeContext ctx{*fs, *env, **kb, Os::linux, false, "process environment"};
  LibChoice choice;
  if (o.libs == "auto" || o.libs == "python" || starts_with(o.libs, "python:")) {
    std::string interp = starts_with(o.libs, "python:") ? o.libs.substr(7) : "";
    if (!interp.empty() && !fs->exists(interp)) {
      err << "dlenv verify: --libs " << o.libs << ": no such interpreter " << interp << "\n";
      return kExitUsage;
    }
    if (auto c = from_python(ctx, interp)) {
      choice = *c;
      // A wheel set without one of the two libraries: take that one from the toolkit.
      LibChoice tk = from_toolkit(ctx);
      if (choice.cublas_dir.empty()) choice.cublas_dir = tk.cublas_dir;
      if (choice.cudnn_dir.empty()) choice.cudnn_dir = tk.cudnn_dir;
    } else if (o.libs != "auto") {
      err << "dlenv verify: --libs " << o.libs
          << ": no Python environment with CUDA wheels (nvidia-cublas / nvidia-cudnn) found\n";
      return kExitUsage;
    } else {
      choice = from_toolkit(ctx);
    }
  } else if (o.libs == "toolkit") {
    choice = from_toolkit(ctx);
  } else {
    if (!fs->is_dir(o.libs)) {
      err << "dlenv verify: --libs " << o.libs
          << ": not a directory (use auto, toolkit, python[:INTERPRETER] or DIR)\n";
      return kExitUsage;
    }
    choice.cublas_dir = o.libs;
    choice.cudnn_dir = dir_has(*fs, o.libs, "libcudnn.so.") ? o.libs : "";
    choice.why = "--libs";
  }
  vo.cublas_dir = choice.cublas_dir;
  vo.cudnn_path = choice.cudnn_dir;
  vo.skip_dnn = o.no_cudnn;
  // The soname's major is what the directory holds.
  if (!vo.cublas_dir.empty()) vo.cuda_major = soname_major(*fs, vo.cublas_dir, "libcublas.so.");
  if (!vo.cudnn_path.empty()) vo.cudnn_major = soname_major(*fs, vo.cudnn_path, "libcudnn.so.");
  const std::string& why = choice.why;
  if (o.progress && !o.json) {
    vo.progress = [&err](const std::string& step) {
      err << "\r\033[K  running: " << step << std::flush;
    };
  }
  // NVML, when present, reads each GPU's compute mode and ECC counters before and after
  // its work. Without it (no driver, CI) verify runs the same minus those checks.
  auto nvml = NvmlHealthReader::open(o.nvml_candidates.empty() ? default_nvml_candidates()
                                                               : o.nvml_candidates);
  if (nvml) {
    const NvmlHealthReader& reader = **nvml;
    vo.health = [&reader](const std::string& bus, int index) -> std::optional<GpuHealth> {
      // By bus id: CUDA's order (CUDA_VISIBLE_DEVICES, FASTEST_FIRST) is not NVML's.
      auto h = bus.empty() ? reader.by_index(index) : reader.by_pci_bus_id(bus);
      if (!h) return std::nullopt;
      GpuHealth g;
      g.compute_mode = h->compute_mode;
      g.compute_processes = h->compute_processes;
      g.ecc_enabled = h->ecc_enabled;
      g.ecc_uncorrected_volatile = h->ecc_uncorrected_volatile;
      g.ecc_corrected_volatile = h->ecc_corrected_volatile;
      g.remap_pending = h->remap_pending;
      g.remap_failed = h->remap_failed;
      g.source = "NVML (" + reader.library() + ")";
      return g;
    };
  }
  VerifyResult r = run_verify(vo);
  if (vo.progress) err << "\r\033[K" << std::flush;
  if (o.json) {
    out << render_verify_json(r);
  } else {
    out << render_verify_text(r);
    if (!why.empty() && !r.cublas_library.empty())
      out << "(libraries chosen: " << why << "; --libs picks others)\n";
  }
  for (const auto& p : r.problems) {
    if (p.severity == "error") return kExitFindings;
  }
  if (r.devices.empty()) return kExitFindings;
  return kExitOk;
}

}  // namespace dlenv
