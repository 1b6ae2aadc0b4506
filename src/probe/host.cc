// Host facts: distro, kernel, arch, hostname, CPU, container, WSL2.
#include "platform/system.h"
#include "probe/probe.h"
#include "util/strings.h"

namespace dlenv {
namespace {

std::optional<std::string> os_release_value(const std::string& text, std::string_view key) {
  for (const auto& line : split_lines(text)) {
    if (!starts_with(line, key) || line.size() <= key.size() || line[key.size()] != '=') continue;
    std::string v(trim(std::string_view(line).substr(key.size() + 1)));
    if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
      v = v.substr(1, v.size() - 2);
    }
    return v;
  }
  return std::nullopt;
}

// The CPU model and the number of logical CPUs: /proc/cpuinfo on Linux (under --root too),
// the variables Windows sets for every process on Windows.
void probe_cpu(const ProbeContext& ctx, HostFacts& h) {
  if (ctx.os == Os::windows) {
    if (auto id = ctx.env.get("PROCESSOR_IDENTIFIER"); id && !trim(*id).empty()) {
      h.cpu_model = Fact<std::string>::known(std::string(trim(*id)), "PROCESSOR_IDENTIFIER");
    } else {
      h.cpu_model =
          Fact<std::string>::unknown(FactStatus::not_found, "PROCESSOR_IDENTIFIER is not set");
    }
    auto n = ctx.env.get("NUMBER_OF_PROCESSORS");
    auto count = n ? parse_int(trim(*n)) : std::nullopt;
    if (count && *count > 0) {
      h.cpu_count = Fact<int>::known(static_cast<int>(*count), "NUMBER_OF_PROCESSORS");
    } else {
      h.cpu_count = Fact<int>::unknown(FactStatus::not_found, "NUMBER_OF_PROCESSORS is not set");
    }
    return;
  }
  const char* path = "/proc/cpuinfo";
  auto text = ctx.fs.read_file(path);
  if (!text) {
    h.cpu_model = Fact<std::string>::unknown(FactStatus::not_found, "no /proc/cpuinfo", path);
    h.cpu_count = Fact<int>::unknown(FactStatus::not_found, "no /proc/cpuinfo", path);
    return;
  }
  int processors = 0;
  std::string model;
  for (const auto& line : split_lines(*text)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key(trim(std::string_view(line).substr(0, colon)));
    std::string value(trim(std::string_view(line).substr(colon + 1)));
    if (key == "processor") ++processors;
    // x86: "model name"; some Arm kernels: "Model" or "Hardware".
    if (model.empty() && (key == "model name" || key == "Model" || key == "Hardware")) {
      model = value;
    }
  }
  h.cpu_model = model.empty()
                    ? Fact<std::string>::unknown(FactStatus::not_found, "no model name", path)
                    : Fact<std::string>::known(model, path);
  h.cpu_count = processors > 0
                    ? Fact<int>::known(processors, path)
                    : Fact<int>::unknown(FactStatus::not_found, "no processor entries", path);
}

}  // namespace

HostFacts probe_host(const ProbeContext& ctx) {
  HostFacts h;
  const FileSystem& fs = ctx.fs;
  h.os = Fact<std::string>::known(ctx.os == Os::windows ? "windows" : "linux",
                                  ctx.live ? "build target" : "--os");

  for (const char* path : {"/etc/os-release", "/usr/lib/os-release"}) {
    auto text = fs.read_file(path);
    if (!text) continue;
    auto pretty = os_release_value(*text, "PRETTY_NAME");
    if (!pretty) pretty = os_release_value(*text, "NAME");
    if (pretty) {
      h.distro = Fact<std::string>::known(*pretty, path);
      break;
    }
  }
  if (!h.distro) h.distro = Fact<std::string>::unknown(FactStatus::not_found, "no /etc/os-release");

  SystemInfo sys;
  if (ctx.live) sys = current_system();
  if (auto k = fs.read_file("/proc/sys/kernel/osrelease")) {
    h.kernel = Fact<std::string>::known(std::string(trim(*k)), "/proc/sys/kernel/osrelease");
  } else if (ctx.live && !sys.release.empty()) {
    h.kernel = Fact<std::string>::known(sys.release, "uname");
  } else {
    h.kernel = Fact<std::string>::unknown(FactStatus::not_found, "no /proc/sys/kernel/osrelease",
                                          "/proc/sys/kernel/osrelease");
  }
  if (ctx.live && !sys.machine.empty()) {
    h.arch = Fact<std::string>::known(sys.machine, "uname");
  } else {
    h.arch = Fact<std::string>::unknown(FactStatus::skipped, "not read under --root");
  }
  if (auto n = fs.read_file("/etc/hostname"); n && !trim(*n).empty()) {
    h.hostname = Fact<std::string>::known(std::string(trim(*n)), "/etc/hostname");
  } else if (ctx.live && !sys.hostname.empty()) {
    h.hostname = Fact<std::string>::known(sys.hostname, "uname");
  } else {
    h.hostname = Fact<std::string>::unknown(FactStatus::not_found, "no /etc/hostname");
  }

  probe_cpu(ctx, h);

  // Containers.
  std::string kind;
  if (fs.exists("/.dockerenv")) {
    kind = "docker";
    h.container_evidence.push_back("/.dockerenv exists");
  }
  if (fs.exists("/run/.containerenv")) {
    kind = "podman";
    h.container_evidence.push_back("/run/.containerenv exists");
  }
  if (auto cg = fs.read_file("/proc/1/cgroup")) {
    if (contains(*cg, "kubepods")) {
      kind = "kubernetes";
      h.container_evidence.push_back("/proc/1/cgroup mentions kubepods");
    } else if (kind.empty() && contains(*cg, "/docker/")) {
      kind = "docker";
      h.container_evidence.push_back("/proc/1/cgroup mentions docker");
    } else if (kind.empty() && contains(*cg, "libpod")) {
      kind = "podman";
      h.container_evidence.push_back("/proc/1/cgroup mentions libpod");
    }
  }
  if (ctx.env.get("KUBERNETES_SERVICE_HOST")) {
    kind = "kubernetes";
    h.container_evidence.push_back("KUBERNETES_SERVICE_HOST is set");
  }
  if (auto c = ctx.env.get("container"); c && kind.empty()) {
    kind = *c;
    h.container_evidence.push_back("container=" + *c + " in the environment");
  }
  h.container = Fact<std::string>::known(kind.empty() ? "none" : kind,
                                         h.container_evidence.empty()
                                             ? "/.dockerenv, /run/.containerenv, /proc/1/cgroup"
                                             : join(h.container_evidence, "; "));

  // WSL: the kernel release says "microsoft"; WSL2 has /dev/dxg and /usr/lib/wsl/lib.
  bool microsoft = false;
  std::string wsl_source;
  if (auto v = fs.read_file("/proc/version")) {
    microsoft = contains(to_lower(*v), "microsoft");
    wsl_source = "/proc/version";
  }
  if (h.kernel && contains(to_lower(*h.kernel), "microsoft")) {
    microsoft = true;
    wsl_source = h.kernel.source;
  }
  bool dxg = fs.exists("/dev/dxg") || fs.exists("/usr/lib/wsl/lib");
  if (dxg) wsl_source += wsl_source.empty() ? "/dev/dxg or /usr/lib/wsl/lib" : ", /dev/dxg";
  h.wsl2 = Fact<bool>::known(microsoft && (dxg || (h.kernel && contains(*h.kernel, "WSL2"))),
                             wsl_source.empty() ? "/proc/version" : wsl_source);
  return h;
}

EnvFacts probe_env(const ProbeContext& ctx) {
  static const char* const kRelevant[] = {"PATH",
                                          "LD_LIBRARY_PATH",
                                          "LD_PRELOAD",
                                          "CUDA_HOME",
                                          "CUDA_PATH",
                                          "CUDA_ROOT",
                                          "CUDA_BIN_PATH",
                                          "CUDNN_HOME",
                                          "CUDNN_PATH",
                                          "CUDNN_ROOT",
                                          "CUDA_VISIBLE_DEVICES",
                                          "NVIDIA_VISIBLE_DEVICES",
                                          "NVIDIA_DRIVER_CAPABILITIES",
                                          "CUDA_DEVICE_ORDER",
                                          "CUDA_MODULE_LOADING",
                                          "CUDA_LAUNCH_BLOCKING",
                                          "CUDA_CACHE_DISABLE",
                                          "CUDA_CACHE_PATH",
                                          "CUDA_FORCE_PTX_JIT",
                                          "CUDA_DISABLE_PTX_JIT",
                                          "CUDA_INJECTION64_PATH",
                                          "NVTX_INJECTION64_PATH",
                                          "CUDA_MPS_PIPE_DIRECTORY",
                                          "CUDA_MPS_LOG_DIRECTORY",
                                          "CUDA_AUTO_BOOST",
                                          "CUDA_DEVICE_MAX_CONNECTIONS",
                                          "CONDA_PREFIX",
                                          "CONDA_DEFAULT_ENV",
                                          "CONDA_OVERRIDE_CUDA",
                                          "VIRTUAL_ENV",
                                          "PYTHONPATH",
                                          "XLA_FLAGS",
                                          "XLA_PYTHON_CLIENT_PREALLOCATE",
                                          "TF_FORCE_GPU_ALLOW_GROWTH",
                                          "PYTORCH_CUDA_ALLOC_CONF",
                                          "TORCH_CUDA_ARCH_LIST",
                                          "NCCL_DEBUG",
                                          "NCCL_P2P_DISABLE",
                                          "NCCL_IB_DISABLE",
                                          "NCCL_SOCKET_IFNAME"};
  EnvFacts e;
  e.source = ctx.env_source;
  for (const char* name : kRelevant) {
    if (auto v = ctx.env.get(name)) e.vars[name] = *v;
  }
  char sep = ctx.os == Os::windows ? ';' : ':';
  if (auto p = ctx.env.get("PATH")) e.path = split_path_list(*p, sep);
  if (auto p = ctx.env.get("LD_LIBRARY_PATH")) e.ld_library_path = split_path_list(*p, sep);
  return e;
}

}  // namespace dlenv
