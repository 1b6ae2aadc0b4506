// System rules over hand-built Facts: the live-only signals (NVML errors inside
// WSL2 or a container, /dev/kmsg lines of this boot) that a --root scenario
// cannot produce. The file-based cases are scenario tests (cli/system_scenarios_test.cc).
#include <gtest/gtest.h>

#include <set>

#include "rules/rules.h"

namespace dlenv {
namespace {

std::shared_ptr<const Kb> kb() {
  static auto k = Kb::load_embedded();
  return *k;
}

Facts live_machine() {
  Facts f;
  f.host.container = Fact<std::string>::known("none", "/.dockerenv");
  f.driver.kernel_module_version =
      Fact<std::string>::known("580.95.05", "/proc/driver/nvidia/version");
  f.driver.nvml_driver_version = Fact<std::string>::known("580.95.05", "NVML");
  f.driver.cuda_driver_version = Fact<int>::known(13000, "cuDriverGetVersion");
  f.driver.nvidia_loaded = true;
  for (const char* n : {"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm"}) {
    DeviceNode d;
    d.path = n;
    d.present = d.readable = d.writable = true;
    f.driver.device_nodes.push_back(d);
  }
  return f;
}

std::string severity(const Facts& f, const std::string& id) {
  for (const auto& x : run_rules(f, *kb(), Os::linux)) {
    if (x.id == id) return severity_name(x.severity);
  }
  return "";
}

TEST(SystemRules, WslGpuAccessBlockedComesFromTheNvmlError) {
  Facts f = live_machine();
  f.driver.kernel_module_version = Fact<std::string>::unknown(FactStatus::not_found, "WSL");
  f.driver.nvml_driver_version = Fact<std::string>::unknown(FactStatus::error, "init failed");
  f.driver.nvml_error =
      Fact<std::string>::known("GPU access blocked by the operating system", "nvmlInit_v2");
  f.system.wsl.version = 2;
  f.system.wsl.linux_driver_packages = {"nvidia-utils-550"};
  EXPECT_EQ(severity(f, "wsl-gpu-access-blocked"), "error");
  f.system.wsl.version = 0;  // the same text outside WSL is not this finding
  EXPECT_EQ(severity(f, "wsl-gpu-access-blocked"), "");
}

TEST(SystemRules, NvmlUnknownErrorInAContainerIsTheDaemonReloadCase) {
  Facts f = live_machine();
  f.host.container = Fact<std::string>::known("docker", "/.dockerenv");
  f.driver.nvml_error = Fact<std::string>::known("Unknown Error", "nvmlInit_v2");
  EXPECT_EQ(severity(f, "container-loses-gpu-after-daemon-reload"), "error");
  f.driver.nvml_error = Fact<std::string>::unknown(FactStatus::not_found, "");
  EXPECT_EQ(severity(f, "container-loses-gpu-after-daemon-reload"), "");
}

TEST(SystemRules, Xid79FromKmsgIsAnErrorOfThisBoot) {
  Facts f = live_machine();
  f.system.kernel.log_lines.push_back(
      {"NVRM: Xid (PCI:0000:4f:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the "
       "bus.",
       "/dev/kmsg"});
  EXPECT_EQ(severity(f, "gpu-fallen-off-bus-xid79"), "error");
  f.system.kernel.log_lines.back().source = "/var/log/kern.log";
  EXPECT_EQ(severity(f, "gpu-fallen-off-bus-xid79"), "warning");
}

}  // namespace
}  // namespace dlenv
