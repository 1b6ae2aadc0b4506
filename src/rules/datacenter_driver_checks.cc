// Data-centre driver companions: NVSwitch systems without a running Fabric Manager of the
// driver's version (CUDA error 802), and a cuda-compat libcuda picked on a GPU without
// forward-compatibility support (error 804).
#include <algorithm>
#include <map>
#include <set>

#include "kb/error_signature.h"
#include "rules/checks.h"
#include "rules/loader_coverage.h"
#include "rules/python_common.h"
#include "rules/rule_helpers.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using namespace rule_helpers;
namespace py = pyrules;

bool in_compat_dir(std::string_view path) {
  for (const std::string& part : split(path, '/')) {
    if (part == "compat") return true;
  }
  return false;
}

}  // namespace

namespace checks {

using namespace rule_helpers;
namespace py = pyrules;

void fabric_manager(const Ctx& c, Findings& out) {
  if (c.os != Os::linux) return;
  const auto& fm = c.f.system.fabric;
  if (fm.nvswitch_evidence.empty()) return;
  auto driver = c.f.driver.version();
  const std::string driver_str = driver ? driver->str() : std::string("unknown");
  const std::string branch = driver ? std::to_string(driver->major()) : std::string("<branch>");
  const std::string package = fm.package.empty() || starts_with(fm.package, "cuda-drivers-")
                                  ? "nvidia-fabricmanager-" + branch
                                  : fm.package;

  auto switch_evidence = [&](Finding& x) {
    constexpr size_t kShown = 3;
    for (size_t i = 0; i < fm.nvswitch_evidence.size() && i < kShown; ++i) {
      x.evidence.push_back(ev("NVSwitch: " + fm.nvswitch_evidence[i], fm.nvswitch_evidence[i]));
    }
    if (fm.nvswitch_evidence.size() > kShown) {
      x.evidence.push_back(ev("... and " + std::to_string(fm.nvswitch_evidence.size() - kShown) +
                                  " more NVSwitch entries",
                              "/proc/driver/nvidia-nvswitch/devices, /dev"));
    }
  };

  // In a container Fabric Manager runs on the host: what this side sees proves nothing.
  if (in_container(c.f)) {
    Finding x = make_finding(FindingId::fabric_manager_missing_802, Severity::info,
                             "NVSwitches are visible in this " + *c.f.host.container +
                                 " container: NVIDIA Fabric Manager must run on the host");
    switch_evidence(x);
    x.evidence.push_back(ev("running inside a container", c.f.host.container.source));
    x.fix.push_back(
        step("if CUDA fails with error 802 (system not yet initialized), check the "
             "service on the host",
             "systemctl status nvidia-fabricmanager; nvidia-smi -q | grep -A3 Fabric"));
    out.push_back(std::move(x));
    return;
  }

  bool installed = !fm.binary.empty() || !fm.units.empty() || !fm.package.empty();
  std::optional<Version> fm_version;
  if (fm.version) fm_version = Version::parse(*fm.version);
  bool not_running = installed && fm.running.ok() && !*fm.running;
  bool mismatch = fm_version && driver && !(*fm_version == *driver);
  if (installed && !not_running && !mismatch) return;

  std::string title;
  if (!installed) {
    title =
        "NVSwitch system without NVIDIA Fabric Manager: CUDA fails with error 802 (system "
        "not yet initialized)";
  } else if (mismatch) {
    title = "NVIDIA Fabric Manager " + fm_version->str() + " does not match driver " + driver_str +
            ": the NVSwitch fabric is not initialised (CUDA error 802)";
  } else {
    title =
        "NVIDIA Fabric Manager is installed but not running: CUDA fails with error 802 "
        "(system not yet initialized)";
  }
  Finding x = make_finding(FindingId::fabric_manager_missing_802, Severity::error, title);
  switch_evidence(x);
  if (driver)
    x.evidence.push_back(ev("driver " + driver_str, c.f.driver.kernel_module_version.source));
  if (!installed) {
    x.evidence.push_back(
        ev("no nv-fabricmanager binary, no nvidia-fabricmanager.service unit, "
           "no fabric manager package",
           "/usr/bin, /lib/systemd/system, /etc/systemd/system, /var/lib/dpkg/status"));
  } else {
    if (!fm.binary.empty()) x.evidence.push_back(ev("installed: " + fm.binary, fm.binary));
    for (const auto& u : fm.units) x.evidence.push_back(ev("unit file " + u, u));
    if (fm.enabled.ok()) {
      x.evidence.push_back(
          ev(*fm.enabled ? "enabled at boot" : "not enabled at boot", fm.enabled.source));
    }
    if (fm.running.ok()) {
      x.evidence.push_back(
          ev(*fm.running ? "nv-fabricmanager is running" : "no nv-fabricmanager process",
             fm.running.source));
    }
    if (fm.version) x.evidence.push_back(ev("Fabric Manager " + *fm.version, fm.version.source));
  }

  if (!installed || mismatch) {
    std::string pin = driver ? "='" + driver_str + "-*'" : std::string();
    x.fix.push_back(step("install the Fabric Manager of the driver's exact version (" + driver_str +
                             "; RHEL: the nvidia-fabric-manager package of the same driver stream)",
                         "sudo apt-get install -y " + package + pin));
  }
  x.fix.push_back(
      step("enable and start the service (it must be running before any CUDA "
           "program initialises)",
           "sudo systemctl enable --now nvidia-fabricmanager"));
  x.fix.push_back(step("check: the fabric state should read Completed / Success",
                       "systemctl status nvidia-fabricmanager && nvidia-smi -q | grep -A3 Fabric"));
  out.push_back(std::move(x));
}

void forward_compat(const Ctx& c, Findings& out) {
  if (c.os != Os::linux) return;
  const auto& fc = c.f.system.forward_compat;
  const auto& loaded = c.f.driver.libcuda_library;
  // The copy really loaded (live) decides when there is one; else the loader model's choice.
  if (loaded.ok() && !in_compat_dir(*loaded)) return;
  if (!fc.libcuda.ok() || !fc.compat || fc.version.empty()) return;
  auto compat_v = Version::parse(fc.version);
  auto kernel_v = c.f.driver.kernel_module_version.ok()
                      ? Version::parse(*c.f.driver.kernel_module_version)
                      : std::nullopt;
  // Forward compatibility means a user-space driver newer than the kernel module.
  if (!compat_v || !kernel_v || !(*kernel_v < *compat_v)) return;

  // The GPUs that do not support it: GeForce/TITAN never; workstation RTX only when
  // NGC-ready (not in the KB: a warning); data-center parts and Jetson do.
  Severity sev = Severity::info;
  std::vector<Evidence> why;
  for (const auto& g : c.f.gpus) {
    if (!g.name) continue;
    const std::string& name = *g.name;
    auto info = c.kb.gpu_by_name(name);
    std::string lower = to_lower(name);
    bool consumer = contains(lower, "geforce") || contains(lower, "titan");
    if (!consumer && info && (info->segment == "data_center" || info->segment == "jetson")) {
      continue;
    }
    Severity s = consumer ? Severity::error : Severity::warning;
    sev = std::max(sev, s);
    std::string family = consumer ? "a GeForce/TITAN (consumer) GPU"
                         : info   ? "a workstation GPU (only select NGC-ready RTX cards support it)"
                                  : "a GPU the knowledge base does not place in a supported family";
    why.push_back(ev(name + ": " + family, info ? info->ref.source : g.name.source));
  }
  if (why.empty()) return;
  Finding x = make_finding(FindingId::forward_compat_unsupported_804, sev,
                           "The loader picks the cuda-compat libcuda " + fc.version +
                               " (newer than the " + "kernel driver " + kernel_v->str() +
                               ") on a GPU without forward-compatibility support: CUDA fails with "
                               "error 804");
  x.evidence.push_back(ev("libcuda.so.1 -> " + *fc.libcuda + " (" + fc.rule + ")",
                          loaded.ok() ? loaded.source : fc.libcuda.source));
  x.evidence.push_back(
      ev("kernel module " + kernel_v->str(), c.f.driver.kernel_module_version.source));
  for (auto& e : why) x.evidence.push_back(std::move(e));

  std::string dir = path_dirname(*fc.libcuda);
  if (contains(fc.rule, "LD_LIBRARY_PATH")) {
    x.fix.push_back(
        step("take the compat directory off LD_LIBRARY_PATH (and out of the shell "
             "profile or container image that sets it)",
             "export LD_LIBRARY_PATH=$(echo \"$LD_LIBRARY_PATH\" | tr ':' '\\n' | "
             "grep -v '/compat' | paste -sd:)"));
  } else {
    x.fix.push_back(step("remove the compat directory from the loader configuration",
                         "grep -rl '" + dir +
                             "' /etc/ld.so.conf /etc/ld.so.conf.d/ "
                             "# delete that line, then: sudo ldconfig"));
  }
  x.fix.push_back(step("or remove the cuda-compat package (it is meant for data-center GPUs)",
                       "sudo apt-get remove 'cuda-compat-*'"));
  x.fix.push_back(step("for a newer CUDA, upgrade the real driver to branch " +
                       std::to_string(compat_v->major()) +
                       " or newer instead, and reboot after the update"));
  out.push_back(std::move(x));
}

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check fabric_manager_entry{"fabric_manager",
                                        "NVIDIA Fabric Manager on NVSwitch systems (802)",
                                        fabric_manager,
                                        {FindingId::fabric_manager_missing_802},
                                        fact_area::driver | fact_area::host | fact_area::system};
extern const Check forward_compat_entry{
    "forward_compat",
    "a cuda-compat libcuda on a GPU without forward compatibility (804)",
    forward_compat,
    {FindingId::forward_compat_unsupported_804},
    fact_area::driver | fact_area::gpus | fact_area::system};

}  // namespace checks
}  // namespace dlenv
