// Probes: fact collectors, one file per layer. They only observe; they never
// decide what is wrong (that is rules/) and never print.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "binfmt/ldcache.h"
#include "kb/kb.h"
#include "platform/env.h"
#include "platform/filesystem.h"
#include "platform/registry.h"
#include "probe/facts.h"
#include "probe/live_isolation.h"
#include "probe/loader_model.h"

namespace dlenv {

struct ProbeContext {
  const FileSystem& fs;
  const Env& env;
  const Kb& kb;
  Os os = Os::linux;
  // False under --root: NVML, libcuda, dlopen and subprocesses are skipped and
  // their facts come from files inside the root.
  bool live = true;
  std::string env_source = "process environment";
  // Windows registry (HKCU/HKLM values); empty when none can be read (a --root run
  // without --registry-file, or Linux). registry_source names where it comes from.
  RegistryReader registry = nullptr;
  std::string registry_source = {};
};

struct ProbeOptions {
  std::vector<std::string> nvml_candidates;  // empty: the platform default
  std::vector<std::string> cuda_candidates;  // empty: the platform default
  bool nvidia_smi_fallback = true;
  bool load_cudnn = true;                 // call cudnnGetVersion on each copy (live only)
  std::vector<std::string> python_paths;  // --python PATH (repeatable)
  std::string project_dir;                // --project DIR: the IDE's interpreter
  bool python_deep = false;               // --deep: run each interpreter with the probe script
  int python_deep_timeout_s = 60;
  // The live probes' child (probe/live_isolation.h): its command line (empty: dlenv itself,
  // live_probe_argv()) and its limits.
  std::vector<std::string> live_probe_argv;
  LiveLimits live_limits;
};

// The dynamic loader's configuration as read from files (the root's own under --root).
struct LoaderConfig {
  std::optional<LdCache> cache;
  Fact<std::string> cache_status;      // value "parsed N entries (format)" or the reason
  std::vector<std::string> conf_dirs;  // directories listed by /etc/ld.so.conf (+ includes)
  std::vector<std::string> ld_library_path;
};

LoaderConfig read_loader_config(const ProbeContext& ctx);
// Settings for the loader model (probe/loader_model.h) from that configuration: dlopen by
// name the way ld.so does, without run-time companions or symbol checks.
LinuxLoaderSettings linux_loader_settings(const LoaderConfig& loader);

HostFacts probe_host(const ProbeContext& ctx);
EnvFacts probe_env(const ProbeContext& ctx);
// File-based driver facts: /proc, /sys, /dev, driver library files.
void probe_driver_files(const ProbeContext& ctx, const LoaderConfig& loader, DriverFacts& out);
// GPUs from /proc/driver/nvidia/gpus/*/information (+ KB for compute capability).
std::vector<GpuFacts> probe_gpus_from_proc(const ProbeContext& ctx);
// Applies CUDA_VISIBLE_DEVICES to the GPU list (sets visible/visibility_reason).
void apply_cuda_visible_devices(const std::optional<std::string>& value,
                                std::vector<GpuFacts>& gpus);
std::vector<ToolkitFacts> probe_toolkits(const ProbeContext& ctx, const LoaderConfig& loader);
std::vector<CudnnCopy> probe_cudnn(const ProbeContext& ctx, const LoaderConfig& loader,
                                   const std::vector<ToolkitFacts>& toolkits,
                                   const ProbeOptions& options);

// Loads one copy for real (by its full path) in a probe process of its own
// (probe/live_isolation.h) and calls cudnnGetVersion / cudnnGetCudartVersion. Live only;
// a crash or hang of the library is the live version's reason.
void probe_cudnn_live(const ProbeContext& ctx, CudnnCopy& copy);

// Python environments (PATH, --python, VIRTUAL_ENV, conda, pyenv) and what is installed
// in them, read from files only (probe/python.cc).
// With `loader`, the CUDA libraries the frameworks' GPU parts need are resolved the way
// ld.so would (ONNX Runtime's CUDA provider, paddle's cuDNN).
std::vector<PythonEnv> probe_python(const ProbeContext& ctx, const ProbeOptions& options,
                                    const LoaderConfig* loader = nullptr);

// Every site-packages directory of every interpreter probe_python finds (the same
// discovery, without reading packages), in discovery order, duplicates (by real path)
// removed. For other probes and commands that look for pip wheels.
std::vector<std::string> python_site_packages(const ProbeContext& ctx,
                                              const ProbeOptions& options = {});

// The C library's version (Linux): the newest GLIBC_2.N version libc.so.6 defines, or the
// libc-2.N.so file name of older glibc. Not-found on Windows or when no libc.so.6 is found.
Fact<std::string> probe_glibc(const ProbeContext& ctx, const LoaderConfig& loader);

// --deep: runs every interpreter found (in parallel, each with the timeout) with the
// probe script embedded in the binary and fills PythonEnv::deep. Never hangs. The
// libraries each process reports loaded are classified through `fs`.
void probe_python_deep(const FileSystem& fs, std::vector<PythonEnv>& envs,
                       std::chrono::milliseconds timeout);

// The loads doctor reasons about, modelled by the loader models on the files (after
// the cuDNN, toolkit, Python and Windows facts): LD_PRELOAD, LD_LIBRARY_PATH entries,
// cuDNN copies with their run-time sub-libraries, CUDA libraries opened by name, and
// (Windows) framework extension modules imported by Python >= 3.8 (probe/loader_facts.cc).
LoaderFacts probe_loader_facts(const ProbeContext& ctx, const LoaderConfig& loader,
                               const Facts& facts);

// Everything, with the live NVML/libcuda work overlapped with the file probes.
Facts collect_facts(const ProbeContext& ctx, const ProbeOptions& options);

}  // namespace dlenv
