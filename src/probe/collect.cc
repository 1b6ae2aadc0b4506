// collect_facts: runs every probe. The live NVML + libcuda work (~20 ms on a
// real driver) runs on a second thread while the file probes run here.
#include <chrono>
#include <future>
#include <regex>

#include "platform/process.h"
#include "probe/cuda_driver.h"
#include "probe/nvml.h"
#include "probe/probe.h"
#include "probe/system_probe.h"
#include "probe/windows.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct LiveResult {
  NvmlSnapshot nvml;
  CudaDriverSnapshot cuda;
  double nvml_ms = 0;
  double cuda_ms = 0;
};

LiveResult run_live(const ProbeOptions& options) {
  LiveResult r;
  auto t0 = Clock::now();
  r.nvml = probe_nvml(options.nvml_candidates.empty() ? default_nvml_candidates()
                                                      : options.nvml_candidates);
  r.nvml_ms = ms_since(t0);
  t0 = Clock::now();
  r.cuda = probe_cuda_driver(options.cuda_candidates.empty() ? default_cuda_driver_candidates()
                                                             : options.cuda_candidates);
  r.cuda_ms = ms_since(t0);
  return r;
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

  std::future<LiveResult> live;
  if (ctx.live) {
    live = std::async(std::launch::async, run_live, live_options);
  }

  auto t0 = Clock::now();
  f.host = probe_host(ctx);
  f.env = probe_env(ctx);
  f.timing.ms["host"] = ms_since(t0);

  t0 = Clock::now();
  LoaderConfig loader = read_loader_config(ctx);
  f.timing.ms["loader"] = ms_since(t0);

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
  if (ctx.live && options.load_cudnn && ctx.os == Os::linux) {
    // Each dlopen runs the library's initialisers (~10 ms): load the copies in parallel.
    t0 = Clock::now();
    std::vector<std::future<void>> loads;
    for (auto& copy : f.cudnn) {
      if (!ctx.fs.exists(copy.library)) continue;
      loads.push_back(
          std::async(std::launch::async, [&ctx, &copy] { probe_cudnn_live(ctx, copy); }));
    }
    for (auto& l : loads) l.get();
    f.timing.ms["cudnn_live"] = ms_since(t0);
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

  if (live.valid()) {
    t0 = Clock::now();
    LiveResult r = live.get();
    f.timing.ms["live_wait"] = ms_since(t0);
    f.timing.ms["nvml"] = r.nvml_ms;
    f.timing.ms["nvml_init"] = r.nvml.init_ms;
    f.timing.ms["nvml_query"] = r.nvml.query_ms;
    f.timing.ms["libcuda"] = r.cuda_ms;
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
  f.timing.ms["total"] = ms_since(t_all);
  return f;
}

}  // namespace dlenv
