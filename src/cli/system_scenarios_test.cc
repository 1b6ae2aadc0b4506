// Scenario tests for the system rules (rules/wsl_checks.cc, container_checks.cc, kernel_checks.cc):
// WSL, containers and the Docker host, Secure Boot, the kernel log, the nvcc host compiler and
// cuDNN builds vs GPU/driver. Each builds a sysroot, runs `dlenv doctor --root` in-process and
// asserts the finding ids, firing and not firing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "binfmt/test_builders.h"
#include "cli/cli_test_support.h"
#include "cli/scenario_support.h"
#include "platform/process.h"

namespace dlenv {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::CliRun;
using testing::doctor;
using testing::doctor_json;
using testing::ids;
using testing::run_cli;
using testing::severity_of;

class Sysroot : public testing::LinuxSysroot<Sysroot> {
 public:
  Sysroot() : LinuxSysroot("system-scenario") {}

  Sysroot& bytes(const std::string& logical, const std::vector<uint8_t>& data) {
    fs::create_directories(at(logical).parent_path());
    std::ofstream(at(logical), std::ios::binary)
        .write(reinterpret_cast<const char*>(data.data()),
               static_cast<std::streamsize>(data.size()));
    return *this;
  }
  Sysroot& driver(const std::string& version) {
    file("/proc/driver/nvidia/version",
         "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  " + version +
             "  Release Build  (dvs-builder@U22-I3-AM02-24-3)  Wed Oct  1 00:00:00 UTC 2025\n");
    file("/sys/module/nvidia/version", version + "\n");
    file("/proc/modules",
         "nvidia 104910848 2 - Live 0x0000000000000000 (POE)\n"
         "nvidia_uvm 2142208 0 - Live 0x0000000000000000 (POE)\n");
    file("/dev/nvidiactl").file("/dev/nvidia0").file("/dev/nvidia-uvm");
    return *this;
  }
  Sysroot& gpu(const std::string& bus, const std::string& model) {
    return file("/proc/driver/nvidia/gpus/" + bus + "/information",
                "Model: \t\t " + model + "\nBus Location: \t " + bus + "\nDevice Minor: \t 0\n");
  }
  Sysroot& pci_gpu(const std::string& bus) {
    file("/sys/bus/pci/devices/" + bus + "/vendor", "0x10de\n");
    return file("/sys/bus/pci/devices/" + bus + "/class", "0x030000\n");
  }
  Sysroot& kernel(const std::string& release) {
    return file("/proc/sys/kernel/osrelease", release + "\n");
  }
  Sysroot& toolkit(const std::string& dir, const std::string& version, int max_gcc) {
    file(dir + "/version.json",
         "{\"cuda\": {\"name\": \"CUDA SDK\", \"version\": \"" + version + "\"}}\n");
    file(dir + "/bin/nvcc", "#!/bin/sh\n");
    file(dir + "/include/cuda.h", "#define CUDA_VERSION 12040\n");
    file(dir + "/include/crt/host_config.h",
         "#if defined(__GNUC__)\n\n#if __GNUC__ > " + std::to_string(max_gcc) +
             "\n\n#error -- unsupported GNU version! gcc versions later than " +
             std::to_string(max_gcc) + " are not supported!\n\n#endif /* __GNUC__ > " +
             std::to_string(max_gcc) + " */\n#endif\n");
    return link("/usr/local/cuda", dir.substr(dir.rfind('/') + 1));
  }
  // cuDNN 8 whose ops library links libcublas.so.<cublas_major>.
  Sysroot& cudnn8(const std::string& libdir, const std::string& version, int cublas_major) {
    std::string cublas = "/opt/fake/libcublas.so." + std::to_string(cublas_major);
    shared_lib(cublas, "libcublas.so." + std::to_string(cublas_major));
    for (std::string sub :
         {"", "_ops_infer", "_ops_train", "_cnn_infer", "_cnn_train", "_adv_infer", "_adv_train"}) {
      std::vector<std::string> needed;
      if (sub == "_ops_infer") needed = {cublas};
      shared_lib(libdir + "/libcudnn" + sub + ".so." + version, "libcudnn" + sub + ".so.8", needed);
      link(libdir + "/libcudnn" + sub + ".so.8", "libcudnn" + sub + ".so." + version);
    }
    return *this;
  }
  Sysroot& docker_container() { return file("/.dockerenv"); }

  // WSL2 as Ubuntu on Windows 11 has it: the Windows driver's copies (not links) in
  // /usr/lib/wsl/lib, registered through /etc/ld.so.conf.d/ld.wsl.conf.
  Sysroot& wsl2() {
    file("/proc/version",
         "Linux version 5.15.153.1-microsoft-standard-WSL2 (root@941d701f84f1) (gcc (GCC) 11.2.0) "
         "#1 SMP Fri Mar 29 23:14:13 UTC 2024\n");
    kernel("5.15.153.1-microsoft-standard-WSL2");
    file("/dev/dxg");
    // Sound ELF files (dlenv checks the CUDA libraries on LD_LIBRARY_PATH).
    auto elf = [](const char* soname) {
      testbuild::ElfSpec spec;
      spec.soname = soname;
      const auto bytes = testbuild::build_elf(spec).bytes;
      return std::string(bytes.begin(), bytes.end());
    };
    for (const char* n : {"libcuda.so", "libcuda.so.1", "libcuda.so.1.1"}) {
      file(std::string("/usr/lib/wsl/lib/") + n, elf("libcuda.so.1"));
    }
    file("/usr/lib/wsl/lib/libnvidia-ml.so.1", elf("libnvidia-ml.so.1"));
    file("/usr/lib/wsl/lib/nvidia-smi", "#!/bin/sh\n");
    file("/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
    file("/etc/ld.so.conf.d/ld.wsl.conf",
         "# This file was automatically generated by WSL.\n"
         "/usr/lib/wsl/lib\n");
    return *this;
  }
};

// ---- WSL ---------------------------------------------------------------------

TEST(SystemScenario, Wsl1HasNoGpu) {
  Sysroot s;
  s.file("/proc/version",
         "Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com) (gcc version 5.4.0 (GCC) ) "
         "#1237-Microsoft Sat Sep 11 14:32:00 PST 2021\n");
  s.kernel("4.4.0-19041-Microsoft");
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "wsl1-has-no-gpu"), "error") << j["findings"].dump(2);
  EXPECT_EQ(j["system"]["wsl"]["version"], 1);
  EXPECT_FALSE(ids(j).count("wsl-no-windows-gpu-driver"));
}

TEST(SystemScenario, HealthyWsl2OnlyNotesTheCosmeticLdconfigWarning) {
  Sysroot s;
  s.wsl2().env("LD_LIBRARY_PATH=/usr/lib/wsl/lib\n");
  json j = doctor_json(s);
  auto got = ids(j);
  EXPECT_EQ(severity_of(j, "wsl-libcuda-not-symlink-warning"), "info") << j["findings"].dump(2);
  for (const char* id :
       {"wsl1-has-no-gpu", "wsl-linux-driver-installed-inside", "wsl-unversioned-libcuda-not-found",
        "wsl-no-windows-gpu-driver", "no-nvidia-driver", "secure-boot-blocks-unsigned-module"}) {
    EXPECT_FALSE(got.count(id)) << id << "\n" << j["findings"].dump(2);
  }
  EXPECT_EQ(j["system"]["wsl"]["version"], 2);
  EXPECT_TRUE(j["host"]["wsl"]["value"].get<bool>());
  for (const auto& f : j["findings"]) EXPECT_NE(f["severity"], "error") << f.dump();
}

TEST(SystemScenario, Wsl2WithLinksInsteadOfCopiesHasNoLdconfigNote) {
  Sysroot s;
  s.wsl2();
  fs::remove(s.at("/usr/lib/wsl/lib/libcuda.so.1"));
  s.link("/usr/lib/wsl/lib/libcuda.so.1", "libcuda.so.1.1");
  json j = doctor_json(s);
  EXPECT_FALSE(ids(j).count("wsl-libcuda-not-symlink-warning")) << j["findings"].dump(2);
}

TEST(SystemScenario, Wsl2UnversionedLibcudaMissingWithCudnn8IsAWarning) {
  Sysroot s;
  s.wsl2();
  s.cudnn8("/usr/lib/x86_64-linux-gnu", "8.9.7", 12);
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "wsl-unversioned-libcuda-not-found"), "warning")
      << j["findings"].dump(2);
}

TEST(SystemScenario, Wsl2UnversionedLibcudaMissingWithoutConsumerIsInfo) {
  Sysroot s;
  s.wsl2();
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "wsl-unversioned-libcuda-not-found"), "info") << j["findings"].dump(2);
}

TEST(SystemScenario, Wsl2UnversionedLibcudaInTheLdCacheIsFine) {
  Sysroot s;
  s.wsl2();
  s.link("/usr/lib/x86_64-linux-gnu/libcuda.so", "/usr/lib/wsl/lib/libcuda.so.1");
  s.bytes(
      "/etc/ld.so.cache",
      testbuild::build_ld_cache({{0x0303, "libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1", 0},
                                 {0x0303, "libcuda.so", "/usr/lib/x86_64-linux-gnu/libcuda.so", 0}},
                                testbuild::CacheFormat::kNew));
  json j = doctor_json(s);
  EXPECT_FALSE(ids(j).count("wsl-unversioned-libcuda-not-found")) << j["findings"].dump(2);
  EXPECT_TRUE(j["system"]["wsl"]["unversioned_libcuda"].get<bool>());
}

TEST(SystemScenario, Wsl2LinuxDriverInstalledInside) {
  Sysroot s;
  s.wsl2().env("LD_LIBRARY_PATH=/usr/lib/wsl/lib\n");
  s.user_driver_libs("550.54.15");
  s.file("/var/lib/dpkg/status",
         "Package: bash\nStatus: install ok installed\nVersion: 5.1\n\n"
         "Package: nvidia-utils-550\nStatus: install ok installed\nVersion: 550.54.15\n\n"
         "Package: libnvidia-compute-550\nStatus: install ok installed\nVersion: 550.54.15\n\n"
         "Package: nvidia-driver-535\nStatus: deinstall ok config-files\nVersion: 535.1\n");
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "wsl-linux-driver-installed-inside"), "error") << j["findings"].dump(2);
  std::string dumped = j["findings"].dump();
  EXPECT_NE(dumped.find("nvidia-utils-550"), std::string::npos);
  EXPECT_EQ(dumped.find("nvidia-driver-535"), std::string::npos) << "removed package reported";
  EXPECT_NE(dumped.find("/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15"), std::string::npos);
}

TEST(SystemScenario, Wsl2WithoutTheWindowsDriver) {
  Sysroot s;
  s.wsl2();
  for (const char* n : {"libcuda.so", "libcuda.so.1", "libcuda.so.1.1"}) {
    fs::remove(s.at(std::string("/usr/lib/wsl/lib/") + n));
  }
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "wsl-no-windows-gpu-driver"), "warning") << j["findings"].dump(2);
}

TEST(SystemScenario, NotWslMeansNoWslFindings) {
  Sysroot s;
  s.file("/proc/version", "Linux version 6.8.0-84-generic (buildd@lcy02-amd64-054)\n");
  s.driver("580.95.05").user_driver_libs("580.95.05").gpu("0000:18:00.0", "NVIDIA H200");
  json j = doctor_json(s);
  for (const auto& id : ids(j)) EXPECT_NE(id.rfind("wsl", 0), 0u) << id;
  EXPECT_EQ(j["system"]["wsl"]["version"], 0);
}

// ---- containers --------------------------------------------------------------

TEST(SystemScenario, ContainerImageNeedsNewerDriver) {
  Sysroot s;
  s.docker_container().driver("535.104.05").gpu("0000:18:00.0", "NVIDIA A100-SXM4-80GB");
  s.env("NVIDIA_REQUIRE_CUDA=cuda>=12.8\nCUDA_VERSION=12.8.1\n");
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "container-image-needs-newer-driver"), "error") << j["findings"].dump(2);
  EXPECT_EQ(doctor(s).code, 1);
}

TEST(SystemScenario, ContainerImageRequirementMetIsSilent) {
  Sysroot s;
  s.docker_container().driver("580.95.05").gpu("0000:18:00.0", "NVIDIA H200");
  s.env("NVIDIA_REQUIRE_CUDA=cuda>=12.8 brand=tesla,driver>=470,driver<471\nCUDA_VERSION=12.8.1\n");
  json j = doctor_json(s);
  EXPECT_FALSE(ids(j).count("container-image-needs-newer-driver")) << j["findings"].dump(2);
}

TEST(SystemScenario, ContainerBrandAlternativeMakesItAWarning) {
  Sysroot s;
  s.docker_container().driver("535.104.05").gpu("0000:18:00.0", "NVIDIA A100-SXM4-80GB");
  s.env("NVIDIA_REQUIRE_CUDA=cuda>=12.8 brand=tesla,driver>=535,driver<536\n");
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "container-image-needs-newer-driver"), "warning")
      << j["findings"].dump(2);
}

TEST(SystemScenario, ContainerCudaVersionOnlyUsesMinorCompatibility) {
  Sysroot s;
  s.docker_container().driver("535.104.05").gpu("0000:18:00.0", "NVIDIA A100-SXM4-80GB");
  s.env("CUDA_VERSION=12.8.1\n");
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "container-image-needs-newer-driver"), "warning")
      << j["findings"].dump(2);
  Sysroot old;
  old.docker_container().driver("470.82.01").gpu("0000:18:00.0", "Tesla V100-SXM2-16GB");
  old.env("CUDA_VERSION=12.8.1\n");
  EXPECT_EQ(severity_of(doctor_json(old), "container-image-needs-newer-driver"), "error");
}

TEST(SystemScenario, ContainerShmTooSmall) {
  Sysroot s;
  s.docker_container().file("/proc/mounts",
                            "overlay / overlay rw,relatime 0 0\n"
                            "shm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime,size=65536k 0 0\n");
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "container-shm-too-small"), "info") << j["findings"].dump(2);
  EXPECT_EQ(j["system"]["container"]["shm_bytes"]["value"], 65536ull * 1024);
}

TEST(SystemScenario, LargeShmOrNoContainerIsSilent) {
  Sysroot big;
  big.docker_container().file("/proc/mounts", "shm /dev/shm tmpfs rw,size=8g 0 0\n");
  EXPECT_FALSE(ids(doctor_json(big)).count("container-shm-too-small"));
  Sysroot host;
  host.file("/proc/mounts", "tmpfs /dev/shm tmpfs rw,size=65536k 0 0\n");
  EXPECT_FALSE(ids(doctor_json(host)).count("container-shm-too-small"));
  Sysroot half_ram;
  half_ram.docker_container().file("/proc/mounts", "tmpfs /dev/shm tmpfs rw,nosuid,nodev 0 0\n");
  EXPECT_FALSE(ids(doctor_json(half_ram)).count("container-shm-too-small"));
}

TEST(SystemScenario, ContainerDeviceCgroupLostTheGpu) {
  Sysroot s;
  s.docker_container().driver("580.95.05").gpu("0000:18:00.0", "NVIDIA H200");
  s.file("/sys/fs/cgroup/devices/devices.list", "c 1:3 rwm\nc 1:5 rwm\nc 136:* rwm\n");
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "container-loses-gpu-after-daemon-reload"), "error")
      << j["findings"].dump(2);
  Sysroot ok;
  ok.docker_container().driver("580.95.05").gpu("0000:18:00.0", "NVIDIA H200");
  ok.file("/sys/fs/cgroup/devices/devices.list", "c 1:3 rwm\nc 195:* rwm\n");
  EXPECT_FALSE(ids(doctor_json(ok)).count("container-loses-gpu-after-daemon-reload"));
}

void docker_host(Sysroot& s) {
  s.driver("580.95.05").user_driver_libs("580.95.05").gpu("0000:18:00.0", "NVIDIA H200");
  s.file("/usr/bin/dockerd", "#!/bin/sh\n");
}

TEST(SystemScenario, HostWithoutDevCharLinksWillLoseContainerGpus) {
  Sysroot s;
  docker_host(s);
  s.file("/usr/bin/nvidia-ctk").file("/usr/bin/nvidia-container-runtime-hook");
  s.file("/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "container-loses-gpu-after-daemon-reload"), "warning")
      << j["findings"].dump(2);
  s.link("/dev/char/195:0", "../nvidia0").link("/dev/char/195:255", "../nvidiactl");
  EXPECT_FALSE(ids(doctor_json(s)).count("container-loses-gpu-after-daemon-reload"));
}

TEST(SystemScenario, DockerWithoutTheNvidiaToolkit) {
  Sysroot s;
  docker_host(s);
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "docker-no-gpu-runtime"), "warning") << j["findings"].dump(2);
}

TEST(SystemScenario, DockerToolkitWithoutRuntimeEntryIsInfoAndConfiguredIsSilent) {
  Sysroot s;
  docker_host(s);
  s.file("/usr/bin/nvidia-ctk").file("/usr/bin/nvidia-container-runtime-hook");
  s.file("/etc/docker/daemon.json", "{\"log-driver\": \"json-file\"}\n");
  EXPECT_EQ(severity_of(doctor_json(s), "docker-no-gpu-runtime"), "info");
  s.file("/etc/docker/daemon.json",
         "{\"runtimes\": {\"nvidia\": {\"args\": [], \"path\": \"nvidia-container-runtime\"}}}\n");
  json j = doctor_json(s);
  EXPECT_FALSE(ids(j).count("docker-no-gpu-runtime")) << j["findings"].dump(2);
  EXPECT_EQ(j["system"]["docker"]["daemon_runtimes"]["value"][0], "nvidia");
}

TEST(SystemScenario, NoDockerNoDockerFindings) {
  Sysroot s;
  s.driver("580.95.05").user_driver_libs("580.95.05").gpu("0000:18:00.0", "NVIDIA H200");
  auto got = ids(doctor_json(s));
  EXPECT_FALSE(got.count("docker-no-gpu-runtime"));
  EXPECT_FALSE(got.count("container-loses-gpu-after-daemon-reload"));
  EXPECT_FALSE(got.count("container-toolkit-cannot-find-nvml"));
}

TEST(SystemScenario, ContainerToolkitWithoutHostDriver) {
  Sysroot s;
  s.pci_gpu("0000:18:00.0").file("/usr/bin/nvidia-container-cli").file("/usr/bin/dockerd");
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "container-toolkit-cannot-find-nvml"), "error") << j["findings"].dump(2);
}

TEST(SystemScenario, ContainerToolkitNvmlMissingFromTheLdCache) {
  Sysroot s;
  docker_host(s);
  s.file("/usr/bin/nvidia-container-cli").file("/usr/bin/nvidia-container-runtime-hook");
  s.bytes("/etc/ld.so.cache", testbuild::build_ld_cache(
                                  {{0x0303, "libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6", 0}},
                                  testbuild::CacheFormat::kNew));
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "container-toolkit-cannot-find-nvml"), "error") << j["findings"].dump(2);
  s.bytes("/etc/ld.so.cache",
          testbuild::build_ld_cache(
              {{0x0303, "libnvidia-ml.so.1", "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", 0}},
              testbuild::CacheFormat::kNew));
  EXPECT_FALSE(ids(doctor_json(s)).count("container-toolkit-cannot-find-nvml"));
}

// ---- kernel ------------------------------------------------------------------

const char* kSecureBoot =
    "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e0c63e7dcf8c";

void secure_boot_host(Sysroot& s, uint8_t enabled, const std::string& module_tail) {
  s.kernel("6.8.0-84-generic").pci_gpu("0000:01:00.0").user_driver_libs("580.95.05");
  s.bytes(kSecureBoot, {0x06, 0x00, 0x00, 0x00, enabled});
  s.file("/lib/modules/6.8.0-84-generic/updates/dkms/nvidia.ko",
         "\x7f"
         "ELF...." +
             module_tail);
  s.file("/var/lib/dkms/nvidia/580.95.05/6.8.0-84-generic/x86_64/module/nvidia.ko");
  s.file("/proc/modules", "snd 1 0 - Live 0x0\n");
}

TEST(SystemScenario, SecureBootRefusesUnsignedModule) {
  Sysroot s;
  secure_boot_host(s, 1, "no signature");
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "secure-boot-blocks-unsigned-module"), "error") << j["findings"].dump(2);
  EXPECT_TRUE(j["system"]["kernel"]["secure_boot"]["value"].get<bool>());
}

TEST(SystemScenario, SecureBootSignedButKeyNotEnrolled) {
  Sysroot s;
  secure_boot_host(s, 1, "sig~Module signature appended~\n");
  s.file("/var/lib/shim-signed/mok/MOK.der", "0\x82 dlenv-test-key-der-bytes");
  s.file("/sys/firmware/efi/mok-variables/MokListRT", "some other enrolled cert");
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "secure-boot-blocks-unsigned-module"), "error") << j["findings"].dump(2);
  // Enrolled key and a signed module: only the weaker "may be" warning remains.
  s.file("/sys/firmware/efi/mok-variables/MokListRT", "hdr 0\x82 dlenv-test-key-der-bytes tail");
  EXPECT_EQ(severity_of(doctor_json(s), "secure-boot-blocks-unsigned-module"), "warning");
}

TEST(SystemScenario, SecureBootOffOrModuleLoadedIsSilent) {
  Sysroot off;
  secure_boot_host(off, 0, "no signature");
  EXPECT_FALSE(ids(doctor_json(off)).count("secure-boot-blocks-unsigned-module"));
  Sysroot loaded;
  secure_boot_host(loaded, 1, "no signature");
  loaded.driver("580.95.05");
  EXPECT_FALSE(ids(doctor_json(loaded)).count("secure-boot-blocks-unsigned-module"));
}

TEST(SystemScenario, Xid79InTheKernelLog) {
  Sysroot s;
  s.driver("580.95.05")
      .user_driver_libs("580.95.05")
      .gpu("0000:01:00.0", "NVIDIA GeForce RTX 4090");
  s.file(
      "/var/log/kern.log",
      "Mar  3 10:00:00 host kernel: [  12.3] nvidia-modeset: Loading NVIDIA Kernel Mode Setting\n"
      "Mar  3 11:02:17 host kernel: [3723.1] NVRM: Xid (PCI:0000:01:00): 79, pid='<unknown>', "
      "name=<unknown>, GPU has fallen off the bus.\n"
      "Mar  3 11:02:17 host kernel: [3723.1] NVRM: GPU 0000:01:00.0: GPU has fallen off the "
      "bus.\n");
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "gpu-fallen-off-bus-xid79"), "warning") << j["findings"].dump(2);
  EXPECT_NE(j["findings"].dump().find("Xid (PCI:0000:01:00): 79"), std::string::npos);
}

TEST(SystemScenario, OtherXidsAreNotXid79) {
  Sysroot s;
  s.driver("580.95.05").gpu("0000:01:00.0", "NVIDIA GeForce RTX 4090");
  s.file("/var/log/kern.log",
         "Mar  3 11:02:17 host kernel: NVRM: Xid (PCI:0000:01:00): 13, pid=1234, name=python, "
         "Graphics SM Warp Exception\n"
         "Mar  3 11:02:18 host kernel: NVRM: Xid (PCI:0000:01:00): 79x not a real code\n");
  EXPECT_FALSE(ids(doctor_json(s)).count("gpu-fallen-off-bus-xid79"));
}

// ---- host compiler -----------------------------------------------------------

TEST(SystemScenario, GccNewerThanNvccAccepts) {
  Sysroot s;
  s.toolkit("/usr/local/cuda-12.4", "12.4.1", 13);
  s.file("/usr/bin/gcc-14", "#!/bin/sh\n").link("/usr/bin/gcc", "gcc-14");
  s.env("PATH=/usr/local/cuda-12.4/bin:/usr/bin:/bin\n");
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "nvcc-unsupported-host-compiler"), "warning") << j["findings"].dump(2);
  EXPECT_EQ(j["system"]["host_compiler"]["gcc_major"]["value"], 14);
}

TEST(SystemScenario, SupportedGccOrCcbinOverrideIsSilent) {
  Sysroot s;
  s.toolkit("/usr/local/cuda-12.4", "12.4.1", 13);
  s.file("/usr/bin/gcc-13", "#!/bin/sh\n").link("/usr/bin/gcc", "gcc-13");
  s.env("PATH=/usr/local/cuda-12.4/bin:/usr/bin:/bin\n");
  EXPECT_FALSE(ids(doctor_json(s)).count("nvcc-unsupported-host-compiler"));
  Sysroot o;
  o.toolkit("/usr/local/cuda-12.4", "12.4.1", 13);
  o.file("/usr/bin/gcc-14").link("/usr/bin/gcc", "gcc-14").file("/usr/bin/g++-12");
  o.env("PATH=/usr/local/cuda-12.4/bin:/usr/bin:/bin\nNVCC_CCBIN=g++-12\n");
  EXPECT_FALSE(ids(doctor_json(o)).count("nvcc-unsupported-host-compiler"));
}

// ---- cuDNN builds vs GPU and driver -------------------------------------------

// cuDNN 8.0.5 was built for CUDA 11.0/11.1 (and 10.2); CUDA 11.1 stops at compute
// capability 8.6, so an Ada GPU (8.9) has no kernels in it.
TEST(SystemScenario, CudnnForCuda11_1OnAnAdaGpu) {
  Sysroot s;
  s.driver("550.54.15").gpu("0000:01:00.0", "NVIDIA GeForce RTX 4090");
  s.cudnn8("/usr/lib/x86_64-linux-gnu", "8.0.5", 11);
  json j = doctor_json(s);
  EXPECT_FALSE(severity_of(j, "cudnn-execution-failed-old-cuda-on-new-gpu").empty())
      << j["findings"].dump(2) << j["cudnn"].dump(2);
  Sysroot ok;
  ok.driver("550.54.15").gpu("0000:01:00.0", "NVIDIA GeForce RTX 3090");
  ok.cudnn8("/usr/lib/x86_64-linux-gnu", "8.0.5", 11);
  EXPECT_FALSE(ids(doctor_json(ok)).count("cudnn-execution-failed-old-cuda-on-new-gpu"));
}

TEST(SystemScenario, CudnnNeedsANewerDriver) {
  Sysroot s;
  s.driver("570.86.15").gpu("0000:18:00.0", "NVIDIA H200");
  s.cudnn9("/usr/lib/x86_64-linux-gnu", "9.17.0", 13);
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "cudnn-status-not-initialized"), "error")
      << j["findings"].dump(2) << j["cudnn"].dump(2);
  Sysroot ok;
  ok.driver("580.95.05").gpu("0000:18:00.0", "NVIDIA H200");
  ok.cudnn9("/usr/lib/x86_64-linux-gnu", "9.17.0", 13);
  EXPECT_FALSE(ids(doctor_json(ok)).count("cudnn-status-not-initialized"));
}

}  // namespace
}  // namespace dlenv
