// Rules over the system around the driver (Facts::system, probe/system.cc and
// probe/kernel_log.cc): WSL (catalog section G), containers and the Docker host
// (F), Secure Boot and the kernel log (B), the nvcc host compiler (E4), and cuDNN
// builds that cannot work with this GPU or driver (C6, C8).
#include <algorithm>

#include "probe/live_isolation.h"
#include "rules/rule_helpers.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using namespace rule_helpers;

bool has_python_package(const Facts& f, std::string_view name, std::string_view version_prefix) {
  for (const auto& e : f.python) {
    for (const auto& p : e.packages) {
      if (p.name == name && starts_with(p.version, version_prefix)) return true;
    }
  }
  return false;
}
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

// ---- WSL (section G) ---------------------------------------------------------

// ---- containers (section F) --------------------------------------------------

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

// ---- kernel (section B) ------------------------------------------------------

// ---- host compiler (E4) ------------------------------------------------------

// ---- cuDNN builds vs this GPU and driver (C6, C8) ----------------------------

// The KB rows of a cuDNN release built for `cuda_major`.
std::vector<CudnnBuild> builds_for(const Ctx& c, const CudnnCopy& k) {
  std::vector<CudnnBuild> out;
  const Fact<Version>& v = k.live_version ? k.live_version : k.library_version;
  if (!v || !k.cuda_major) return out;
  for (const auto& b : c.kb.cudnn_builds(*v)) {
    if (b.cuda_min.major() <= *k.cuda_major && *k.cuda_major <= b.cuda_max.major()) {
      out.push_back(b);
    }
  }
  return out;
}

}  // namespace

namespace checks {

using namespace rule_helpers;

// Live probes whose child crashed, hung or answered garbage, and libraries the pre-check
// refused (probe/live_isolation.h): the broken file when one is found, else the crash.
void live_probe_failures(const Ctx& c, Findings& out) {
  for (const auto& x : c.f.live_failures) {
    const std::string text = describe_live_failure(x);
    const std::string source = x.probe == kLdLibraryPathCheck
                                   ? "ELF check of the NVIDIA libraries on LD_LIBRARY_PATH"
                               : x.failure.empty() ? "ELF/PE pre-check before loading"
                                                   : "live " + x.probe + " probe process";
    if (!x.file_problem.empty()) {
      const std::string& file = x.problem_path.empty() ? x.library : x.problem_path;
      Finding f = make_finding(
          FindingId::library_file_corrupt, Severity::error,
          file +
              " is truncated, corrupt or not a library: loading it fails or crashes the process");
      f.evidence.push_back(ev(text, source));
      f.fix.push_back(
          step("reinstall the package (or copy again the file) it came from; see which "
               "package owns it",
               "dpkg -S " + shell_quote(file) + " || rpm -qf " + shell_quote(file)));
      f.fix.push_back(step("compare its size with the original, then replace it",
                           "ls -l " + shell_quote(file)));
      out.push_back(std::move(f));
      continue;
    }
    Finding f = make_finding(FindingId::live_probe_crashed, Severity::warning,
                             "Loading " + x.library + " " + x.failure);
    f.evidence.push_back(ev(text, source));
    f.fix.push_back(step("load it alone to see the failure (dlenv loads it in a child process)",
                         "dlenv load " + shell_quote(x.path.empty() ? x.library : x.path)));
    out.push_back(std::move(f));
  }
}

void wsl1(const Ctx& c, Findings& out) {
  const auto& w = c.f.system.wsl;
  if (w.version != 1) return;
  Finding x = make_finding(FindingId::wsl1_has_no_gpu, Severity::error,
                           "This is WSL1: only WSL2 gives Linux programs the GPU");
  x.evidence.push_back(
      ev("kernel " + w.version_source + " (WSL1 kernels end in -Microsoft)", "/proc/version"));
  x.evidence.push_back(ev("/dev/dxg is absent", "/dev/dxg"));
  x.fix.push_back(step("convert the distribution to WSL2 (in Windows PowerShell), then restart it",
                       "wsl --set-version <distro> 2"));
  out.push_back(std::move(x));
}

void wsl_linux_driver(const Ctx& c, Findings& out) {
  const auto& w = c.f.system.wsl;
  if (w.version != 2) return;
  if (w.linux_driver_files.empty() && w.linux_driver_packages.empty()) return;
  Finding x = make_finding(FindingId::wsl_linux_driver_installed_inside, Severity::error,
                           "A Linux NVIDIA driver is installed inside WSL2 and shadows the Windows "
                           "driver's libraries");
  for (const auto& p : w.linux_driver_files) {
    x.evidence.push_back(ev("Linux driver library " + p, path_dirname(p)));
  }
  if (!w.linux_driver_packages.empty()) {
    x.evidence.push_back(
        ev("packages installed: " + join(w.linux_driver_packages, ", "), w.packages_source));
  }
  for (const auto& lf : c.f.driver.libcuda_files) {
    if (lf.found_via == "ld.so.cache" && !starts_with(lf.path, "/usr/lib/wsl/")) {
      x.evidence.push_back(
          ev("the loader resolves libcuda to " + lf.path + ", not /usr/lib/wsl/lib",
             "/etc/ld.so.cache"));
      break;
    }
  }
  x.evidence.push_back(ev("WSL2: " + w.version_source, "/proc/version"));
  if (!w.linux_driver_packages.empty()) {
    x.fix.push_back(
        step("remove the Linux driver packages (the GPU driver lives on Windows)",
             "sudo apt purge " + join(w.linux_driver_packages, " ") + " && sudo apt autoremove"));
  } else {
    x.fix.push_back(
        step("remove the Linux driver files (installed by NVIDIA's .run installer or a copy): "
             "`sudo nvidia-uninstall` if it exists, else delete them"));
  }
  x.fix.push_back(step("refresh the loader cache so libcuda comes from /usr/lib/wsl/lib",
                       "sudo ldconfig && ldconfig -p | grep libcuda"));
  x.fix.push_back(
      step("install only the toolkit, from NVIDIA's WSL-Ubuntu repository (never `cuda` or "
           "`cuda-drivers`)",
           "sudo apt install cuda-toolkit-12-8   # pick your version"));
  out.push_back(std::move(x));
}

void wsl_unversioned(const Ctx& c, Findings& out) {
  const auto& w = c.f.system.wsl;
  if (w.version != 2 || w.libcuda.empty() || w.unversioned_libcuda) return;
  bool needs = false;
  std::vector<Evidence> why;
  for (const auto& k : c.f.cudnn) {
    if (k.major == 8) {
      needs = true;
      why.push_back(ev("cuDNN 8 at " + k.dir + " dlopens \"libcuda.so\"", k.library));
    }
  }
  for (const char* p : {"nvidia-cudnn-cu11", "nvidia-cudnn-cu12"}) {
    if (has_python_package(c.f, p, "8.")) {
      needs = true;
      why.push_back(ev(std::string(p) + " 8.x (cuDNN 8) is installed", "python packages"));
    }
  }
  if (has_python_package(c.f, "bitsandbytes", "")) {
    needs = true;
    why.push_back(ev("bitsandbytes is installed (it loads \"libcuda.so\")", "python packages"));
  }
  Finding x = make_finding(
      FindingId::wsl_unversioned_libcuda_not_found, needs ? Severity::warning : Severity::info,
      "dlopen(\"libcuda.so\") fails in this WSL2: only libcuda.so.1 is registered");
  x.evidence.push_back(
      ev("no \"libcuda.so\" entry (basis: " + w.unversioned_basis + ")", w.unversioned_basis));
  x.evidence.push_back(ev("/usr/lib/wsl/lib is not on LD_LIBRARY_PATH", c.f.env.source));
  for (auto& e : why) x.evidence.push_back(std::move(e));
  if (!needs) {
    x.evidence.push_back(ev(
        "nothing found here that needs it (cuDNN 8, bitsandbytes); CUDA itself uses libcuda.so.1",
        "cudnn, python"));
  }
  x.fix.push_back(step("put the WSL driver directory on the search path (e.g. in ~/.bashrc)",
                       "export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH"));
  x.fix.push_back(step("or use cuDNN 9 builds, which ask for libcuda.so.1"));
  out.push_back(std::move(x));
}

void wsl_not_symlink(const Ctx& c, Findings& out) {
  const auto& w = c.f.system.wsl;
  if (w.version != 2) return;
  std::vector<const FileKind*> regular;
  for (const auto& k : w.libcuda) {
    if (!k.symlink && path_basename(k.path) == "libcuda.so.1") regular.push_back(&k);
  }
  if (regular.empty()) return;
  Finding x =
      make_finding(FindingId::wsl_libcuda_not_symlink_warning, Severity::info,
                   "ldconfig warns \"/usr/lib/wsl/lib/libcuda.so.1 is not a symbolic link\": "
                   "harmless");
  for (const auto* k : regular) {
    x.evidence.push_back(ev(k->path + " is a regular file (" + std::to_string(k->size) + " bytes)",
                            "/usr/lib/wsl/lib"));
  }
  x.fix.push_back(
      step("nothing to fix: the Windows driver ships copies, not links, on a read-only mount; "
           "the warning on every package install is cosmetic"));
  out.push_back(std::move(x));
}

void wsl_blocked(const Ctx& c, Findings& out) {
  const auto& w = c.f.system.wsl;
  if (w.version != 2) return;
  const auto& d = c.f.driver;
  std::string err;
  std::string src;
  if (d.nvml_error.ok() && contains(to_lower(*d.nvml_error), "blocked by the operating system")) {
    err = *d.nvml_error;
    src = d.nvml_error.source;
  } else if (d.libcuda_error.ok() &&
             contains(to_lower(*d.libcuda_error), "blocked by the operating system")) {
    err = *d.libcuda_error;
    src = d.libcuda_error.source;
  }
  if (err.empty()) return;
  Finding x =
      make_finding(FindingId::wsl_gpu_access_blocked, Severity::error,
                   "Windows blocks this WSL2 from the GPU (\"GPU access blocked by the operating "
                   "system\")");
  x.evidence.push_back(ev(err, src));
  if (!w.linux_driver_packages.empty()) {
    x.evidence.push_back(
        ev("Linux driver packages inside WSL: " + join(w.linux_driver_packages, ", "),
           w.packages_source));
    x.fix.push_back(step("remove the in-distribution driver utilities",
                         "sudo apt purge " + join(w.linux_driver_packages, " ")));
  }
  x.fix.push_back(step(
      "WSL2 needs the GPU in WDDM mode: on Windows check the Driver-Model column of `nvidia-smi` "
      "and switch from TCC where the GPU supports WDDM (admin PowerShell)",
      "nvidia-smi -g 0 -dm 0"));
  x.fix.push_back(
      step("GPUs that only run in TCC mode (some data-center cards) need native Linux"));
  out.push_back(std::move(x));
}

void wsl_no_windows_driver(const Ctx& c, Findings& out) {
  const auto& w = c.f.system.wsl;
  if (w.version != 2 || !w.libcuda.empty() || !w.linux_driver_files.empty()) return;
  Finding x =
      make_finding(FindingId::wsl_no_windows_gpu_driver, Severity::warning,
                   "WSL2 without GPU support: the Windows NVIDIA driver provides no libcuda here");
  x.evidence.push_back(
      ev(w.lib_dir ? "/usr/lib/wsl/lib has no libcuda.so*" : "/usr/lib/wsl/lib does not exist",
         "/usr/lib/wsl/lib"));
  x.evidence.push_back(ev(w.dxg ? "/dev/dxg exists" : "/dev/dxg is absent", "/dev/dxg"));
  x.fix.push_back(step(
      "install (or update) the NVIDIA driver on Windows: its WSL part appears in /usr/lib/wsl/lib; "
      "do not install a Linux driver inside WSL"));
  x.fix.push_back(
      step("after updating the Windows driver, restart WSL (in PowerShell)", "wsl --shutdown"));
  out.push_back(std::move(x));
}

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

void secure_boot(const Ctx& c, Findings& out) {
  const auto& k = c.f.system.kernel;
  const auto& d = c.f.driver;
  if (!k.secure_boot.ok() || !*k.secure_boot) return;
  if (d.kernel_module_version.ok() || d.nvidia_loaded) return;
  if (c.f.system.wsl.version != 0 || in_container(c.f)) return;
  bool gpu = !d.pci_devices.empty();
  if (!gpu && k.nvidia_modules.empty() && k.dkms.empty()) return;
  Finding x = make_finding(FindingId::secure_boot_blocks_unsigned_module, Severity::warning,
                           "Secure Boot is on and the nvidia module is not loaded: an unsigned or "
                           "unenrolled module is refused");
  x.evidence.push_back(ev("Secure Boot enabled", k.secure_boot.source));
  x.evidence.push_back(ev("nvidia module not loaded", d.modules_source));
  bool strong = false;
  for (const auto& [path, state] : k.nvidia_modules) {
    x.evidence.push_back(ev(path + ": " + state, path));
    strong |= state == "unsigned";
  }
  for (const auto& e : k.dkms) x.evidence.push_back(ev(e, "/var/lib/dkms"));
  if (k.mok_key_enrolled.ok() && !*k.mok_key_enrolled) {
    x.evidence.push_back(ev("the DKMS signing key is not enrolled in the firmware (MokListRT)",
                            k.mok_key_enrolled.source));
    strong = true;
  }
  for (const auto& l : k.log_lines) {
    if (contains(l.text, "Key was rejected") || contains(l.text, "Required key not available") ||
        contains(l.text, "unsigned module") || contains(l.text, "verification failed")) {
      x.evidence.push_back(ev(l.text, l.source));
      strong = true;
    }
  }
  if (strong) {
    x.severity = Severity::error;
    x.title = "Secure Boot refuses the nvidia kernel module (not signed with an enrolled key)";
  }
  x.fix.push_back(
      step("enroll the DKMS signing key, then reboot and confirm it in the blue MOK "
           "screen (needs console access)",
           k.mok_key_present ? "sudo mokutil --import /var/lib/shim-signed/mok/MOK.der"
                               "   # or /var/lib/dkms/mok.pub"
                             : "sudo update-secureboot-policy --enroll-key"));
  x.fix.push_back(step("or install the distribution's pre-signed driver modules",
                       "sudo apt install linux-modules-nvidia-580-$(uname -r)   # Ubuntu"));
  x.fix.push_back(step("or disable Secure Boot in the firmware settings"));
  out.push_back(std::move(x));
}

void xid79(const Ctx& c, Findings& out) {
  const auto& k = c.f.system.kernel;
  std::vector<const KernelLogLine*> hits;
  bool this_boot = false;
  for (const auto& l : k.log_lines) {
    bool h = contains(l.text, "fallen off the bus") ||
             (contains(l.text, "NVRM: Xid") && contains(l.text, "): 79,"));
    if (!h) continue;
    hits.push_back(&l);
    this_boot |= l.source == "/dev/kmsg";
  }
  if (hits.empty()) return;
  Finding x = make_finding(FindingId::gpu_fallen_off_bus_xid79,
                           this_boot ? Severity::error : Severity::warning,
                           this_boot ? "A GPU fell off the bus during this boot (Xid 79)"
                                     : "The kernel log records a GPU falling off the bus (Xid 79)");
  size_t from = hits.size() > 3 ? hits.size() - 3 : 0;
  for (size_t i = from; i < hits.size(); ++i)
    x.evidence.push_back(ev(hits[i]->text, hits[i]->source));
  if (hits.size() > 3) {
    x.evidence.push_back(ev(std::to_string(hits.size()) + " such lines in all", "kernel log"));
  }
  if (!this_boot) {
    x.evidence.push_back(
        ev("from a log file: it may be from an earlier boot", hits.back()->source));
  }
  x.fix.push_back(step(
      "this is hardware or platform, not software: check power delivery (PSU, cables), cooling "
      "and seating of the card, update the system BIOS, then reboot"));
  x.fix.push_back(step("collect details for the vendor", "sudo nvidia-bug-report.sh"));
  out.push_back(std::move(x));
}

void host_compiler(const Ctx& c, Findings& out) {
  const auto& h = c.f.system.host_compiler;
  if (!h.gcc_major) return;
  bool any_active = false;
  for (const auto& t : c.f.toolkits) {
    any_active |= t.active_path || t.active_cuda_home || t.is_default_link;
  }
  for (const auto& t : c.f.toolkits) {
    if (any_active && !(t.active_path || t.active_cuda_home || t.is_default_link)) continue;
    auto it = h.toolkit_max_gcc.find(t.root);
    if (it == h.toolkit_max_gcc.end() || !it->second) continue;
    int max = *it->second;
    if (*h.gcc_major <= max) continue;
    std::string ver = t.version ? t.version->str() : "?";
    Finding x = make_finding(FindingId::nvcc_unsupported_host_compiler, Severity::warning,
                             "nvcc of CUDA " + ver + " (" + t.root + ") refuses GCC " +
                                 std::to_string(*h.gcc_major) + ": it accepts GCC " +
                                 std::to_string(max) + " at most");
    x.evidence.push_back(
        ev("host_config.h: GCC versions later than " + std::to_string(max) + " are not supported",
           it->second.source));
    x.evidence.push_back(ev("host compiler " + h.compiler.value.value_or("?") + " is GCC " +
                                std::to_string(*h.gcc_major) + " (" + h.compiler.source + ")",
                            h.gcc_major.source));
    x.fix.push_back(step("install a supported GCC and point nvcc at it",
                         "sudo apt install g++-" + std::to_string(max) +
                             " && export NVCC_CCBIN=g++-" + std::to_string(max) +
                             " CUDAHOSTCXX=g++-" + std::to_string(max)));
    x.fix.push_back(
        step("or install a newer CUDA toolkit that supports GCC " + std::to_string(*h.gcc_major)));
    out.push_back(std::move(x));
  }
}

void cudnn_old_cuda_new_gpu(const Ctx& c, Findings& out) {
  for (const auto& k : c.f.cudnn) {
    auto builds = builds_for(c, k);
    if (builds.empty()) continue;
    // The newest CUDA this copy can have been built with.
    Version cuda_max = builds.front().cuda_max;
    bool confirmed = true;
    for (const auto& b : builds) {
      if (cuda_max < b.cuda_max) cuda_max = b.cuda_max;
      confirmed &= b.ref.confirmed;
    }
    if (cuda_max.minor() >= 90) {
      // "12.x": the newest minor the arch table knows for that major.
      cuda_max = Version{cuda_max.major(), 9};
    }
    auto arch = c.kb.arch_support(cuda_max);
    if (!arch || arch->cuda.major() != cuda_max.major()) continue;
    for (const auto& g : c.f.gpus) {
      if (!g.compute_capability) continue;
      const Version& cc = *g.compute_capability;
      if (!(arch->max_cc < cc)) continue;
      const Fact<Version>& v = k.live_version ? k.live_version : k.library_version;
      Finding x =
          make_finding(FindingId::cudnn_execution_failed_old_cuda_on_new_gpu,
                       confirmed && arch->ref.confirmed ? Severity::error : Severity::warning,
                       "cuDNN " + v->str() + " for CUDA " + std::to_string(*k.cuda_major) + " in " +
                           k.dir + " has no kernels for GPU " + std::to_string(g.index) + " (" +
                           g.name.value.value_or("?") + ", compute capability " + cc.str() + ")");
      x.confirmed = confirmed && arch->ref.confirmed;
      x.evidence.push_back(ev("cuDNN " + v->str() + " built for CUDA " +
                                  std::to_string(*k.cuda_major) + " (newest: CUDA " +
                                  cuda_max.str() + ")",
                              k.cuda_major.source));
      x.evidence.push_back(ev("CUDA " + arch->cuda.str() + " targets compute capability " +
                                  arch->min_cc.str() + "–" + arch->max_cc.str(),
                              "knowledge base: " + arch->ref.source));
      x.evidence.push_back(
          ev("GPU compute capability " + cc.str() + " (" + c.kb.architecture_name(cc) + ")",
             g.compute_capability.source));
      x.fix.push_back(
          step("install a cuDNN (and framework) built for a CUDA that supports this "
               "GPU (see `dlenv plan`); convolutions fail with "
               "CUDNN_STATUS_EXECUTION_FAILED otherwise"));
      out.push_back(std::move(x));
    }
  }
}

void cudnn_not_initialized(const Ctx& c, Findings& out) {
  auto dv = c.f.driver.version();
  if (!dv || c.os != Os::linux) return;
  for (const auto& k : c.f.cudnn) {
    auto builds = builds_for(c, k);
    if (builds.empty()) continue;
    // The lowest driver floor among the builds for that CUDA major.
    std::optional<Version> floor;
    bool confirmed = true;
    for (const auto& b : builds) {
      if (!b.driver_linux_min) {
        floor.reset();
        break;
      }
      if (!floor || *b.driver_linux_min < *floor) floor = *b.driver_linux_min;
      confirmed &= b.ref.confirmed;
    }
    if (!floor || !(*dv < *floor)) continue;
    const Fact<Version>& v = k.live_version ? k.live_version : k.library_version;
    Finding x = make_finding(
        FindingId::cudnn_status_not_initialized, confirmed ? Severity::error : Severity::warning,
        "cuDNN " + v->str() + " in " + k.dir + " needs driver " + floor->str() +
            " or newer: cudnnCreate fails (CUDNN_STATUS_NOT_INITIALIZED)");
    x.confirmed = confirmed;
    x.evidence.push_back(ev("cuDNN " + v->str() + " built for CUDA " +
                                std::to_string(*k.cuda_major) + " needs driver >= " + floor->str(),
                            "knowledge base: " + builds.front().ref.source));
    x.evidence.push_back(ev("driver " + dv->str(), "driver"));
    x.fix.push_back(step("upgrade the driver to " + floor->str() +
                         " or newer, or use a cuDNN built for an older CUDA"));
    out.push_back(std::move(x));
  }
}

// This file's entries of the check table (rules/check_table.cc).
const Check live_probe_failures_entry{
    "live_probe_failures",
    "live probes that failed in their child",
    live_probe_failures,
    {FindingId::library_file_corrupt, FindingId::live_probe_crashed},
    fact_area::live_failures};
const Check wsl1_entry{"wsl1", "WSL 1", wsl1, {FindingId::wsl1_has_no_gpu}, fact_area::system};
const Check wsl_linux_driver_entry{"wsl_linux_driver",
                                   "a Linux driver installed inside WSL 2",
                                   wsl_linux_driver,
                                   {FindingId::wsl_linux_driver_installed_inside},
                                   fact_area::driver | fact_area::system};
const Check wsl_unversioned_entry{
    "wsl_unversioned",
    "WSL's unversioned libcuda.so",
    wsl_unversioned,
    {FindingId::wsl_unversioned_libcuda_not_found},
    fact_area::cudnn | fact_area::env | fact_area::python | fact_area::system};
const Check wsl_not_symlink_entry{"wsl_not_symlink",
                                  "WSL's libcuda copies that are not links",
                                  wsl_not_symlink,
                                  {FindingId::wsl_libcuda_not_symlink_warning},
                                  fact_area::system};
const Check wsl_blocked_entry{"wsl_blocked",
                              "GPU access blocked in WSL 2",
                              wsl_blocked,
                              {FindingId::wsl_gpu_access_blocked},
                              fact_area::driver | fact_area::system};
const Check wsl_no_windows_driver_entry{"wsl_no_windows_driver",
                                        "WSL 2 without the Windows GPU driver",
                                        wsl_no_windows_driver,
                                        {FindingId::wsl_no_windows_gpu_driver},
                                        fact_area::system};
const Check image_needs_newer_driver_entry{"image_needs_newer_driver",
                                           "a container image's CUDA against the host driver",
                                           image_needs_newer_driver,
                                           {FindingId::container_image_needs_newer_driver},
                                           fact_area::driver | fact_area::env | fact_area::system};
const Check shm_small_entry{"shm_small",
                            "a container's /dev/shm",
                            shm_small,
                            {FindingId::container_shm_too_small},
                            fact_area::host | fact_area::python | fact_area::system};
const Check loses_gpu_entry{"loses_gpu",
                            "containers losing the GPU after a daemon reload",
                            loses_gpu,
                            {FindingId::container_loses_gpu_after_daemon_reload},
                            fact_area::driver | fact_area::host | fact_area::system};
const Check docker_no_gpu_runtime_entry{"docker_no_gpu_runtime",
                                        "Docker without the NVIDIA runtime",
                                        docker_no_gpu_runtime,
                                        {FindingId::docker_no_gpu_runtime},
                                        fact_area::system};
const Check toolkit_cannot_find_nvml_entry{"toolkit_cannot_find_nvml",
                                           "the container toolkit without NVML",
                                           toolkit_cannot_find_nvml,
                                           {FindingId::container_toolkit_cannot_find_nvml},
                                           fact_area::driver | fact_area::system};
const Check secure_boot_entry{"secure_boot",
                              "Secure Boot against an unsigned module",
                              secure_boot,
                              {FindingId::secure_boot_blocks_unsigned_module},
                              fact_area::driver | fact_area::system};
const Check xid79_entry{"xid79",
                        "Xid 79 (GPU fallen off the bus)",
                        xid79,
                        {FindingId::gpu_fallen_off_bus_xid79},
                        fact_area::system};
const Check host_compiler_entry{"host_compiler",
                                "the host compiler against nvcc",
                                host_compiler,
                                {FindingId::nvcc_unsupported_host_compiler},
                                fact_area::system | fact_area::toolkits};
const Check cudnn_old_cuda_new_gpu_entry{"cudnn_old_cuda_new_gpu",
                                         "a cuDNN build for an older CUDA on a new GPU",
                                         cudnn_old_cuda_new_gpu,
                                         {FindingId::cudnn_execution_failed_old_cuda_on_new_gpu},
                                         fact_area::cudnn | fact_area::gpus};
const Check cudnn_not_initialized_entry{"cudnn_not_initialized",
                                        "CUDNN_STATUS_NOT_INITIALIZED causes",
                                        cudnn_not_initialized,
                                        {FindingId::cudnn_status_not_initialized},
                                        fact_area::cudnn | fact_area::driver};

}  // namespace checks
}  // namespace dlenv
