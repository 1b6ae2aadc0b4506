#include "rules/rules.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "rules/rule_helpers.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using namespace rule_helpers;

std::string vstr(const Fact<Version>& v) {
  return v ? v->str() : "unknown";
}

bool driver_kernel_loaded(const Facts& f) {
  return f.driver.kernel_module_version.ok();
}

// ---- host / driver ---------------------------------------------------------

void no_driver(const Ctx& c, Findings& out) {
  if (c.os == Os::windows) return windows_no_driver(c, out);  // rules/windows_rules.cc
  const auto& d = c.f.driver;
  if (driver_kernel_loaded(c.f) || d.nvml_driver_version.ok()) return;
  if (c.f.host.wsl2 && *c.f.host.wsl2.value) return;  // WSL has no kernel module: see wsl rules
  bool gpu_on_bus = !d.pci_devices.empty();
  if (gpu_on_bus) return;  // driver-module-not-built-for-kernel / nouveau explain it
  Finding x = make_finding(FindingId::no_nvidia_driver, Severity::info,
                           "No NVIDIA driver and no NVIDIA GPU on this machine");
  x.evidence.push_back(ev(d.kernel_module_version.reason, "/proc/driver/nvidia/version"));
  if (d.pci_scanned) {
    x.evidence.push_back(ev("no NVIDIA display controller on the PCI bus", "/sys/bus/pci/devices"));
  }
  if (!d.nvml_library.ok() && d.nvml_library.status != FactStatus::skipped) {
    x.evidence.push_back(ev("NVML not loadable: " + d.nvml_library.reason, "libnvidia-ml.so.1"));
  }
  if (c.f.host.container && *c.f.host.container != "none") {
    x.severity = Severity::warning;
    x.title = "Inside a " + *c.f.host.container + " container with no NVIDIA GPU or driver visible";
    x.fix.push_back(step("start the container with GPU access (NVIDIA Container Toolkit)",
                         "docker run --gpus all ..."));
  } else {
    x.fix.push_back(step(
        "nothing to fix if this machine is meant to run on the CPU; GPU work needs an NVIDIA GPU "
        "and its driver (then run `dlenv doctor` again)"));
  }
  out.push_back(std::move(x));
}

void module_not_loaded(const Ctx& c, Findings& out) {
  const auto& d = c.f.driver;
  if (driver_kernel_loaded(c.f) || d.pci_devices.empty()) return;
  if (d.nouveau_loaded || d.nova_loaded) return;  // nouveau rule explains it
  bool userspace = !d.libnvml_files.empty() || !d.libcuda_files.empty();
  Finding x = make_finding(FindingId::driver_module_not_built_for_kernel, Severity::error,
                           "An NVIDIA GPU is present but the nvidia kernel module is not loaded");
  for (size_t i = 0; i < d.pci_devices.size(); ++i) {
    std::string drv =
        i < d.pci_drivers.size() && !d.pci_drivers[i].empty() ? d.pci_drivers[i] : "none";
    x.evidence.push_back(ev("NVIDIA GPU " + d.pci_devices[i] + ", kernel driver in use: " + drv,
                            "/sys/bus/pci/devices/" + d.pci_devices[i]));
  }
  x.evidence.push_back(ev("no /proc/driver/nvidia/version", "/proc/driver/nvidia/version"));
  if (userspace) {
    std::string v = !d.libnvml_files.empty() ? d.libnvml_files[0].path : d.libcuda_files[0].path;
    x.evidence.push_back(ev("user-space driver libraries are installed (" + v + ")", "loader"));
    x.fix.push_back(step("check whether a module exists for the running kernel",
                         "modinfo nvidia && uname -r && dkms status"));
    x.fix.push_back(step("rebuild it (kernel headers + DKMS), then load it",
                         "sudo apt install linux-headers-$(uname -r) dkms && sudo dkms autoinstall "
                         "&& sudo modprobe nvidia"));
    x.fix.push_back(
        step("with Secure Boot on, an unsigned module is refused: check", "mokutil --sb-state"));
  } else {
    x.id = finding_name(FindingId::no_nvidia_driver);
    x.title = "An NVIDIA GPU is present but no NVIDIA driver is installed";
    x.fix.push_back(step("install the driver from your distribution (Ubuntu shown)",
                         "sudo ubuntu-drivers install   # or: sudo apt install nvidia-driver-580"));
  }
  out.push_back(std::move(x));
}

void nouveau(const Ctx& c, Findings& out) {
  const auto& d = c.f.driver;
  if (!d.nouveau_loaded && !d.nova_loaded) return;
  std::string which = d.nouveau_loaded ? "nouveau" : "nova_core";
  bool owns = !driver_kernel_loaded(c.f);
  for (const auto& drv : d.pci_drivers) owns |= drv == "nouveau" || drv == "nova_core";
  Finding x =
      make_finding(FindingId::nouveau_or_nova_owns_gpu, owns ? Severity::error : Severity::warning,
                   owns ? "The open-source " + which + " driver owns the GPU, not NVIDIA's"
                        : "The " + which + " module is loaded next to NVIDIA's driver");
  x.evidence.push_back(ev(which + " is loaded", d.modules_source));
  for (size_t i = 0; i < d.pci_devices.size(); ++i) {
    if (i < d.pci_drivers.size() && !d.pci_drivers[i].empty()) {
      x.evidence.push_back(ev(d.pci_devices[i] + " is bound to " + d.pci_drivers[i],
                              "/sys/bus/pci/devices/" + d.pci_devices[i] + "/driver"));
    }
  }
  x.fix.push_back(
      step("blacklist it",
           "printf 'blacklist nouveau\\noptions nouveau modeset=0\\nblacklist nova_core\\n' | "
           "sudo tee /etc/modprobe.d/blacklist-nouveau.conf"));
  x.fix.push_back(step("rebuild the initramfs and reboot",
                       "sudo update-initramfs -u && sudo reboot   # dracut -f on Fedora/RHEL"));
  out.push_back(std::move(x));
}

void version_mismatch(const Ctx& c, Findings& out) {
  const auto& d = c.f.driver;
  Finding x = make_finding(
      FindingId::nvml_driver_library_mismatch, Severity::error,
      "The driver's kernel module and its user-space libraries have different versions");
  bool hit = false;
  if (d.nvml_error.ok() && (contains(to_lower(*d.nvml_error), "mismatch"))) {
    x.evidence.push_back(ev("NVML: " + *d.nvml_error, d.nvml_error.source));
    hit = true;
  }
  if (d.kernel_module_version.ok()) {
    auto kv = Version::parse(*d.kernel_module_version);
    auto check = [&](const std::vector<LibraryFile>& files, const char* what) {
      for (const auto& lf : files) {
        if (lf.is_stub || lf.version.empty() || lf.version == "1") continue;
        // Only copies the loader can pick: a forward-compat package or a stray file in
        // a directory nothing searches is not what programs load.
        if (lf.found_via != "ld.so.cache" && lf.found_via != "LD_LIBRARY_PATH") continue;
        auto lv = Version::parse(lf.version);
        if (!lv || lv->parts().size() < 2 || !kv) continue;
        if (!(*lv == *kv)) {
          x.evidence.push_back(ev(std::string(what) + " " + lf.path + " is " + lf.version +
                                      ", kernel module is " + *d.kernel_module_version,
                                  lf.found_via));
          hit = true;
        }
      }
    };
    check(d.libnvml_files, "libnvidia-ml");
    check(d.libcuda_files, "libcuda");
    if (d.nvml_driver_version.ok() && kv) {
      auto nv = Version::parse(*d.nvml_driver_version);
      if (nv && !(*nv == *kv)) {
        x.evidence.push_back(ev("NVML reports " + *d.nvml_driver_version + ", kernel module is " +
                                    *d.kernel_module_version,
                                d.nvml_driver_version.source));
        hit = true;
      }
    }
  }
  if (!hit) return;
  x.evidence.push_back(ev("kernel module " + d.kernel_module_version.value.value_or("unknown"),
                          "/proc/driver/nvidia/version"));
  x.fix.push_back(
      step("reboot so the new kernel module is loaded (usual cause: a driver upgrade "
           "while the old module stays resident)",
           "sudo reboot"));
  x.fix.push_back(
      step("or, with no GPU process running, reload the modules",
           "sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia"));
  x.fix.push_back(
      step("if it persists, reinstall one consistent driver and pin it against "
           "unattended upgrades",
           "sudo apt-mark hold 'nvidia-driver-*' 'libnvidia-*'"));
  out.push_back(std::move(x));
}

// live_only: the loader model already decided what dlopen("libcuda.so.1") takes; only a
// live load that reports the stub still counts.
void stub_loaded(const Ctx& c, Findings& out, bool live_only = false) {
  const auto& d = c.f.driver;
  Finding x = make_finding(FindingId::libcuda_stub_loaded, Severity::error,
                           "The link-time stub libcuda.so is on the run-time search path");
  bool loaded_stub = false;
  if (d.libcuda_library.ok() && contains(*d.libcuda_library, "/stubs/")) loaded_stub = true;
  if (d.libcuda_error.ok() && contains(to_lower(*d.libcuda_error), "stub")) loaded_stub = true;
  if (loaded_stub) {
    x.evidence.push_back(ev("libcuda loaded from " + d.libcuda_library.value.value_or("?") +
                                (d.libcuda_error.ok() ? " (" + *d.libcuda_error + ")" : ""),
                            "dlopen libcuda.so.1"));
  }
  for (const auto& lf : d.libcuda_files) {
    if (lf.is_stub && lf.found_via != "directory scan") {
      x.evidence.push_back(ev("stub " + lf.path + " found via " + lf.found_via, lf.found_via));
    }
  }
  for (const auto& dir : d.ld_conf_stub_dirs) {
    x.evidence.push_back(ev("ld.so.conf lists " + dir, "/etc/ld.so.conf"));
  }
  if (x.evidence.empty() || (live_only && !loaded_stub)) return;
  if (!loaded_stub) {
    x.severity = Severity::warning;
    x.title = "A stub libcuda.so is on the loader's search path and can shadow the real driver";
  }
  x.fix.push_back(
      step("remove the .../stubs directory from LD_LIBRARY_PATH and /etc/ld.so.conf.d, "
           "then refresh the cache",
           "sudo ldconfig"));
  x.fix.push_back(step("make sure the driver's real libcuda.so.1 is installed",
                       "ls -l /usr/lib/x86_64-linux-gnu/libcuda.so.1"));
  out.push_back(std::move(x));
}

void device_nodes(const Ctx& c, Findings& out) {
  const auto& d = c.f.driver;
  if (!driver_kernel_loaded(c.f) && !d.nvml_driver_version.ok()) return;
  Finding perm = make_finding(FindingId::dev_nvidia_permissions, Severity::error,
                              "This user cannot open the NVIDIA device nodes");
  Finding uvm =
      make_finding(FindingId::cuda_unknown_error_uvm, Severity::warning,
                   "/dev/nvidia-uvm is missing: CUDA will fail with 'unknown error' (999)");
  bool any_present = false;
  for (const auto& n : d.device_nodes) {
    if (n.path == "/dev/nvidia-modeset" || n.path == "/dev/nvidia-uvm-tools") continue;
    if (!n.present) {
      if (n.path == "/dev/nvidia-uvm") {
        uvm.evidence.push_back(ev("/dev/nvidia-uvm does not exist", "/dev"));
        uvm.evidence.push_back(ev(std::string("nvidia_uvm module ") +
                                      (d.nvidia_uvm_loaded ? "is loaded" : "is not loaded"),
                                  d.modules_source));
      }
      continue;
    }
    any_present = true;
    if (!c.f.rooted && (!n.readable || !n.writable)) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", n.mode & 07777);
      perm.evidence.push_back(ev(n.path + " mode " + mode + " group " + std::to_string(n.gid) +
                                     " is not read/write for this user",
                                 n.source));
    }
  }
  if (!perm.evidence.empty()) {
    perm.fix.push_back(
        step("add yourself to the group that owns the nodes, then log in again",
             "sudo usermod -aG video $USER   # use the group shown by: ls -l /dev/nvidia*"));
    perm.fix.push_back(
        step("or relax NVreg_DeviceFileMode / NVreg_DeviceFileGID in /etc/modprobe.d"));
    out.push_back(std::move(perm));
  }
  if (!uvm.evidence.empty() && any_present) {
    uvm.fix.push_back(step("load the module and create its nodes",
                           "sudo modprobe nvidia_uvm && sudo nvidia-modprobe -u -c=0"));
    uvm.fix.push_back(step("after suspend/resume, reload it",
                           "sudo modprobe -r nvidia_uvm && sudo modprobe nvidia_uvm"));
    out.push_back(std::move(uvm));
  }
  if (!any_present && driver_kernel_loaded(c.f)) {
    Finding x =
        make_finding(FindingId::dev_nvidia_permissions, Severity::error,
                     "The nvidia module is loaded but /dev/nvidiactl and /dev/nvidia0 are missing");
    x.evidence.push_back(ev("no /dev/nvidiactl or /dev/nvidiaN", "/dev"));
    if (c.f.host.container && *c.f.host.container != "none") {
      x.id = finding_name(FindingId::container_started_without_gpus);
      x.title = "The container was started without the GPU device nodes";
      x.fix.push_back(step("start it with GPU access", "docker run --gpus all ..."));
    } else {
      x.fix.push_back(step("create the device nodes", "sudo nvidia-modprobe -c=0 -u"));
    }
    out.push_back(std::move(x));
  }
}

void visible_devices(const Ctx& c, Findings& out) {
  auto it = c.f.env.vars.find("CUDA_VISIBLE_DEVICES");
  if (it == c.f.env.vars.end()) return;
  const std::string& v = it->second;
  size_t visible = 0;
  for (const auto& g : c.f.gpus) visible += g.visible ? 1 : 0;
  bool none = trim(v).empty() || trim(v) == "-1" || (!c.f.gpus.empty() && visible == 0);
  Finding x = make_finding(FindingId::cuda_visible_devices_hides_gpu, Severity::info, "");
  x.evidence.push_back(ev("CUDA_VISIBLE_DEVICES=\"" + v + "\"", c.f.env.source));
  if (none) {
    x.severity = Severity::error;
    x.title = "CUDA_VISIBLE_DEVICES hides every GPU: CUDA programs will see no device";
  } else if (!c.f.gpus.empty() && visible < c.f.gpus.size()) {
    x.title = "CUDA_VISIBLE_DEVICES hides " + std::to_string(c.f.gpus.size() - visible) + " of " +
              std::to_string(c.f.gpus.size()) + " GPUs";
  } else {
    return;
  }
  for (const auto& g : c.f.gpus) {
    if (!g.visible) {
      x.evidence.push_back(ev("GPU " + std::to_string(g.index) + " (" + g.name.value.value_or("?") +
                                  ") hidden: " + g.visibility_reason,
                              g.source));
    }
  }
  x.fix.push_back(
      step("unset it (or list valid indices/UUIDs) before the program starts; "
           "changing it after CUDA initialises has no effect",
           "unset CUDA_VISIBLE_DEVICES"));
  out.push_back(std::move(x));
}

void compute_mode(const Ctx& c, Findings& out) {
  for (const auto& g : c.f.gpus) {
    if (!g.compute_mode || *g.compute_mode == "default") continue;
    Finding x = make_finding(
        FindingId::exclusive_compute_mode_busy,
        *g.compute_mode == "prohibited" ? Severity::error : Severity::info,
        "GPU " + std::to_string(g.index) + " is in compute mode '" + *g.compute_mode + "'");
    x.evidence.push_back(ev("compute mode " + *g.compute_mode, g.compute_mode.source));
    x.fix.push_back(step("in exclusive mode only one process may use the GPU; to share it",
                         "sudo nvidia-smi -i " + std::to_string(g.index) + " -c DEFAULT"));
    out.push_back(std::move(x));
  }
}

// ---- toolkits --------------------------------------------------------------

std::optional<Version> driver_version(const Facts& f) {
  return f.driver.version();
}

void toolkit_vs_driver(const Ctx& c, Findings& out) {
  auto dv = driver_version(c.f);
  if (!dv) return;
  auto support = c.kb.max_cuda_for_driver(*dv, c.os);
  if (!support) return;
  Version driver_cuda = support->max_cuda;
  if (c.f.driver.cuda_driver_version) {
    driver_cuda = Version::from_cuda_int(*c.f.driver.cuda_driver_version);
  }
  for (const auto& t : c.f.toolkits) {
    if (!t.version) continue;
    Version tv = t.version->truncated(2);
    if (!(driver_cuda < tv)) continue;
    bool minor_ok =
        std::find(support->minor_compat_majors.begin(), support->minor_compat_majors.end(),
                  tv.major()) != support->minor_compat_majors.end();
    Finding x = make_finding(
        FindingId::cuda_driver_insufficient, minor_ok ? Severity::warning : Severity::error,
        minor_ok
            ? "CUDA " + tv.str() + " at " + t.root + " is newer than driver " + dv->str() +
                  " (CUDA " + driver_cuda.str() + "): runs only through minor-version compatibility"
            : "CUDA " + tv.str() + " at " + t.root + " needs a newer driver than " + dv->str() +
                  " (which supports up to CUDA " + driver_cuda.str() + ")");
    x.confirmed = support->ref.confirmed;
    if (!x.confirmed && x.severity == Severity::error) x.severity = Severity::warning;
    x.evidence.push_back(
        ev("toolkit " + t.root + " is CUDA " + t.version->str(), t.version.source));
    x.evidence.push_back(ev("driver " + dv->str() + " supports CUDA " + driver_cuda.str(),
                            c.f.driver.cuda_driver_version
                                ? c.f.driver.cuda_driver_version.source
                                : "knowledge base: " + support->ref.source));
    if (auto need = c.kb.min_driver_for_cuda(tv, c.os, false)) {
      x.fix.push_back(step("install driver " + need->str() + " or newer for CUDA " + tv.str()));
    }
    if (minor_ok) {
      x.fix.push_back(
          step("minor-version compatibility runs CUDA " + std::to_string(tv.major()) +
               ".x code on this driver, but PTX JIT of newer PTX fails "
               "(CUDA_ERROR_UNSUPPORTED_PTX_VERSION); upgrading the driver removes the limit"));
    } else {
      x.fix.push_back(step("or use a toolkit / framework build for CUDA " + driver_cuda.str() +
                           " or older (see `dlenv plan`)"));
    }
    out.push_back(std::move(x));
  }
}

void toolkits_disagree(const Ctx& c, Findings& out) {
  if (c.f.toolkits.size() < 2 || c.os == Os::windows) return;  // Windows: win-cuda-path-confusion
  const ToolkitFacts* by_path = nullptr;
  const ToolkitFacts* by_home = nullptr;
  const ToolkitFacts* by_ld = nullptr;
  const ToolkitFacts* by_link = nullptr;
  for (const auto& t : c.f.toolkits) {
    if (t.active_path && !by_path) by_path = &t;
    if (t.active_cuda_home && !by_home) by_home = &t;
    if (t.active_ld_library_path && !by_ld) by_ld = &t;
    if (t.is_default_link && !by_link) by_link = &t;
  }
  std::vector<std::pair<std::string, const ToolkitFacts*>> picks;
  if (by_path) picks.push_back({"PATH (nvcc)", by_path});
  if (by_home) picks.push_back({"CUDA_HOME/CUDA_PATH", by_home});
  if (by_ld) picks.push_back({"LD_LIBRARY_PATH", by_ld});
  std::set<std::string> roots;
  for (auto& p : picks) roots.insert(p.second->real_root);
  if (roots.size() < 2) return;
  Finding x = make_finding(FindingId::cuda_toolkits_disagree, Severity::warning,
                           "PATH, CUDA_HOME and LD_LIBRARY_PATH select different CUDA toolkits");
  for (auto& [what, t] : picks) {
    x.evidence.push_back(
        ev(what + " selects " + t->root + " (CUDA " + vstr(t->version) + ")", c.f.env.source));
  }
  if (by_link) {
    x.evidence.push_back(ev("/usr/local/cuda points to " + by_link->root, "/usr/local/cuda"));
  }
  const ToolkitFacts* target = by_path ? by_path : picks.front().second;
  std::string lib = target->lib_dirs.empty() ? target->root + "/lib64" : target->lib_dirs.front();
  x.fix.push_back(
      step("make one toolkit active everywhere (nvcc, headers and the runtime must match)",
           "export CUDA_HOME=" + target->root + " PATH=" + target->root +
               "/bin:$PATH LD_LIBRARY_PATH=" + lib + ":$LD_LIBRARY_PATH"));
  out.push_back(std::move(x));
}

void nvcc_vs_smi(const Ctx& c, Findings& out) {
  if (c.f.toolkits.empty()) return;
  const ToolkitFacts* t = &c.f.toolkits.front();
  for (const auto& k : c.f.toolkits) {
    if (k.active_path) t = &k;
  }
  if (!t->version) return;
  std::optional<Version> driver_cuda;
  std::string src;
  if (c.f.driver.cuda_driver_version) {
    driver_cuda = Version::from_cuda_int(*c.f.driver.cuda_driver_version);
    src = c.f.driver.cuda_driver_version.source;
  } else if (auto dv = driver_version(c.f)) {
    // Without libcuda (e.g. under --root): what the driver version supports, per the KB.
    if (auto support = c.kb.max_cuda_for_driver(*dv, c.os)) {
      driver_cuda = support->max_cuda;
      src = "knowledge base: driver " + dv->str() + " (" + support->ref.source + ")";
    }
  }
  if (!driver_cuda) return;
  if (t->version->truncated(2) == *driver_cuda) return;
  Finding x = make_finding(FindingId::nvcc_vs_nvidia_smi_version_confusion, Severity::info,
                           "nvcc says CUDA " + t->version->truncated(2).str() +
                               ", nvidia-smi says CUDA " + driver_cuda->str() + ": both are right");
  x.evidence.push_back(
      ev("toolkit (nvcc) " + t->root + ": CUDA " + t->version->str(), t->version.source));
  x.evidence.push_back(
      ev("driver API version (nvidia-smi's \"CUDA Version\"): " + driver_cuda->str(), src));
  x.fix.push_back(
      step("nvidia-smi shows the newest CUDA the driver supports; nvcc shows the "
           "installed toolkit. A framework wheel brings its own CUDA runtime and needs "
           "neither to match, only a new enough driver"));
  out.push_back(std::move(x));
}

void gpu_vs_toolkits(const Ctx& c, Findings& out) {
  if (c.f.toolkits.empty()) return;
  for (const auto& g : c.f.gpus) {
    if (!g.compute_capability) continue;
    const Version& cc = *g.compute_capability;
    std::vector<std::string> why;
    bool any = false, all_confirmed = true, known_any = false;
    for (const auto& t : c.f.toolkits) {
      if (!t.version) continue;
      auto a = c.kb.arch_support(t.version->truncated(2));
      if (!a) continue;
      known_any = true;
      all_confirmed &= a->ref.confirmed;
      if (!(cc < a->min_cc) && !(a->max_cc < cc)) {
        any = true;
        break;
      }
      why.push_back("CUDA " + t.version->truncated(2).str() + " (" + t.root + ") builds for " +
                    a->min_cc.str() + "–" + a->max_cc.str());
    }
    if (any || !known_any) continue;
    bool too_new = true;
    for (const auto& t : c.f.toolkits) {
      if (!t.version) continue;
      if (auto a = c.kb.arch_support(t.version->truncated(2)); a && cc < a->min_cc) too_new = false;
    }
    Finding x = make_finding(
        FindingId::nvcc_unsupported_gpu_arch, all_confirmed ? Severity::warning : Severity::info,
        "No installed CUDA toolkit can compile for GPU " + std::to_string(g.index) + " (" +
            g.name.value.value_or("?") + ", compute capability " + cc.str() + ")");
    x.confirmed = all_confirmed;
    x.evidence.push_back(
        ev("GPU compute capability " + cc.str() + " (" + c.kb.architecture_name(cc) + ")",
           g.compute_capability.source));
    for (auto& w : why) x.evidence.push_back(ev(w, "knowledge base"));
    x.fix.push_back(step(too_new
                             ? "install a newer CUDA toolkit that supports this architecture "
                               "(see `dlenv plan`)"
                             : "this GPU is older than every installed toolkit supports: install "
                               "an older toolkit that still targets it"));
    out.push_back(std::move(x));
  }
}

void cuda_home_unset(const Ctx& c, Findings& out) {
  if (c.f.toolkits.empty() || c.os == Os::windows) return;  // Windows: win-cuda-path-confusion
  bool nvcc_on_path = false;
  for (const auto& t : c.f.toolkits) nvcc_on_path |= t.active_path;
  bool home = c.f.env.vars.count("CUDA_HOME") || c.f.env.vars.count("CUDA_PATH");
  if (nvcc_on_path || home) return;
  const ToolkitFacts* t = &c.f.toolkits.front();
  for (const auto& k : c.f.toolkits) {
    if (k.is_default_link) t = &k;
  }
  if (!t->nvcc) return;
  Finding x =
      make_finding(FindingId::cuda_home_not_set, Severity::info,
                   "A CUDA toolkit is installed but neither nvcc is on PATH nor CUDA_HOME is set");
  x.evidence.push_back(ev("toolkit " + t->root + " (CUDA " + vstr(t->version) + ")", t->root));
  x.fix.push_back(step("builds of CUDA extensions (pip install of packages with CUDA code) need it",
                       "export CUDA_HOME=" + t->root + " PATH=" + t->root + "/bin:$PATH"));
  out.push_back(std::move(x));
}

// ---- cuDNN -----------------------------------------------------------------

void cudnn_header_mismatch(const Ctx& c, Findings& out) {
  for (const auto& k : c.f.cudnn) {
    const Fact<Version>& lib = k.live_version ? k.live_version : k.library_version;
    if (!lib || !k.header_version) continue;
    if (*lib == *k.header_version) continue;
    // A live answer from a load that mixed this wheel folder with another release: the
    // loader model's pip-cudnn-vs-system-cudnn-symbols names the cause (one finding per cause).
    if (k.live_version && c.os == Os::linux && loader_explains_cudnn_mix(c.f, k.dir)) continue;
    Finding x = make_finding(FindingId::cudnn_header_library_mismatch, Severity::warning,
                             "cuDNN header " + k.header_version->str() +
                                 " does not match library " + lib->str() + " in " + k.dir);
    x.evidence.push_back(
        ev("header " + k.header_path + ": " + k.header_version->str(), k.header_version.source));
    x.evidence.push_back(ev("library: " + lib->str(), lib.source));
    x.fix.push_back(
        step("install the header and the libraries from one cuDNN release; code "
             "compiled against the header may call functions the library lacks"));
    out.push_back(std::move(x));
  }
}

void cudnn_vs_toolkit(const Ctx& c, Findings& out) {
  for (const auto& k : c.f.cudnn) {
    if (k.toolkit_root.empty() || !k.cuda_major) continue;
    const ToolkitFacts* t = nullptr;
    for (const auto& tk : c.f.toolkits) {
      if (tk.root == k.toolkit_root) t = &tk;
    }
    if (!t || !t->version || t->version->major() == *k.cuda_major) continue;
    Finding x =
        make_finding(FindingId::cudnn_toolkit_cuda_major_mismatch, Severity::error,
                     "cuDNN in " + k.dir + " was built for CUDA " + std::to_string(*k.cuda_major) +
                         " but sits in the CUDA " + t->version->str() + " toolkit");
    x.evidence.push_back(
        ev("cuDNN built for CUDA " + std::to_string(*k.cuda_major), k.cuda_major.source));
    x.evidence.push_back(
        ev("toolkit " + t->root + " is CUDA " + t->version->str(), t->version.source));
    x.fix.push_back(step("install the cuDNN archive built for CUDA " +
                         std::to_string(t->version->major()) + " (file name ..._cuda" +
                         std::to_string(t->version->major()) +
                         "-archive) into this toolkit, or move this copy to a CUDA " +
                         std::to_string(*k.cuda_major) + " toolkit"));
    out.push_back(std::move(x));
  }
}

void cudnn_incomplete(const Ctx& c, Findings& out) {
  if (c.os == Os::windows) return;  // rules/windows_rules.cc reports Windows copies
  loader_cudnn_incomplete(c, out);  // rules/loader_rules.cc: decided by the loader model
}

void cudnn_mixed(const Ctx& c, Findings& out) {
  for (const auto& k : c.f.cudnn) {
    if (k.mixed_versions.empty()) continue;
    Finding x = make_finding(FindingId::cudnn_mixed_versions, Severity::error,
                             "cuDNN libraries of different versions are mixed in " + k.dir);
    x.evidence.push_back(ev("main library " + vstr(k.library_version), k.library_version.source));
    for (const auto& [file, v] : k.mixed_versions) {
      x.evidence.push_back(ev(file + " is " + v, path_join(k.dir, file)));
    }
    x.fix.push_back(step("remove the old files and install every libcudnn*.so* from one release",
                         "ls -l " + k.dir + "/libcudnn*"));
    out.push_back(std::move(x));
  }
}

void toolkit_change_interrupted(const Ctx& c, Findings& out) {
  for (const auto& i : c.f.interrupted_changes) {
    Finding x = make_finding(FindingId::toolkit_change_interrupted, Severity::error,
                             "dlenv's change to " + i.toolkit + " was interrupted (" +
                                 i.description + "): the toolkit may hold part of it");
    x.evidence.push_back(ev("the journal of the change is still there", i.journal));
    x.fix.push_back(
        step("finish or roll back the change exactly, as its journal says", i.recover_command));
    out.push_back(std::move(x));
  }
}

void cudnn_without_header_version(const Ctx& c, Findings& out) {
  (void)c;
  (void)out;
}

// ---- table -----------------------------------------------------------------

const std::vector<Rule>& rules() {
  static const std::vector<Rule> table = [] {
    std::vector<Rule> t = {
        {FindingId::no_nvidia_driver, no_driver},
        {FindingId::driver_module_not_built_for_kernel, module_not_loaded},
        {FindingId::nouveau_or_nova_owns_gpu, nouveau},
        {FindingId::nvml_driver_library_mismatch, version_mismatch},
        {FindingId::libcuda_stub_loaded,
         [](const Ctx& c, Findings& out) {
           const size_t before = out.size();
           const bool decided = loader_libcuda_stub(c, out);  // rules/loader_framework_rules.cc
           if (out.size() == before) stub_loaded(c, out, decided);
           loader_preload_stub(c, out);  // LD_PRELOAD / ld.so.preload (rules/loader_rules.cc)
         }},
        {FindingId::dev_nvidia_permissions, device_nodes},
        {FindingId::cuda_unknown_error_uvm, nullptr},
        {FindingId::container_started_without_gpus, nullptr},
        {FindingId::cuda_visible_devices_hides_gpu, visible_devices},
        {FindingId::exclusive_compute_mode_busy, compute_mode},
        {FindingId::cuda_driver_insufficient, toolkit_vs_driver},
        {FindingId::cuda_toolkits_disagree, toolkits_disagree},
        {FindingId::nvcc_vs_nvidia_smi_version_confusion, nvcc_vs_smi},
        {FindingId::nvcc_unsupported_gpu_arch, gpu_vs_toolkits},
        {FindingId::cuda_home_not_set, cuda_home_unset},
        {FindingId::toolkit_change_interrupted, toolkit_change_interrupted},
        {FindingId::cudnn_header_library_mismatch, cudnn_header_mismatch},
        {FindingId::cudnn_toolkit_cuda_major_mismatch, cudnn_vs_toolkit},
        {FindingId::cudnn_sublibrary_missing, cudnn_incomplete},
        {FindingId::cudnn_mixed_versions, cudnn_mixed},
    };
    for (const auto& r : python_rules()) t.push_back(r);
    for (const auto& r : verify_rules()) t.push_back(r);
    for (const auto& r : system_rules()) t.push_back(r);
    for (const auto& r : windows_rules()) t.push_back(r);
    for (const auto& r : loader_rules()) t.push_back(r);
    for (const auto& r : catalog_rules()) t.push_back(r);
    return t;
  }();
  (void)cudnn_without_header_version;
  return table;
}

}  // namespace

const std::vector<RuleInfo>& rule_table() {
  static const std::vector<RuleInfo> infos = [] {
    std::vector<RuleInfo> v;
    for (const auto& r : rules()) {
      const FindingMeta& m = finding_meta(r.id);
      v.push_back(RuleInfo{m.id, m.layer, m.severity});
    }
    return v;
  }();
  return infos;
}

const RuleInfo* find_rule(std::string_view id) {
  for (const auto& r : rule_table()) {
    if (id == r.id) return &r;
  }
  return nullptr;
}

std::vector<std::string> finding_ids(const Kb& kb) {
  std::vector<std::string> ids;
  for (const auto& r : rule_table()) ids.emplace_back(r.id);
  for (const auto& f : kb.findings()) {
    if (!find_rule(f.id)) ids.push_back(f.id);
  }
  return ids;
}

std::vector<Finding> run_rules(const Facts& facts, const Kb& kb, Os os) {
  Ctx c{facts, kb, os};
  Findings out;
  for (const auto& r : rules()) {
    if (r.check) r.check(c, out);
  }
  std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    return a.id < b.id;
  });
  return out;
}

std::optional<std::string> explain_text(std::string_view id, const Kb& kb) {
  const FindingInfo* cat = kb.finding(id);
  if (!cat) return std::nullopt;
  const RuleInfo* rule = find_rule(id);
  std::string s;
  std::string sid(id);
  s += sid + " — " + cat->title + "\n";
  if (!cat->section.empty()) s += "section: " + cat->section + "\n";
  if (!cat->platforms.empty()) s += "platforms: " + cat->platforms + "\n";
  if (sid.starts_with("verify-")) {
    s += "reported by: dlenv verify (from results of real GPU work)\n";
  } else {
    s += std::string("checked by dlenv doctor: ") + (rule ? "yes" : "not yet") + "\n";
  }
  if (!cat->error_text.empty()) {
    s += "\nError text seen:\n";
    for (const auto& e : cat->error_text) {
      for (const auto& line : split_lines(e)) s += "    " + line + "\n";
    }
  }
  s += "\nCause:\n  " + cat->cause + "\n";
  if (!cat->signals.empty()) {
    s += "\nSignals:\n";
    for (const auto& x : cat->signals) s += "  - " + x + "\n";
  }
  s += "\nFix:\n";
  for (const auto& x : cat->fix) s += "  - " + x + "\n";
  if (!cat->sources.empty()) {
    s += "\nSources:\n";
    for (const auto& x : cat->sources) s += "  " + x + "\n";
  }
  return s;
}

std::string findings_markdown(const Kb& kb) {
  std::string s =
      "# Findings\n\n"
      "Generated by `dlenv explain --all --markdown` from the rule table (src/rules/rules.cc) and "
      "the failure catalog (kb/findings.json). Do not edit by hand; `ctest -R findings_doc` fails "
      "when this file is stale.\n\n"
      "## Checked by `dlenv doctor`\n\n| id | layer | highest severity | summary "
      "|\n|---|---|---|---|\n";
  for (const auto& r : rule_table()) {
    const FindingInfo* cat = kb.finding(r.id);
    s += "| `" + std::string(r.id) + "` | " + std::string(r.layer) + " | " +
         severity_name(r.severity) + " | " + (cat ? cat->title : std::string()) + " |\n";
  }
  s += "\n## Catalog entries not yet checked automatically\n\n"
       "`dlenv explain ID` prints each of them in full.\n\n| id | section | summary "
       "|\n|---|---|---|\n";
  for (const auto& f : kb.findings()) {
    if (find_rule(f.id)) continue;
    s += "| `" + f.id + "` | " + f.section + " | " + f.title + " |\n";
  }
  s += "\n## Details\n\n";
  for (const auto& id : finding_ids(kb)) {
    auto text = explain_text(id, kb);
    if (!text) continue;
    s += "### `" + id + "`\n\n```\n" + *text + "```\n\n";
  }
  return s;
}

}  // namespace dlenv
