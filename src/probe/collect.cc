// collect_facts: runs every probe. The live probes (NVML, libcuda, each cuDNN copy) run in
// one child process (probe/live_isolation.h), started first and fed while the file probes
// run here; a crash or hang there is a LiveProbeFailure, never the end of the report.
#include <fmt/format.h>

#include <chrono>
#include <regex>
#include <set>

#include "platform/process.h"
#include "probe/cuda_driver.h"
#include "probe/live_isolation.h"
#include "probe/nvml.h"
#include "probe/probe.h"
#include "probe/process_maps.h"
#include "probe/system_probe.h"
#include "probe/windows_probes.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// A failure of a probe that loads a library by name: the file the loader model picks for it
// (the first candidate it resolves), and the ELF pre-check on that file and everything it
// needs, so that a crash is explained by the broken file.
void explain_by_loader_model(const ProbeContext& ctx, const LoaderConfig& loader,
                             const std::vector<std::string>& names, LiveProbeFailure& f) {
  if (ctx.os != Os::linux || !f.file_problem.empty()) return;
  for (const auto& name : names) {
    auto tree = model_linux_load(ctx.fs, ctx.kb, name, linux_loader_settings(loader));
    if (!tree || tree->objects.empty() || !tree->objects[0].path) continue;
    if (f.path.empty()) f.path = *tree->objects[0].path;
    for (const auto& o : tree->objects) {
      if (!o.path) continue;
      if (auto why = library_file_problem(ctx.fs.host_path(*o.path))) {
        f.problem_path = *o.path;
        f.file_problem = *why;
        return;
      }
    }
    return;
  }
}

// nvidia-smi as a last resort when NVML could not be loaded at all.
void nvidia_smi_fallback(const ProbeContext& ctx, Facts& f) {
  ProcessOptions po;
  po.timeout = std::chrono::milliseconds(5000);
  auto r = run_process({"nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"}, po);
  if (!r) {
    f.driver.nvidia_smi_version =
        Fact<std::string>::unknown(FactStatus::not_found, r.error().message, "nvidia-smi");
    return;
  }
  if (r->timed_out) {
    f.driver.nvidia_smi_version = Fact<std::string>::unknown(
        FactStatus::timed_out, "nvidia-smi did not answer in 5 s", "nvidia-smi");
    return;
  }
  if (r->exit_code != 0) {
    std::string msg(trim(r->out + r->err));
    f.driver.nvidia_smi_version = Fact<std::string>::unknown(
        FactStatus::error, "exit " + std::to_string(r->exit_code) + ": " + msg, "nvidia-smi");
    return;
  }
  auto lines = split_lines(r->out);
  if (!lines.empty()) {
    f.driver.nvidia_smi_version = Fact<std::string>::known(std::string(trim(lines[0])),
                                                           "nvidia-smi --query-gpu=driver_version");
  }
  (void)ctx;
}

// The NVIDIA libraries on LD_LIBRARY_PATH (nvidia_library_kind: CUDA's, cuDNN, NCCL, the
// driver's), each checked with the ELF pre-check without loading it: a truncated
// libcudart.so.13 there is what every program that loads it gets first (PyTorch's own wheel
// copy included: LD_LIBRARY_PATH wins over RUNPATH), and it crashes them. Files a live
// probe already refused are not reported twice.
void check_ld_library_path_files(const ProbeContext& ctx, Facts& f) {
  if (ctx.os != Os::linux) return;
  std::set<std::string> seen;  // real paths: a link and its target are one file
  for (const auto& x : f.live_failures) {
    seen.insert(ctx.fs.real_path(x.problem_path.empty() ? x.path : x.problem_path).value_or(""));
  }
  for (const auto& dir : f.env.ld_library_path) {
    if (dir.empty() || dir[0] != '/') continue;
    auto entries = ctx.fs.list_dir(dir);
    if (!entries) continue;
    for (const auto& e : *entries) {
      if (!nvidia_library_kind(e.name)) continue;
      const std::string path = path_join(dir, e.name);
      const std::string real = ctx.fs.real_path(path).value_or(path);
      if (!seen.insert(real).second) continue;
      auto why = library_file_problem(ctx.fs.host_path(path));
      // A runtime name (libcudart.so.13) that is not ELF at all stops the loader too
      // ("file too short", "invalid ELF header"); an unversioned .so may be a linker script.
      // Only on the live system: a --root tree (an image being built, a test sysroot) may
      // hold placeholder files where libraries go.
      if (!why && !ctx.fs.is_rooted() && e.name.find(".so.") != std::string::npos) {
        if (auto head = ctx.fs.read_head(path, 4); head && !head->starts_with("\177ELF")) {
          why = head->size() < 4 ? fmt::format("it is not a library ({} bytes long)", head->size())
                                 : std::string("it is not a library (no ELF header)");
        }
      }
      if (!why) continue;
      LiveProbeFailure x;
      x.probe = kLdLibraryPathCheck;
      x.library = e.name;
      x.path = path;
      x.problem_path = path;
      x.file_problem = *why;
      f.live_failures.push_back(std::move(x));
    }
  }
}

}  // namespace

Facts collect_facts(const ProbeContext& ctx, const ProbeOptions& options) {
  auto t_all = Clock::now();
  Facts f;
  f.rooted = ctx.fs.is_rooted();

  // Windows: the driver DLLs first (cheap), so NVML can also be loaded from NVSMI.
  std::optional<WindowsFacts> win;
  std::vector<GpuFacts> win_gpus;
  ProbeOptions live_options = options;
  if (ctx.os == Os::windows) {
    auto t0 = Clock::now();
    win.emplace();
    probe_windows_driver(ctx, *win, f.driver, win_gpus);
    if (live_options.nvml_candidates.empty()) {
      live_options.nvml_candidates = default_nvml_candidates();
      for (const auto& n : win->nvml) {
        live_options.nvml_candidates.push_back(ctx.fs.host_path(n.path));
      }
    }
    f.timing.ms["windows_driver"] = ms_since(t0);
  }

  const std::vector<std::string> nvml_candidates = live_options.nvml_candidates.empty()
                                                       ? default_nvml_candidates()
                                                       : live_options.nvml_candidates;
  const std::vector<std::string> cuda_candidates = live_options.cuda_candidates.empty()
                                                       ? default_cuda_driver_candidates()
                                                       : live_options.cuda_candidates;
  std::optional<LiveProbeSession> live;
  if (ctx.live) {
    auto t0 = Clock::now();
    live.emplace(options.live_probe_argv.empty() ? live_probe_argv() : options.live_probe_argv,
                 options.live_limits);
    live->request({LiveRequest::Kind::nvml, nvml_candidates, {}});
    live->request({LiveRequest::Kind::cuda_driver, cuda_candidates, {}});
    f.timing.ms["live_start"] = ms_since(t0);
  }

  auto t0 = Clock::now();
  f.host = probe_host(ctx);
  f.env = probe_env(ctx);
  f.timing.ms["host"] = ms_since(t0);

  t0 = Clock::now();
  LoaderConfig loader = read_loader_config(ctx);
  f.timing.ms["loader_config"] = ms_since(t0);  // `deps` names it so too

  t0 = Clock::now();
  std::vector<GpuFacts> proc_gpus;
  if (ctx.os == Os::linux) {
    probe_driver_files(ctx, loader, f.driver);
    proc_gpus = probe_gpus_from_proc(ctx);
  } else {
    proc_gpus = std::move(win_gpus);
  }
  f.timing.ms["driver_files"] = ms_since(t0);

  t0 = Clock::now();
  f.toolkits = ctx.os == Os::windows ? probe_windows_toolkits(ctx) : probe_toolkits(ctx, loader);
  f.timing.ms["toolkits"] = ms_since(t0);

  t0 = Clock::now();
  ProbeOptions file_only = options;
  file_only.load_cudnn = false;
  f.cudnn = ctx.os == Os::windows ? probe_windows_cudnn(ctx, f.toolkits)
                                  : probe_cudnn(ctx, loader, f.toolkits, file_only);
  f.timing.ms["cudnn"] = ms_since(t0);
  // The copies' cudnnGetVersion, in the child while the probes below run.
  std::vector<CudnnCopy*> cudnn_loaded;
  if (live && options.load_cudnn && ctx.os == Os::linux) {
    for (auto& copy : f.cudnn) {
      if (!ctx.fs.exists(copy.library)) continue;
      live->request({LiveRequest::Kind::cudnn, {}, ctx.fs.host_path(copy.library)});
      cudnn_loaded.push_back(&copy);
    }
  }

  t0 = Clock::now();
  probe_system(ctx, loader, f, f.system);
  f.timing.ms["system"] = ms_since(t0);

  t0 = Clock::now();
  f.python = probe_python(ctx, options, &loader);
  f.host.glibc = probe_glibc(ctx, loader);
  f.timing.ms["python"] = ms_since(t0);
  if (options.python_deep && !ctx.fs.is_rooted()) {
    t0 = Clock::now();
    probe_python_deep(ctx.fs, f.python, std::chrono::seconds(options.python_deep_timeout_s));
    f.timing.ms["python_deep"] = ms_since(t0);
  }
  if (win) {
    t0 = Clock::now();
    probe_windows_runtime(ctx, f.toolkits, f.cudnn, f.python, *win);
    f.windows = std::move(win);
    f.timing.ms["windows_runtime"] = ms_since(t0);
  }
  t0 = Clock::now();
  f.loader = probe_loader_facts(ctx, loader, f);
  f.timing.ms["loader"] = ms_since(t0);

  if (live) {
    t0 = Clock::now();
    LiveAnswers answers = live->finish();
    f.timing.ms["live_wait"] = ms_since(t0);
    f.timing.ms["live_children"] = answers.children;
    // A probe whose child failed: its facts say so, with the failure.
    auto failed = [&](std::string_view probe) -> std::string {
      for (const auto& x : answers.failures) {
        if (x.probe == probe && !x.failure.empty()) return describe_live_failure(x);
      }
      return "the probe process did not answer";
    };
    for (auto& x : answers.failures) {
      if (x.probe == "NVML") explain_by_loader_model(ctx, loader, nvml_candidates, x);
      if (x.probe == "libcuda") explain_by_loader_model(ctx, loader, cuda_candidates, x);
    }
    for (size_t i = 0; i < cudnn_loaded.size(); ++i) {
      CudnnCopy& copy = *cudnn_loaded[i];
      if (i < answers.cudnn.size() && answers.cudnn[i]) {
        apply_cudnn_live(copy, *answers.cudnn[i]);
        continue;
      }
      std::string why = "the probe process did not answer";
      for (const auto& x : answers.failures) {
        if (x.probe == "cuDNN" && x.library == ctx.fs.host_path(copy.library)) {
          why = describe_live_failure(x);
        }
      }
      copy.live_version = Fact<Version>::unknown(FactStatus::error, why, "dlopen " + copy.library);
    }
    struct {
      NvmlSnapshot nvml;
      CudaDriverSnapshot cuda;
    } r;
    if (answers.nvml) {
      r.nvml = std::move(*answers.nvml);
    } else {
      r.nvml.library = Fact<std::string>::unknown(FactStatus::error, failed("NVML"), "NVML");
      r.nvml.driver_version = r.nvml.library;
      r.nvml.init_error = r.nvml.library;
      r.nvml.device_count = Fact<int>::unknown(FactStatus::error, failed("NVML"), "NVML");
    }
    if (answers.cuda) {
      r.cuda = std::move(*answers.cuda);
    } else {
      r.cuda.library = Fact<std::string>::unknown(FactStatus::error, failed("libcuda"), "libcuda");
      r.cuda.version = Fact<int>::unknown(FactStatus::error, failed("libcuda"), "libcuda");
      r.cuda.error = r.cuda.library;
    }
    f.live_failures = std::move(answers.failures);
    f.timing.ms["nvml"] = r.nvml.init_ms + r.nvml.query_ms;
    f.timing.ms["nvml_init"] = r.nvml.init_ms;
    f.timing.ms["nvml_query"] = r.nvml.query_ms;
    f.driver.nvml_library = r.nvml.library;
    f.driver.nvml_driver_version = r.nvml.driver_version;
    f.driver.nvml_error = r.nvml.init_error;
    f.driver.cuda_driver_version = r.cuda.version;
    f.driver.libcuda_library = r.cuda.library;
    f.driver.libcuda_error = r.cuda.error;
    if (r.cuda.stub) {
      for (auto& lf : f.driver.libcuda_files) {
        if (r.cuda.library && lf.path == *r.cuda.library) lf.is_stub = true;
      }
    }
    if (!r.cuda.version && r.nvml.cuda_driver_version) {
      f.driver.cuda_driver_version = r.nvml.cuda_driver_version;
    }
    f.gpu_count = r.nvml.device_count;
    f.gpus = std::move(r.nvml.gpus);
    // NVML knows no compute capability for very old drivers: fill from the KB.
    for (auto& g : f.gpus) {
      if (!g.compute_capability && g.name) {
        if (auto info = ctx.kb.gpu_by_name(*g.name)) {
          g.compute_capability =
              Fact<Version>::known(info->compute_capability, "knowledge base (by name)");
        }
      }
    }
    if (!r.nvml.library && options.nvidia_smi_fallback && f.driver.kernel_module_version) {
      nvidia_smi_fallback(ctx, f);
    } else {
      f.driver.nvidia_smi_version = Fact<std::string>::unknown(
          FactStatus::skipped,
          r.nvml.library ? "not needed: NVML answered" : "no nvidia kernel module loaded",
          "nvidia-smi");
    }
  } else {
    const char* why = "live probes are skipped under --root";
    f.driver.nvml_driver_version = Fact<std::string>::unknown(FactStatus::skipped, why, "NVML");
    f.driver.nvml_library = Fact<std::string>::unknown(FactStatus::skipped, why, "NVML");
    f.driver.cuda_driver_version =
        Fact<int>::unknown(FactStatus::skipped, why, "libcuda cuDriverGetVersion");
    f.driver.libcuda_library = Fact<std::string>::unknown(FactStatus::skipped, why, "libcuda");
    f.driver.nvidia_smi_version =
        Fact<std::string>::unknown(FactStatus::skipped, why, "nvidia-smi");
  }
  if (f.gpus.empty() && !proc_gpus.empty()) {
    f.gpus = std::move(proc_gpus);
    f.gpu_count = Fact<int>::known(
        static_cast<int>(f.gpus.size()),
        ctx.os == Os::windows ? "registry display adapters" : "/proc/driver/nvidia/gpus");
  } else if (!f.gpu_count) {
    if (!f.gpu_count.ok() && f.gpu_count.reason.empty()) {
      f.gpu_count =
          Fact<int>::unknown(FactStatus::not_found, "no NVIDIA GPU visible to the driver", "NVML");
    }
  }
  apply_cuda_visible_devices(ctx.env.get("CUDA_VISIBLE_DEVICES"), f.gpus);
  t0 = Clock::now();
  check_ld_library_path_files(ctx, f);
  f.timing.ms["ld_library_path_files"] = ms_since(t0);
  f.timing.ms["total"] = ms_since(t_all);
  return f;
}

}  // namespace dlenv
