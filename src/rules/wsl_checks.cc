// WSL: WSL 1 (no GPU), a Linux driver installed inside WSL 2, the unversioned libcuda.so and
// copies that are not links, GPU access blocked, no Windows GPU driver.
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

}  // namespace

namespace checks {

using namespace rule_helpers;

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

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check wsl1_entry{
    "wsl1", "WSL 1", wsl1, {FindingId::wsl1_has_no_gpu}, fact_area::system};
extern const Check wsl_linux_driver_entry{"wsl_linux_driver",
                                          "a Linux driver installed inside WSL 2",
                                          wsl_linux_driver,
                                          {FindingId::wsl_linux_driver_installed_inside},
                                          fact_area::driver | fact_area::system};
extern const Check wsl_unversioned_entry{
    "wsl_unversioned",
    "WSL's unversioned libcuda.so",
    wsl_unversioned,
    {FindingId::wsl_unversioned_libcuda_not_found},
    fact_area::cudnn | fact_area::env | fact_area::python | fact_area::system};
extern const Check wsl_not_symlink_entry{"wsl_not_symlink",
                                         "WSL's libcuda copies that are not links",
                                         wsl_not_symlink,
                                         {FindingId::wsl_libcuda_not_symlink_warning},
                                         fact_area::system};
extern const Check wsl_blocked_entry{"wsl_blocked",
                                     "GPU access blocked in WSL 2",
                                     wsl_blocked,
                                     {FindingId::wsl_gpu_access_blocked},
                                     fact_area::driver | fact_area::system};
extern const Check wsl_no_windows_driver_entry{"wsl_no_windows_driver",
                                               "WSL 2 without the Windows GPU driver",
                                               wsl_no_windows_driver,
                                               {FindingId::wsl_no_windows_gpu_driver},
                                               fact_area::system};

}  // namespace checks
}  // namespace dlenv
