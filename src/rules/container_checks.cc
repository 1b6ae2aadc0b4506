// Containers: an image whose CUDA needs a newer host driver, a small /dev/shm, the GPU lost after
// a daemon reload, Docker without the NVIDIA runtime, the container toolkit without NVML.
#include <algorithm>

#include "probe/live_isolation.h"
#include "rules/rule_helpers.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using namespace rule_helpers;

std::string mib(uint64_t bytes) {
  return std::to_string(bytes >> 20) + " MiB";
}

// The CUDA version the driver supports: cuDriverGetVersion when live, else the KB.
struct DriverCuda {
  Version cuda;
  std::string source;
  Version driver;
  std::optional<DriverCudaSupport> support;
};

std::optional<DriverCuda> driver_cuda(const Ctx& c) {
  DriverCuda d;
  auto dv = c.f.driver.version();
  if (dv) {
    d.driver = *dv;
    d.support = c.kb.max_cuda_for_driver(*dv, c.os);
  }
  if (c.f.driver.cuda_driver_version) {
    d.cuda = Version::from_cuda_int(*c.f.driver.cuda_driver_version);
    d.source = c.f.driver.cuda_driver_version.source;
    return d;
  }
  if (!d.support) return std::nullopt;
  d.cuda = d.support->max_cuda;
  d.source = "driver " + dv->str() + " (knowledge base: " + d.support->ref.source + ")";
  return d;
}

// One NVIDIA_REQUIRE_* condition: comma-separated constraints, all must hold.
// Conditions (space separated) are alternatives.
struct ConditionResult {
  enum { yes, no, unknown } state = yes;
  std::string text;
  std::optional<Version> cuda_needed;
};

ConditionResult eval_condition(const std::string& cond, const DriverCuda& dc) {
  ConditionResult r;
  r.text = cond;
  for (const auto& raw : split(cond, ',')) {
    std::string t(trim(raw));
    if (t.empty()) continue;
    static const char* const kOps[] = {">=", "<=", "=", ">", "<"};
    std::string key, op, value;
    for (const char* o : kOps) {
      size_t p = t.find(o);
      if (p == std::string::npos || p == 0) continue;
      key = to_lower(trim(std::string_view(t).substr(0, p)));
      op = o;
      value = std::string(trim(std::string_view(t).substr(p + op.size())));
      break;
    }
    if (key == "cuda" || key == "driver") {
      auto want = Version::parse(value);
      if (!want) {
        r.state = ConditionResult::unknown;
        continue;
      }
      Version have = key == "cuda" ? dc.cuda : dc.driver;
      if (key == "driver" && dc.driver.empty()) {
        r.state = ConditionResult::unknown;
        continue;
      }
      if (key == "cuda" && (op == ">=" || op == ">")) r.cuda_needed = *want;
      size_t n = std::max(want->parts().size(), size_t{2});
      Version h = have.truncated(n);
      bool ok = op == ">="   ? !(h < *want)
                : op == "<=" ? !(*want < h)
                : op == ">"  ? *want < h
                : op == "<"  ? h < *want
                             : h == *want;
      if (!ok) r.state = ConditionResult::no;
    } else {
      // brand=, arch=: not known from files; the condition may hold.
      if (r.state == ConditionResult::yes) r.state = ConditionResult::unknown;
    }
  }
  return r;
}

}  // namespace

namespace checks {

using namespace rule_helpers;

void image_needs_newer_driver(const Ctx& c, Findings& out) {
  const auto& ct = c.f.system.container;
  if (!ct.nvidia_require_cuda && !ct.cuda_version) return;
  auto dc = driver_cuda(c);
  if (!dc) return;
  Finding x = make_finding(FindingId::container_image_needs_newer_driver, Severity::error, "");
  if (ct.nvidia_require_cuda) {
    std::vector<ConditionResult> results;
    for (const auto& cond : split(*ct.nvidia_require_cuda, ' ')) {
      if (!trim(cond).empty()) results.push_back(eval_condition(cond, *dc));
    }
    if (results.empty()) return;
    bool any_yes = false, any_unknown = false;
    std::optional<Version> need;
    for (const auto& r : results) {
      any_yes |= r.state == ConditionResult::yes;
      any_unknown |= r.state == ConditionResult::unknown;
      if (r.cuda_needed && (!need || *need < *r.cuda_needed)) need = r.cuda_needed;
    }
    if (any_yes || !need) return;
    x.title = "The image requires CUDA " + need->str() + " but the host driver supports CUDA " +
              dc->cuda.str();
    x.evidence.push_back(ev("NVIDIA_REQUIRE_CUDA=\"" + *ct.nvidia_require_cuda + "\"",
                            ct.nvidia_require_cuda.source));
    if (any_unknown) {
      x.severity = Severity::warning;
      x.evidence.push_back(
          ev("only a brand/arch-specific alternative (forward compatibility on data-center GPUs) "
             "could allow it; dlenv cannot check the GPU brand from files",
             "NVIDIA_REQUIRE_CUDA"));
    }
    if (ct.disable_require) {
      x.severity = Severity::warning;
      x.evidence.push_back(
          ev("NVIDIA_DISABLE_REQUIRE is set: the check is skipped at start, the "
             "CUDA programs still need the newer driver",
             c.f.env.source));
    }
  } else {
    auto v = Version::parse(*ct.cuda_version);
    if (!v || !in_container(c.f)) return;
    Version need = v->truncated(2);
    if (!(dc->cuda < need)) return;
    bool minor_ok =
        dc->support &&
        std::find(dc->support->minor_compat_majors.begin(), dc->support->minor_compat_majors.end(),
                  need.major()) != dc->support->minor_compat_majors.end();
    x.severity = minor_ok ? Severity::warning : Severity::error;
    x.title = "The image is built for CUDA " + need.str() + " but the host driver supports CUDA " +
              dc->cuda.str();
    x.evidence.push_back(ev("CUDA_VERSION=" + *ct.cuda_version, ct.cuda_version.source));
    if (minor_ok) {
      x.evidence.push_back(ev("minor-version compatibility runs CUDA " +
                                  std::to_string(need.major()) +
                                  ".x code on this driver (PTX "
                                  "JIT of newer PTX excepted)",
                              "knowledge base"));
    }
  }
  x.evidence.push_back(ev("host driver " +
                              (dc->driver.empty() ? std::string("?") : dc->driver.str()) +
                              " supports CUDA " + dc->cuda.str(),
                          dc->source));
  x.confirmed = !dc->support || dc->support->ref.confirmed;
  if (!x.confirmed && x.severity == Severity::error) x.severity = Severity::warning;
  x.fix.push_back(step("upgrade the host's NVIDIA driver (the container uses the host's)"));
  x.fix.push_back(step("or use an image built for CUDA " + dc->cuda.str() +
                       " or older (tags such as nvidia/cuda:" + dc->cuda.str() +
                       ".0-runtime-ubuntu22.04)"));
  out.push_back(std::move(x));
}

void shm_small(const Ctx& c, Findings& out) {
  const auto& ct = c.f.system.container;
  if (!in_container(c.f) || !ct.shm_bytes) return;
  uint64_t b = *ct.shm_bytes;
  if (b >= (1ull << 30)) return;
  bool torch = false;
  for (const auto& e : c.f.python) {
    for (const auto& fw : e.frameworks) torch |= fw.name == "torch";
  }
  Finding x =
      make_finding(FindingId::container_shm_too_small, torch ? Severity::warning : Severity::info,
                   "/dev/shm in this container is only " + mib(b) +
                       ": DataLoader workers die with \"Bus error\"");
  x.evidence.push_back(ev("/dev/shm size " + mib(b), ct.shm_bytes.source));
  x.evidence.push_back(
      ev("inside a " + *c.f.host.container + " container", c.f.host.container.source));
  if (torch) x.evidence.push_back(ev("PyTorch is installed", "python"));
  x.fix.push_back(step("start the container with a larger /dev/shm (or share the host's IPC)",
                       "docker run --shm-size=8g ...   # or: --ipc=host"));
  x.fix.push_back(
      step("Kubernetes: mount an emptyDir with medium: Memory at /dev/shm; or use fewer DataLoader "
           "workers (num_workers)"));
  out.push_back(std::move(x));
}

void loses_gpu(const Ctx& c, Findings& out) {
  const auto& d = c.f.driver;
  const auto& ct = c.f.system.container;
  const auto& dk = c.f.system.docker;
  bool nodes = false;
  for (const auto& n : d.device_nodes) {
    if (n.present && (n.path == "/dev/nvidiactl" || starts_with(n.path, "/dev/nvidia0"))) {
      nodes = true;
    }
  }
  if (in_container(c.f)) {
    bool unknown_err = d.nvml_error.ok() && contains(to_lower(*d.nvml_error), "unknown error");
    bool denied = ct.devices_allow_nvidia.ok() && !*ct.devices_allow_nvidia;
    if (!nodes || (!unknown_err && !denied)) return;
    Finding x =
        make_finding(FindingId::container_loses_gpu_after_daemon_reload, Severity::error,
                     "The container's device cgroup no longer lets it open the GPU (typical "
                     "after `systemctl daemon-reload` on the host)");
    if (unknown_err) x.evidence.push_back(ev("NVML: " + *d.nvml_error, d.nvml_error.source));
    if (denied) {
      x.evidence.push_back(ev("the device cgroup has no rule for the NVIDIA major (c 195:*)",
                              ct.devices_allow_nvidia.source));
    }
    x.evidence.push_back(ev("/dev/nvidiactl and /dev/nvidia0 exist in the container", "/dev"));
    x.fix.push_back(step("recreate the container (a restart of the process is not enough)",
                         "docker rm -f <container> && docker run --gpus all ..."));
    x.fix.push_back(
        step("on the host, create the /dev/char links runc needs, now and at every boot (NVIDIA's "
             "workaround)",
             "sudo nvidia-ctk system create-dev-char-symlinks --create-all"));
    out.push_back(std::move(x));
    return;
  }
  // Host side: the condition that makes running containers lose their GPUs.
  if (!dk.docker || dk.toolkit_files.empty() || dk.dev_char_missing.empty()) return;
  if (!dk.cgroup_driver || *dk.cgroup_driver != "systemd") return;
  Finding x =
      make_finding(FindingId::container_loses_gpu_after_daemon_reload, Severity::warning,
                   "GPU containers will lose the GPU at the next `systemctl daemon-reload`: "
                   "/dev/char links for the NVIDIA devices are missing");
  x.evidence.push_back(
      ev("no /dev/char/195:N link for " + join(dk.dev_char_missing, ", "), "/dev/char"));
  x.evidence.push_back(ev("Docker cgroup driver: systemd", dk.cgroup_driver.source));
  x.evidence.push_back(ev("NVIDIA Container Toolkit: " + join(dk.toolkit_files, ", "), "/usr/bin"));
  x.fix.push_back(
      step("create the links now", "sudo nvidia-ctk system create-dev-char-symlinks --create-all"));
  x.fix.push_back(
      step("and at every boot: a udev rule running that command (NVIDIA's notice), or a newer "
           "driver/toolkit that creates them"));
  out.push_back(std::move(x));
}

void docker_no_gpu_runtime(const Ctx& c, Findings& out) {
  const auto& dk = c.f.system.docker;
  if (in_container(c.f) || !dk.docker || !nvidia_gpu_or_driver(c.f)) return;
  bool ctk = false;
  for (const auto& p : dk.toolkit_files) ctk |= ends_with(p, "/nvidia-ctk");
  bool runtime_configured =
      dk.daemon_runtimes.ok() && std::find(dk.daemon_runtimes->begin(), dk.daemon_runtimes->end(),
                                           "nvidia") != dk.daemon_runtimes->end();
  Finding x = make_finding(FindingId::docker_no_gpu_runtime, Severity::warning, "");
  x.evidence.push_back(ev("Docker: " + dk.docker_path, dk.docker_path));
  if (!dk.runtime_hook && !ctk) {
    x.title =
        "Docker is installed but the NVIDIA Container Toolkit is not: `docker run --gpus` "
        "fails";
    x.evidence.push_back(
        ev("no nvidia-container-runtime-hook or nvidia-ctk in /usr/bin, "
           "/usr/local/bin, /usr/sbin",
           "/usr/bin"));
    x.fix.push_back(step("install the NVIDIA Container Toolkit (after adding NVIDIA's repository)",
                         "sudo apt install nvidia-container-toolkit"));
    x.fix.push_back(step("register it with Docker and restart the daemon",
                         "sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl "
                         "restart docker"));
  } else if (!runtime_configured && dk.cdi_specs.empty()) {
    x.severity = Severity::info;
    x.title =
        "The NVIDIA runtime is not registered in /etc/docker/daemon.json (`--gpus` works, "
        "`--runtime=nvidia` does not)";
    x.evidence.push_back(ev("toolkit: " + join(dk.toolkit_files, ", "), "/usr/bin"));
    x.evidence.push_back(
        ev(dk.daemon_runtimes.ok()
               ? "runtimes: " + (dk.daemon_runtimes->empty() ? std::string("none")
                                                             : join(*dk.daemon_runtimes, ", "))
               : dk.daemon_runtimes.reason,
           "/etc/docker/daemon.json"));
    x.fix.push_back(step("register it and restart Docker",
                         "sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl "
                         "restart docker"));
  } else {
    return;
  }
  if (dk.docker_snap) {
    x.evidence.push_back(ev("Docker is the snap package", "/snap/bin/docker"));
    x.fix.push_back(
        step("the snap's Docker does not use the system toolkit: prefer Docker from its apt "
             "repository"));
  }
  out.push_back(std::move(x));
}

void toolkit_cannot_find_nvml(const Ctx& c, Findings& out) {
  const auto& dk = c.f.system.docker;
  if (in_container(c.f)) return;
  bool cli = false;
  for (const auto& p : dk.toolkit_files) cli |= ends_with(p, "/nvidia-container-cli");
  if (!cli) return;
  const auto& d = c.f.driver;
  Finding x = make_finding(FindingId::container_toolkit_cannot_find_nvml, Severity::error, "");
  x.evidence.push_back(ev("nvidia-container-cli is installed", "/usr/bin/nvidia-container-cli"));
  if (d.libnvml_files.empty()) {
    x.title =
        "The NVIDIA Container Toolkit is installed but the host has no driver "
        "(libnvidia-ml.so.1) to give containers";
    x.evidence.push_back(ev("no libnvidia-ml.so* found", "ld.so.cache, library directories"));
    x.fix.push_back(
        step("install the NVIDIA driver on the host (the toolkit injects it into "
             "containers), then reboot"));
  } else if (dk.nvml_in_ld_cache.status == FactStatus::not_found &&
             dk.nvml_in_ld_cache.reason == "no libnvidia-ml.so.1 entry") {
    x.title =
        "libnvidia-ml.so.1 is not in the loader cache, where nvidia-container-cli looks "
        "for the driver";
    x.evidence.push_back(ev("/etc/ld.so.cache has no libnvidia-ml.so.1", "/etc/ld.so.cache"));
    x.evidence.push_back(
        ev("but " + d.libnvml_files.front().path + " exists", d.libnvml_files.front().found_via));
    x.fix.push_back(step("add its directory to /etc/ld.so.conf.d and rebuild the cache",
                         "echo " + path_dirname(d.libnvml_files.front().path) +
                             " | sudo tee /etc/ld.so.conf.d/nvidia.conf && sudo ldconfig"));
  } else {
    return;
  }
  out.push_back(std::move(x));
}

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check image_needs_newer_driver_entry{
    "image_needs_newer_driver",
    "a container image's CUDA against the host driver",
    image_needs_newer_driver,
    {FindingId::container_image_needs_newer_driver},
    fact_area::driver | fact_area::env | fact_area::system};
extern const Check shm_small_entry{"shm_small",
                                   "a container's /dev/shm",
                                   shm_small,
                                   {FindingId::container_shm_too_small},
                                   fact_area::host | fact_area::python | fact_area::system};
extern const Check loses_gpu_entry{"loses_gpu",
                                   "containers losing the GPU after a daemon reload",
                                   loses_gpu,
                                   {FindingId::container_loses_gpu_after_daemon_reload},
                                   fact_area::driver | fact_area::host | fact_area::system};
extern const Check docker_no_gpu_runtime_entry{"docker_no_gpu_runtime",
                                               "Docker without the NVIDIA runtime",
                                               docker_no_gpu_runtime,
                                               {FindingId::docker_no_gpu_runtime},
                                               fact_area::system};
extern const Check toolkit_cannot_find_nvml_entry{"toolkit_cannot_find_nvml",
                                                  "the container toolkit without NVML",
                                                  toolkit_cannot_find_nvml,
                                                  {FindingId::container_toolkit_cannot_find_nvml},
                                                  fact_area::driver | fact_area::system};

}  // namespace checks
}  // namespace dlenv
