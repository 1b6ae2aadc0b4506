// Driver checks: is there an NVIDIA driver and GPU, is the kernel module NVIDIA's and
// loaded, do its user-space libraries match it, can this user open the device nodes, which
// GPUs CUDA_VISIBLE_DEVICES and the compute mode leave to CUDA, and whether the link-time
// libcuda stub is on the search path (where the loader model has not decided it).
#include <algorithm>
#include <cstdio>
#include <set>

#include "rules/checks.h"
#include "rules/loader_coverage.h"
#include "rules/rule_helpers.h"
#include "rules/windows_common.h"
#include "util/strings.h"

namespace dlenv {
namespace {

bool driver_kernel_loaded(const Facts& f) {
  return f.driver.kernel_module_version.ok();
}

}  // namespace

namespace checks {

using namespace rule_helpers;
using windows_common::ps;
using windows_common::win_ev;

void no_driver(const Ctx& c, Findings& out) {
  if (c.os == Os::windows) return;  // windows_no_driver (rules/windows_*_checks.cc)
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
  const bool userspace = !d.libnvml_files.empty() || !d.libcuda_files.empty();
  Finding x = userspace
                  ? make_finding(FindingId::driver_module_not_built_for_kernel, Severity::error,
                                 "An NVIDIA GPU is present but the nvidia kernel module is "
                                 "not loaded")
                  : make_finding(FindingId::no_nvidia_driver, Severity::error,
                                 "An NVIDIA GPU is present but no NVIDIA driver is installed");
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
    const bool container = c.f.host.container && *c.f.host.container != "none";
    Finding x =
        container
            ? make_finding(FindingId::container_started_without_gpus, Severity::error,
                           "The container was started without the GPU device nodes")
            : make_finding(FindingId::dev_nvidia_permissions, Severity::error,
                           "The nvidia module is loaded but /dev/nvidiactl and /dev/nvidia0 are "
                           "missing");
    x.evidence.push_back(ev("no /dev/nvidiactl or /dev/nvidiaN", "/dev"));
    if (container) {
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

void windows_no_driver(const RuleContext& c, std::vector<Finding>& out) {
  if (c.os != Os::windows || !c.f.windows || c.f.driver.windows_dll_version.ok()) return;
  const WindowsFacts& w = *c.f.windows;
  if (!w.nvcuda.empty() || !w.nvml.empty()) return;  // present but unreadable: not "none"
  Finding x =
      make_finding(FindingId::no_nvidia_driver, Severity::info,
                   w.registry_gpus.empty() ? "No NVIDIA driver (no nvcuda.dll in System32)"
                                           : "An NVIDIA GPU is present but no NVIDIA driver is "
                                             "installed (no nvcuda.dll)");
  if (!w.registry_gpus.empty()) x.severity = Severity::error;
  x.evidence.push_back(
      win_ev(c.f.driver.windows_dll_version.reason, c.f.driver.windows_dll_version.source));
  for (const auto& g : w.registry_gpus)
    x.evidence.push_back(win_ev("display adapter " + g, "registry"));
  x.fix.push_back(
      ps(w.registry_gpus.empty()
             ? "nothing to fix if this machine is meant to run on the CPU; GPU work needs an "
               "NVIDIA GPU and its driver (then run `dlenv doctor` again)"
             : "install the NVIDIA driver for the GPU (nvidia.com/drivers or the GeForce/RTX "
               "Experience app), then run `dlenv doctor` again"));
  out.push_back(std::move(x));
}

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check no_driver_entry{"no_driver",
                                   "no NVIDIA driver or GPU (Linux)",
                                   no_driver,
                                   {FindingId::no_nvidia_driver},
                                   fact_area::driver | fact_area::host};
extern const Check module_not_loaded_entry{
    "module_not_loaded",
    "a GPU on the bus but no nvidia kernel module",
    module_not_loaded,
    {FindingId::driver_module_not_built_for_kernel, FindingId::no_nvidia_driver},
    fact_area::driver};
extern const Check nouveau_entry{"nouveau",
                                 "nouveau or nova_core owns the GPU",
                                 nouveau,
                                 {FindingId::nouveau_or_nova_owns_gpu},
                                 fact_area::driver};
extern const Check version_mismatch_entry{"version_mismatch",
                                          "kernel module vs user-space driver versions",
                                          version_mismatch,
                                          {FindingId::nvml_driver_library_mismatch},
                                          fact_area::driver};
extern const Check device_nodes_entry{
    "device_nodes",
    "the /dev/nvidia* device nodes",
    device_nodes,
    {FindingId::container_started_without_gpus, FindingId::cuda_unknown_error_uvm,
     FindingId::dev_nvidia_permissions},
    fact_area::driver | fact_area::host};
extern const Check visible_devices_entry{"visible_devices",
                                         "GPUs CUDA_VISIBLE_DEVICES hides",
                                         visible_devices,
                                         {FindingId::cuda_visible_devices_hides_gpu},
                                         fact_area::env | fact_area::gpus};
extern const Check compute_mode_entry{"compute_mode",
                                      "a GPU's compute mode",
                                      compute_mode,
                                      {FindingId::exclusive_compute_mode_busy},
                                      fact_area::gpus};

extern const Check windows_no_driver_entry{"windows_no_driver",
                                           "no NVIDIA driver (no nvcuda.dll)",
                                           windows_no_driver,
                                           {FindingId::no_nvidia_driver},
                                           fact_area::driver | fact_area::windows};

}  // namespace checks
}  // namespace dlenv
