// Scenario tests for rules/datacenter_driver_checks.cc: NVSwitch systems and Fabric Manager
// (fabric-manager-missing-802), a cuda-compat libcuda on a GPU without forward
// compatibility (forward-compat-unsupported-804) and the cuBLAS wheel torch pins
// (cublas-gemm-invalid-value-mismatch). Each builds a sysroot, runs `dlenv doctor
// --root` in-process and asserts the finding, firing and not firing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli/scenario_support.h"

namespace dlenv {
namespace {

using nlohmann::json;
using testing::doctor_json;
using testing::ids;
using testing::severity_of;

class Sysroot : public testing::LinuxSysroot<Sysroot> {
 public:
  Sysroot() : LinuxSysroot("catalog-scenario") {}

  Sysroot& driver(const std::string& version) {
    file("/proc/driver/nvidia/version",
         "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  " + version +
             "  Release Build  (dvs-builder@U22-I3-AM02-24-3)  Wed Oct  1 00:00:00 UTC 2025\n");
    file("/sys/module/nvidia/version", version + "\n");
    file("/proc/modules", "nvidia 104910848 2 - Live 0x0000000000000000 (POE)\n");
    return file("/dev/nvidiactl").file("/dev/nvidia0");
  }
  Sysroot& gpu(const std::string& model, const std::string& bus = "0000:18:00.0") {
    return file("/proc/driver/nvidia/gpus/" + bus + "/information",
                "Model: \t\t " + model + "\nBus Location: \t " + bus + "\nDevice Minor: \t 0\n");
  }
  Sysroot& process(int pid, const std::string& comm) {
    return file("/proc/" + std::to_string(pid) + "/comm", comm + "\n");
  }
  // An HGX board's NVSwitches as the nvidia driver shows them.
  Sysroot& nvswitches() {
    for (const char* bus : {"0000:05:00.0", "0000:06:00.0", "0000:07:00.0", "0000:08:00.0"}) {
      file(std::string("/proc/driver/nvidia-nvswitch/devices/") + bus + "/information",
           "Fabric State: \t\t Uninitialized\n");
    }
    return file("/dev/nvidia-nvswitchctl")
        .file("/dev/nvidia-nvswitch0")
        .file("/dev/nvidia-nvswitch1");
  }
  // The nvidia-fabricmanager-<branch> package: binary, unit, dpkg record, enabled link.
  Sysroot& fabric_manager(const std::string& version, bool enabled = true) {
    std::string branch = version.substr(0, version.find('.'));
    file("/usr/bin/nv-fabricmanager", "ELF");
    file("/lib/systemd/system/nvidia-fabricmanager.service",
         "[Unit]\nDescription=NVIDIA fabric manager service\n");
    if (enabled) {
      link("/etc/systemd/system/multi-user.target.wants/nvidia-fabricmanager.service",
           "/lib/systemd/system/nvidia-fabricmanager.service");
    }
    return file("/var/lib/dpkg/status",
                "Package: libc6\nStatus: install ok installed\nVersion: 2.39-0ubuntu8\n\n"
                "Package: nvidia-fabricmanager-" +
                    branch + "\nStatus: install ok installed\nArchitecture: amd64\nVersion: " +
                    version + "-1\n\n");
  }
  // An HGX H100 host on driver 580.95.05 with ordinary processes running.
  Sysroot& hgx_host() {
    driver("580.95.05").gpu("NVIDIA H100 80GB HBM3").nvswitches();
    return process(1, "systemd").process(812, "sshd").process(2301, "python3");
  }
  // A cuda-compat libcuda (a real ELF file: the loader model rejects empty ones).
  Sysroot& compat(const std::string& toolkit, const std::string& version) {
    std::string dir = toolkit + "/compat";
    shared_lib(dir + "/libcuda.so." + version, "libcuda.so.1");
    link(dir + "/libcuda.so.1", "libcuda.so." + version);
    return link(dir + "/libcuda.so", "libcuda.so.1");
  }
};

std::string title_of(const json& j, const std::string& id) {
  for (const auto& f : j["findings"]) {
    if (f["id"] == id) return f["title"];
  }
  return "";
}

std::string fix_commands(const json& j, const std::string& id) {
  std::string out;
  for (const auto& f : j["findings"]) {
    if (f["id"] != id) continue;
    for (const auto& s : f["fix"]) out += s.value("command", "") + "\n";
  }
  return out;
}

// ---- fabric-manager-missing-802 -------------------------------------------------------

TEST(CatalogScenario, NvSwitchHostWithoutFabricManager) {
  Sysroot s;
  s.hgx_host();
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "fabric-manager-missing-802"), "error") << j["findings"].dump(2);
  EXPECT_NE(title_of(j, "fabric-manager-missing-802").find("without NVIDIA Fabric Manager"),
            std::string::npos);
  std::string fix = fix_commands(j, "fabric-manager-missing-802");
  EXPECT_NE(fix.find("apt-get install -y nvidia-fabricmanager-580='580.95.05-*'"),
            std::string::npos)
      << fix;
  EXPECT_NE(fix.find("systemctl enable --now nvidia-fabricmanager"), std::string::npos) << fix;
}

TEST(CatalogScenario, FabricManagerInstalledButNotRunning) {
  Sysroot s;
  s.hgx_host().fabric_manager("580.95.05", false);
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "fabric-manager-missing-802"), "error") << j["findings"].dump(2);
  EXPECT_NE(title_of(j, "fabric-manager-missing-802").find("not running"), std::string::npos);
  std::string all = j["findings"].dump();
  EXPECT_NE(all.find("not enabled at boot"), std::string::npos) << all;
  EXPECT_NE(all.find("no nv-fabricmanager process"), std::string::npos) << all;
}

TEST(CatalogScenario, FabricManagerOfAnotherDriverVersion) {
  Sysroot s;
  // The kernel keeps 15 characters of the process name.
  s.hgx_host().fabric_manager("580.65.06").process(1712, "nv-fabricmanage");
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "fabric-manager-missing-802"), "error") << j["findings"].dump(2);
  EXPECT_NE(title_of(j, "fabric-manager-missing-802")
                .find("Fabric Manager 580.65.06 does not match driver 580.95.05"),
            std::string::npos)
      << title_of(j, "fabric-manager-missing-802");
  EXPECT_NE(fix_commands(j, "fabric-manager-missing-802").find("='580.95.05-*'"),
            std::string::npos);
}

TEST(CatalogScenario, RunningFabricManagerOfTheDriverVersionIsQuiet) {
  Sysroot s;
  s.hgx_host().fabric_manager("580.95.05").process(1712, "nv-fabricmanage");
  json j = doctor_json(s);
  EXPECT_FALSE(ids(j).count("fabric-manager-missing-802")) << j["findings"].dump(2);
}

TEST(CatalogScenario, NvSwitchSeenOnlyAsPciBridgeStillCounts) {
  Sysroot s;
  s.driver("580.95.05").gpu("NVIDIA H200").process(1, "systemd");
  s.file("/sys/bus/pci/devices/0000:05:00.0/vendor", "0x10de\n")
      .file("/sys/bus/pci/devices/0000:05:00.0/class", "0x068000\n");
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "fabric-manager-missing-802"), "error") << j["findings"].dump(2);
  EXPECT_NE(j["findings"].dump().find("NVIDIA PCI bridge, class 0x068000"), std::string::npos);
}

TEST(CatalogScenario, EmptyNvSwitchDirectoryIsNoSwitch) {
  // The H200 GPU machine: one GPU passed through, the nvswitch directory without entries.
  Sysroot s;
  s.driver("580.159.04").gpu("NVIDIA H200", "0000:00:06.0").process(1, "process_api");
  std::filesystem::create_directories(s.at("/proc/driver/nvidia-nvswitch/devices"));
  json j = doctor_json(s);
  EXPECT_FALSE(ids(j).count("fabric-manager-missing-802")) << j["findings"].dump(2);
}

TEST(CatalogScenario, NvSwitchInContainerIsOnlyInformation) {
  Sysroot s;
  s.hgx_host().file("/.dockerenv");
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "fabric-manager-missing-802"), "info") << j["findings"].dump(2);
  EXPECT_NE(title_of(j, "fabric-manager-missing-802").find("must run on the host"),
            std::string::npos);
}

// ---- forward-compat-unsupported-804 ---------------------------------------------------

TEST(CatalogScenario, CompatLibcudaOnLdLibraryPathWithGeForce) {
  Sysroot s;
  s.driver("535.183.01").gpu("NVIDIA GeForce RTX 4090").user_driver_libs("535.183.01");
  s.compat("/usr/local/cuda-12.8", "570.124.06")
      .env("LD_LIBRARY_PATH=/usr/local/cuda-12.8/compat:/usr/local/cuda-12.8/lib64\n");
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "forward-compat-unsupported-804"), "error") << j["findings"].dump(2);
  std::string title = title_of(j, "forward-compat-unsupported-804");
  EXPECT_NE(title.find("libcuda 570.124.06"), std::string::npos) << title;
  EXPECT_NE(title.find("kernel driver 535.183.01"), std::string::npos) << title;
  std::string all = j["findings"].dump();
  EXPECT_NE(all.find("/usr/local/cuda-12.8/compat/libcuda.so.1"), std::string::npos) << all;
  EXPECT_NE(all.find("GeForce/TITAN"), std::string::npos) << all;
  EXPECT_NE(fix_commands(j, "forward-compat-unsupported-804").find("grep -v '/compat'"),
            std::string::npos);
}

TEST(CatalogScenario, CompatLibcudaWithWorkstationGpuIsAWarning) {
  Sysroot s;
  s.driver("535.183.01").gpu("NVIDIA RTX A6000").user_driver_libs("535.183.01");
  s.compat("/usr/local/cuda-12.8", "570.124.06")
      .env("LD_LIBRARY_PATH=/usr/local/cuda-12.8/compat\n");
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "forward-compat-unsupported-804"), "warning") << j["findings"].dump(2);
}

TEST(CatalogScenario, CompatLibcudaWithDataCenterGpuIsSupported) {
  Sysroot s;
  s.driver("535.183.01").gpu("NVIDIA H100 80GB HBM3").user_driver_libs("535.183.01");
  s.compat("/usr/local/cuda-12.8", "570.124.06")
      .env("LD_LIBRARY_PATH=/usr/local/cuda-12.8/compat\n");
  json j = doctor_json(s);
  EXPECT_FALSE(ids(j).count("forward-compat-unsupported-804")) << j["findings"].dump(2);
}

TEST(CatalogScenario, CompatPackageOffTheSearchPathIsQuietOnGeForce) {
  Sysroot s;
  s.driver("535.183.01").gpu("NVIDIA GeForce RTX 4090").user_driver_libs("535.183.01");
  s.compat("/usr/local/cuda-12.8", "570.124.06").env("PATH=/usr/bin\n");
  json j = doctor_json(s);
  EXPECT_FALSE(ids(j).count("forward-compat-unsupported-804")) << j["findings"].dump(2);
}

TEST(CatalogScenario, H200MachineWithCompatDirectoryStaysQuiet) {
  // As the H200 GPU machine is: a container, driver 580.159.04, cuda-compat-13-0
  // (580.95.05, older than the kernel module) in /usr/local/cuda-13.0/compat, off the path.
  Sysroot s;
  s.driver("580.159.04").gpu("NVIDIA H200", "0000:00:06.0").file("/.dockerenv");
  s.user_driver_libs("580.159.04", "/usr/local/nvidia/lib64");
  s.compat("/usr/local/cuda-13.0", "580.95.05").link("/usr/local/cuda", "cuda-13.0");
  std::filesystem::create_directories(s.at("/proc/driver/nvidia-nvswitch/devices"));
  s.env("LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/local/nvidia/lib\n");
  json j = doctor_json(s);
  auto got = ids(j);
  EXPECT_FALSE(got.count("forward-compat-unsupported-804")) << j["findings"].dump(2);
  EXPECT_FALSE(got.count("fabric-manager-missing-802")) << j["findings"].dump(2);
}

// ---- cublas-gemm-invalid-value-mismatch -----------------------------------------------

const std::string kVenv = "/home/u/venv";

// torch 2.6.0+cu124 (pins nvidia-cublas-cu12==12.4.5.8) and the given cuBLAS wheel.
void torch_with_cublas(Sysroot& s, const std::string& cublas_version) {
  s.driver("580.95.05").gpu("NVIDIA H100 80GB HBM3");
  s.file(kVenv + "/pyvenv.cfg", "home = /usr/bin\nversion = 3.11.9\n")
      .file(kVenv + "/bin/python3", "not really python");
  std::string site = kVenv + "/lib/python3.11/site-packages";
  s.file(site + "/torch-2.6.0+cu124.dist-info/METADATA",
         "Metadata-Version: 2.1\nName: torch\nVersion: 2.6.0+cu124\n"
         "Requires-Dist: filelock\n"
         "Requires-Dist: nvidia-cublas-cu12==12.4.5.8; platform_system == \"Linux\" and "
         "platform_machine == \"x86_64\"\n"
         "Requires-Dist: nvidia-cudnn-cu12==9.1.0.70; platform_system == \"Linux\" and "
         "platform_machine == \"x86_64\"\n"
         "Requires-Dist: opt-einsum>=3.3; extra == \"opt-einsum\"\n\n");
  s.file(site + "/torch/version.py", "__version__ = '2.6.0+cu124'\ncuda = '12.4'\n");
  s.file(site + "/nvidia_cublas_cu12-" + cublas_version + ".dist-info/METADATA",
         "Metadata-Version: 2.1\nName: nvidia-cublas-cu12\nVersion: " + cublas_version + "\n\n");
  s.file(site + "/nvidia_cudnn_cu12-9.1.0.70.dist-info/METADATA",
         "Metadata-Version: 2.1\nName: nvidia-cudnn-cu12\nVersion: 9.1.0.70\n\n");
  s.env("VIRTUAL_ENV=" + kVenv + "\nPATH=" + kVenv + "/bin:/usr/bin\n");
}

TEST(CatalogScenario, CublasWheelOtherThanTorchPins) {
  Sysroot s;
  torch_with_cublas(s, "12.8.4.1");
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "cublas-gemm-invalid-value-mismatch"), "warning")
      << j["findings"].dump(2);
  std::string title = title_of(j, "cublas-gemm-invalid-value-mismatch");
  EXPECT_NE(title.find("nvidia-cublas-cu12 12.8.4.1"), std::string::npos) << title;
  EXPECT_NE(title.find("nvidia-cublas-cu12==12.4.5.8"), std::string::npos) << title;
  EXPECT_NE(fix_commands(j, "cublas-gemm-invalid-value-mismatch")
                .find("-m pip install \"nvidia-cublas-cu12==12.4.5.8\""),
            std::string::npos)
      << fix_commands(j, "cublas-gemm-invalid-value-mismatch");
}

TEST(CatalogScenario, CublasWheelTorchPinsIsQuiet) {
  Sysroot s;
  torch_with_cublas(s, "12.4.5.8");
  json j = doctor_json(s);
  EXPECT_FALSE(ids(j).count("cublas-gemm-invalid-value-mismatch")) << j["findings"].dump(2);
}

// ---- explain -------------------------------------------------------------------------

TEST(CatalogScenario, ExplainSaysDoctorChecksTheThreeIds) {
  for (const char* id : {"fabric-manager-missing-802", "forward-compat-unsupported-804",
                         "cublas-gemm-invalid-value-mismatch"}) {
    auto r = testing::run_cli({"explain", id});
    EXPECT_EQ(r.code, 0) << id;
    EXPECT_NE(r.out.find("checked by dlenv doctor: yes"), std::string::npos) << id << r.out;
  }
}

}  // namespace
}  // namespace dlenv
