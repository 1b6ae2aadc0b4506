// Scenario tests: one generated sysroot per failure mode, `dlenv doctor --root`
// run in-process, the finding ids asserted; goldens for the text and JSON forms.
// Fake libraries are built at test time with the system compiler (DLENV_CXX_COMPILER)
// so the ELF reader sees real DT_NEEDED/SONAME entries.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "cli/cli.h"
#include "cli/cli_test_support.h"
#include "cli/scenario_support.h"
#include "platform/process.h"
#include "util/strings.h"

namespace dlenv {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class Sysroot : public testing::LinuxSysroot<Sysroot> {
 public:
  Sysroot() : LinuxSysroot("scenario") {}
  // --- building blocks ---
  Sysroot& driver(const std::string& version, bool uvm = true) {
    file("/proc/driver/nvidia/version",
         "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  " + version +
             "  Release Build  (dvs-builder@U22-I3-AM02-24-3)  Wed Oct  1 00:00:00 UTC 2025\n"
             "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n");
    file("/sys/module/nvidia/version", version + "\n");
    std::string mods =
        "nvidia_modeset 1564672 0 - Live 0x0000000000000000 (POE)\n"
        "nvidia 104910848 2 nvidia_modeset, Live 0x0000000000000000 (POE)\n";
    if (uvm) mods += "nvidia_uvm 2142208 0 - Live 0x0000000000000000 (POE)\n";
    file("/proc/modules", mods);
    file("/dev/nvidiactl").file("/dev/nvidia0");
    if (uvm) file("/dev/nvidia-uvm").file("/dev/nvidia-uvm-tools");
    return *this;
  }
  Sysroot& gpu(const std::string& bus, const std::string& model, int minor = 0) {
    file("/proc/driver/nvidia/gpus/" + bus + "/information",
         "Model: \t\t " + model +
             "\nIRQ:   \t\t 64\nGPU UUID: \t GPU-5b1a4a1e-0000-0000-0000-00000000000" +
             std::to_string(minor) +
             "\nVideo BIOS: \t 96.00.a5.00.01\nBus Type: \t PCIe\n"
             "DMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\nBus Location: \t " +
             bus + "\nDevice Minor: \t " + std::to_string(minor) +
             "\nGPU Firmware: \t 580.95.05\n");
    return *this;
  }
  Sysroot& toolkit(const std::string& dir, const std::string& version, bool default_link = false) {
    file(dir + "/version.json",
         "{\n  \"cuda\" : {\n    \"name\" : \"CUDA SDK\",\n    \"version\" : \"" + version +
             "\"\n  },\n  \"cuda_nvcc\" : {\n    \"name\" : \"CUDA NVCC\",\n"
             "    \"version\" : \"" +
             version + "\"\n  }\n}\n");
    file(dir + "/bin/nvcc", "#!/bin/sh\necho fake nvcc\n");
    std::string major = version.substr(0, version.find('.'));
    file(dir + "/include/cuda.h", "#define CUDA_VERSION " + major + "000\n");
    file(dir + "/lib64/libcudart.so." + version, "");
    link(dir + "/lib64/libcudart.so." + major, "libcudart.so." + version);
    if (default_link) link("/usr/local/cuda", dir.substr(dir.rfind('/') + 1));
    return *this;
  }
  Sysroot& cudnn_header(const std::string& path, int major, int minor, int patch) {
    return file(path, "#ifndef CUDNN_VERSION_H_\n#define CUDNN_VERSION_H_\n#define CUDNN_MAJOR " +
                          std::to_string(major) + "\n#define CUDNN_MINOR " + std::to_string(minor) +
                          "\n#define CUDNN_PATCHLEVEL " + std::to_string(patch) +
                          "\n#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + "
                          "CUDNN_PATCHLEVEL)\n#endif\n");
  }
};

using testing::CliRun;
using testing::doctor;
using testing::doctor_json;
using testing::ids;
using testing::run_cli;
using testing::severity_of;

// The healthy H200 machine of the GPU box, as a sysroot.
void healthy_h200(Sysroot& s) {
  s.driver("580.95.05")
      .user_driver_libs("580.95.05")
      .gpu("0000:18:00.0", "NVIDIA H200")
      .toolkit("/usr/local/cuda-13.0", "13.0.2", true)
      .cudnn9("/usr/local/cuda-13.0/lib64", "9.19.0", 13)
      .cudnn_header("/usr/local/cuda-13.0/include/cudnn_version.h", 9, 19, 0)
      .file("/etc/os-release", "PRETTY_NAME=\"Ubuntu 24.04.3 LTS\"\nNAME=\"Ubuntu\"\n")
      .file("/etc/hostname", "h200-node\n")
      .file("/proc/sys/kernel/osrelease", "6.8.0-84-generic\n")
      .env("PATH=/usr/local/cuda-13.0/bin:/usr/bin:/bin\nCUDA_HOME=/usr/local/cuda-13.0\n");
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Compares with tests/golden/scenarios/NAME (rewrites it with DLENV_UPDATE_GOLDENS=1).
void golden(const std::string& name, std::string actual, const Sysroot& s) {
  std::string root = s.root().string();
  for (size_t p; (p = actual.find(root)) != std::string::npos;)
    actual.replace(p, root.size(), "<ROOT>");
  fs::path path = fs::path(DLENV_SOURCE_DIR) / "tests/golden/scenarios" / name;
  const char* update = std::getenv("DLENV_UPDATE_GOLDENS");
  if (update && std::string(update) == "1") {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(fs::exists(path)) << path << " missing: run with DLENV_UPDATE_GOLDENS=1";
  EXPECT_EQ(read_text(path), actual) << "golden " << name << " differs";
}

std::string without_timing(json j) {
  j.erase("timing_ms");
  return j.dump(2) + "\n";
}

// ---------------------------------------------------------------------------

TEST(Scenario, HealthyH200HasNoErrorsAndMatchesGoldens) {
  Sysroot s;
  healthy_h200(s);
  json j = doctor_json(s);
  for (const auto& f : j["findings"]) EXPECT_NE(f["severity"], "error") << f.dump();
  EXPECT_EQ(j["driver"]["kernel_module_version"]["value"], "580.95.05");
  ASSERT_EQ(j["gpus"].size(), 1u);
  EXPECT_EQ(j["gpus"][0]["name"]["value"], "NVIDIA H200");
  EXPECT_EQ(j["gpus"][0]["compute_capability"]["value"], "9.0");
  ASSERT_EQ(j["toolkits"].size(), 1u);
  EXPECT_EQ(j["toolkits"][0]["version"]["value"], "13.0.2");
  ASSERT_EQ(j["cudnn"].size(), 1u);
  EXPECT_EQ(j["cudnn"][0]["library_version"]["value"], "9.19.0");
  EXPECT_EQ(j["cudnn"][0]["header_version"]["value"], "9.19.0");
  EXPECT_EQ(j["cudnn"][0]["cuda_major"]["value"], 13);
  CliRun text = doctor(s, {"--no-color"});
  EXPECT_EQ(text.code, 0) << text.out;
  golden("healthy-h200.txt", text.out, s);
  golden("healthy-h200.json", without_timing(j), s);
}

TEST(Scenario, EmptyMachineIsACleanNoDriverState) {
  Sysroot s;
  s.file("/etc/os-release", "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n");
  s.file("/sys/bus/pci/devices/0000:00:01.0/vendor", "0x8086\n");
  s.file("/sys/bus/pci/devices/0000:00:01.0/class", "0x030000\n");
  json j = doctor_json(s);
  EXPECT_EQ(ids(j), std::set<std::string>{"no-nvidia-driver"});
  EXPECT_EQ(severity_of(j, "no-nvidia-driver"), "info");
  CliRun r = doctor(s, {"--no-color"});
  EXPECT_EQ(r.code, 0);
  golden("no-driver.txt", r.out, s);
}

TEST(Scenario, GpuOnThePciBusWithoutDriverIsAnError) {
  Sysroot s;
  s.file("/sys/bus/pci/devices/0000:18:00.0/vendor", "0x10de\n");
  s.file("/sys/bus/pci/devices/0000:18:00.0/class", "0x030200\n");
  json j = doctor_json(s);
  EXPECT_TRUE(ids(j).count("no-nvidia-driver"));
  EXPECT_EQ(severity_of(j, "no-nvidia-driver"), "error");
  EXPECT_EQ(doctor(s).code, 1);
}

TEST(Scenario, ModuleNotLoadedButUserSpaceDriverInstalled) {
  Sysroot s;
  s.file("/sys/bus/pci/devices/0000:18:00.0/vendor", "0x10de\n");
  s.file("/sys/bus/pci/devices/0000:18:00.0/class", "0x030200\n");
  s.user_driver_libs("580.95.05");
  s.file("/etc/ld.so.conf", "");
  json j = doctor_json(s);
  EXPECT_TRUE(ids(j).count("driver-module-not-built-for-kernel")) << j["findings"].dump(2);
}

TEST(Scenario, NvmlDriverLibraryMismatchAfterUpgrade) {
  Sysroot s;
  s.driver("535.54.03").user_driver_libs("550.54.15").gpu("0000:18:00.0", "NVIDIA A100-SXM4-80GB");
  s.env("LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu\n");
  json j = doctor_json(s);
  EXPECT_TRUE(ids(j).count("nvml-driver-library-mismatch")) << j["findings"].dump(2);
  EXPECT_EQ(severity_of(j, "nvml-driver-library-mismatch"), "error");
  CliRun r = doctor(s, {"--no-color"});
  EXPECT_EQ(r.code, 1);
  golden("nvml-mismatch.txt", r.out, s);
}

TEST(Scenario, ForwardCompatLibcudaIsNotAMismatch) {
  Sysroot s;
  s.driver("580.159.04").user_driver_libs("580.159.04").gpu("0000:18:00.0", "NVIDIA H200");
  s.file("/usr/local/cuda/compat/libcuda.so.580.95.05");
  s.link("/usr/local/cuda/compat/libcuda.so.1", "libcuda.so.580.95.05");
  s.env("LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu\n");
  json j = doctor_json(s);
  EXPECT_FALSE(ids(j).count("nvml-driver-library-mismatch")) << j["findings"].dump(2);
}

TEST(Scenario, NouveauOwnsTheGpu) {
  Sysroot s;
  s.file("/proc/modules", "nouveau 2813952 1 - Live 0x0000000000000000\n");
  s.file("/sys/bus/pci/devices/0000:01:00.0/vendor", "0x10de\n");
  s.file("/sys/bus/pci/devices/0000:01:00.0/class", "0x030000\n");
  s.link("/sys/bus/pci/devices/0000:01:00.0/driver", "../../../bus/pci/drivers/nouveau");
  s.file("/sys/bus/pci/drivers/nouveau/.keep");
  json j = doctor_json(s);
  EXPECT_TRUE(ids(j).count("nouveau-or-nova-owns-gpu")) << j["findings"].dump(2);
  EXPECT_EQ(severity_of(j, "nouveau-or-nova-owns-gpu"), "error");
}

TEST(Scenario, ToolkitNewerThanTheDriverSupports) {
  Sysroot s;
  s.driver("470.82.01")
      .gpu("0000:18:00.0", "Tesla V100-SXM2-16GB")
      .toolkit("/usr/local/cuda-12.4", "12.4.1", true);
  json j = doctor_json(s);
  EXPECT_TRUE(ids(j).count("cuda-driver-insufficient")) << j["findings"].dump(2);
  EXPECT_EQ(severity_of(j, "cuda-driver-insufficient"), "error");
}

TEST(Scenario, MinorVersionCompatibilityIsOnlyAWarning) {
  Sysroot s;
  s.driver("535.104.05")
      .gpu("0000:18:00.0", "NVIDIA A100-SXM4-80GB")
      .toolkit("/usr/local/cuda-12.4", "12.4.1", true);
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "cuda-driver-insufficient"), "warning") << j["findings"].dump(2);
}

TEST(Scenario, StubLibcudaOnTheSearchPath) {
  Sysroot s;
  s.driver("580.95.05").user_driver_libs("580.95.05").gpu("0000:18:00.0", "NVIDIA H200");
  s.toolkit("/usr/local/cuda-13.0", "13.0.2", true);
  // The stub as the toolkit ships it (an ELF named libcuda.so), and the libcuda.so.1 link
  // that guides suggest "fixing" a missing libcuda with: it wins over the driver's.
  testbuild::ElfSpec stub;
  stub.soname = "libcuda.so.1";
  const auto bytes = testbuild::build_elf(stub).bytes;
  s.file("/usr/local/cuda-13.0/lib64/stubs/libcuda.so", std::string(bytes.begin(), bytes.end()));
  s.link("/usr/local/cuda-13.0/lib64/stubs/libcuda.so.1", "libcuda.so");
  s.env("LD_LIBRARY_PATH=/usr/local/cuda/lib64/stubs:/usr/local/cuda/lib64\n");
  json j = doctor_json(s);
  EXPECT_TRUE(ids(j).count("libcuda-stub-loaded")) << j["findings"].dump(2);
  EXPECT_FALSE(ids(j).count("library-file-corrupt")) << j["findings"].dump(2);
}

TEST(Scenario, StubDirectoryInLdSoConf) {
  Sysroot s;
  s.driver("580.95.05").gpu("0000:18:00.0", "NVIDIA H200");
  s.file("/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
  s.file("/etc/ld.so.conf.d/cuda.conf", "/usr/local/cuda/lib64\n/usr/local/cuda/lib64/stubs\n");
  json j = doctor_json(s);
  EXPECT_TRUE(ids(j).count("libcuda-stub-loaded")) << j["findings"].dump(2);
}

TEST(Scenario, CudaVisibleDevicesHidesEveryGpu) {
  Sysroot s;
  s.driver("580.95.05").gpu("0000:18:00.0", "NVIDIA H200").env("CUDA_VISIBLE_DEVICES=-1\n");
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "cuda-visible-devices-hides-gpu"), "error") << j["findings"].dump(2);
  EXPECT_EQ(doctor(s).code, 1);
}

TEST(Scenario, CudaVisibleDevicesHidesSomeGpus) {
  Sysroot s;
  s.driver("580.95.05").gpu("0000:18:00.0", "NVIDIA H200", 0).gpu("0000:2a:00.0", "NVIDIA H200", 1);
  s.env("CUDA_VISIBLE_DEVICES=1\n");
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "cuda-visible-devices-hides-gpu"), "info") << j["findings"].dump(2);
  EXPECT_FALSE(j["gpus"][0]["visible"].get<bool>());
  EXPECT_TRUE(j["gpus"][1]["visible"].get<bool>());
}

TEST(Scenario, MissingUvmNode) {
  Sysroot s;
  s.driver("580.95.05", /*uvm=*/false).gpu("0000:18:00.0", "NVIDIA H200");
  json j = doctor_json(s);
  EXPECT_TRUE(ids(j).count("cuda-unknown-error-uvm")) << j["findings"].dump(2);
}

TEST(Scenario, CudnnHeaderDoesNotMatchLibrary) {
  Sysroot s;
  healthy_h200(s);
  s.cudnn_header("/usr/local/cuda-13.0/include/cudnn_version.h", 9, 1, 0);
  json j = doctor_json(s);
  EXPECT_TRUE(ids(j).count("cudnn-header-library-mismatch")) << j["findings"].dump(2);
}

TEST(Scenario, CudnnForCuda12InsideACuda13Toolkit) {
  Sysroot s;
  healthy_h200(s);
  fs::remove_all(s.at("/usr/local/cuda-13.0/lib64"));
  s.toolkit("/usr/local/cuda-13.0", "13.0.2");
  s.cudnn9("/usr/local/cuda-13.0/lib64", "9.19.0", 12);
  json j = doctor_json(s);
  EXPECT_TRUE(ids(j).count("cudnn-toolkit-cuda-major-mismatch")) << j["findings"].dump(2);
  EXPECT_EQ(j["cudnn"][0]["cuda_major"]["value"], 12);
}

TEST(Scenario, Cudnn8LinkedAgainstCublas11InsideCuda12) {
  Sysroot s;
  s.driver("550.54.15").gpu("0000:18:00.0", "NVIDIA A100-SXM4-80GB");
  s.toolkit("/usr/local/cuda-12.4", "12.4.1", true);
  const std::string lib = "/usr/local/cuda-12.4/lib64";
  s.shared_lib("/opt/fake/libcublas.so.11", "libcublas.so.11");
  s.shared_lib("/opt/fake/libcublasLt.so.11", "libcublasLt.so.11");
  for (std::string sub :
       {"", "_ops_infer", "_ops_train", "_cnn_infer", "_cnn_train", "_adv_infer", "_adv_train"}) {
    std::vector<std::string> needed;
    if (sub == "_ops_infer") needed = {"/opt/fake/libcublas.so.11", "/opt/fake/libcublasLt.so.11"};
    s.shared_lib(lib + "/libcudnn" + sub + ".so.8.9.7", "libcudnn" + sub + ".so.8", needed);
    s.link(lib + "/libcudnn" + sub + ".so.8", "libcudnn" + sub + ".so.8.9.7");
  }
  s.cudnn_header("/usr/local/cuda-12.4/include/cudnn_version.h", 8, 9, 7);
  json j = doctor_json(s);
  EXPECT_TRUE(ids(j).count("cudnn-toolkit-cuda-major-mismatch")) << j["findings"].dump(2);
  EXPECT_EQ(j["cudnn"][0]["cuda_major"]["value"], 11);
}

TEST(Scenario, IncompleteCudnn) {
  Sysroot s;
  healthy_h200(s);
  fs::remove_all(s.at("/usr/local/cuda-13.0/lib64"));
  s.toolkit("/usr/local/cuda-13.0", "13.0.2");
  s.cudnn9("/usr/local/cuda-13.0/lib64", "9.19.0", 13,
           {"libcudnn_cnn.so.9", "libcudnn_engines_precompiled.so.9"});
  json j = doctor_json(s);
  EXPECT_TRUE(ids(j).count("cudnn-sublibrary-missing")) << j["findings"].dump(2);
  auto missing = j["cudnn"][0]["sublibraries_missing"].dump();
  EXPECT_NE(missing.find("libcudnn_cnn.so.9"), std::string::npos) << missing;
}

TEST(Scenario, MixedCudnnVersionsInOneDirectory) {
  Sysroot s;
  healthy_h200(s);
  const std::string lib = "/usr/local/cuda-13.0/lib64";
  fs::remove(s.at(lib + "/libcudnn_ops.so.9"));
  fs::remove(s.at(lib + "/libcudnn_ops.so.9.19.0"));
  s.shared_lib(lib + "/libcudnn_ops.so.9.1.0", "libcudnn_ops.so.9");
  s.link(lib + "/libcudnn_ops.so.9", "libcudnn_ops.so.9.1.0");
  json j = doctor_json(s);
  EXPECT_TRUE(ids(j).count("cudnn-mixed-versions")) << j["findings"].dump(2);
}

TEST(Scenario, SeveralToolkitsSelectedDifferently) {
  Sysroot s;
  s.driver("580.95.05").gpu("0000:18:00.0", "NVIDIA H200");
  s.toolkit("/usr/local/cuda-12.4", "12.4.1");
  s.toolkit("/usr/local/cuda-13.0", "13.0.2", true);
  s.env(
      "PATH=/usr/local/cuda-12.4/bin:/usr/bin\nCUDA_HOME=/usr/local/cuda-13.0\n"
      "LD_LIBRARY_PATH=/usr/local/cuda-13.0/lib64\n");
  json j = doctor_json(s);
  EXPECT_TRUE(ids(j).count("cuda-toolkits-disagree")) << j["findings"].dump(2);
  EXPECT_EQ(j["toolkits"].size(), 2u);
}

TEST(Scenario, NvccAndDriverCudaVersionsDifferIsInfo) {
  Sysroot s;
  s.driver("580.95.05").gpu("0000:18:00.0", "NVIDIA H200");
  s.toolkit("/usr/local/cuda-12.4", "12.4.1", true);
  s.env("PATH=/usr/local/cuda-12.4/bin:/usr/bin\n");
  json j = doctor_json(s);
  EXPECT_EQ(severity_of(j, "nvcc-vs-nvidia-smi-version-confusion"), "info")
      << j["findings"].dump(2);
}

TEST(Scenario, GpuNewerThanEveryToolkit) {
  Sysroot s;
  s.driver("580.95.05").gpu("0000:01:00.0", "NVIDIA GeForce RTX 5090");
  s.toolkit("/usr/local/cuda-12.4", "12.4.1", true);
  json j = doctor_json(s);
  EXPECT_TRUE(ids(j).count("nvcc-unsupported-gpu-arch")) << j["findings"].dump(2);
}

TEST(Scenario, NothingOfTheHostLeaksIntoARootedReport) {
  Sysroot s;
  s.file("/etc/os-release", "PRETTY_NAME=\"Test OS\"\n");
  CliRun r = doctor(s, {"--json"});
  json j = json::parse(r.out);
  EXPECT_EQ(j["host"]["distro"]["value"], "Test OS");
  EXPECT_TRUE(j["toolkits"].empty()) << j["toolkits"].dump();
  EXPECT_TRUE(j["cudnn"].empty()) << j["cudnn"].dump();
  EXPECT_TRUE(j["env"]["vars"].empty()) << j["env"].dump();
  EXPECT_EQ(j["driver"]["nvml_driver_version"]["status"], "skipped");
}

TEST(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(run_cli({"doctor", "--no-such-flag"}).code, 2);
  EXPECT_EQ(run_cli({"doctor", "--root", "/nonexistent/root/dir"}).code, 2);
  EXPECT_EQ(run_cli({"doctor", "--root", "/", "--os", "beos"}).code, 2);
  EXPECT_EQ(run_cli({"doctor", "--env-file", "/nonexistent/env"}).code, 2);
  EXPECT_EQ(run_cli({"explain", "no-such-finding"}).code, 2);
  CliRun r = run_cli({"doctor", "--kb", "/nonexistent/kb"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("/nonexistent/kb"), std::string::npos) << r.err;
}

TEST(Cli, ExplainPrintsTheCatalogEntry) {
  CliRun r = run_cli({"explain", "cudnn-header-library-mismatch"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("Fix:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("checked by dlenv doctor: yes"), std::string::npos) << r.out;
  CliRun own = run_cli({"explain", "cudnn-mixed-versions"});
  EXPECT_EQ(own.code, 0);
  EXPECT_NE(own.out.find("Cause:"), std::string::npos);
}

TEST(Cli, HelpAndVersion) {
  CliRun h = run_cli({"--help"});
  EXPECT_EQ(h.code, 0);
  EXPECT_NE(h.out.find("doctor"), std::string::npos);
  CliRun v = run_cli({"--version"});
  EXPECT_EQ(v.code, 0);
  // dlenv X.Y.Z, the commit, the knowledge base's newest releases, what the binary needs.
  EXPECT_TRUE(std::regex_search(v.out, std::regex("^dlenv [0-9]+\\.[0-9]+\\.[0-9]+\n"))) << v.out;
  EXPECT_TRUE(
      std::regex_search(v.out, std::regex("\ncommit: +([0-9a-f]{12}(-modified)?|unknown)\n")))
      << v.out;
  EXPECT_TRUE(std::regex_search(
      v.out,
      std::regex(
          "\nknowledge base: newest CUDA 1[3-9][.0-9]*, cuDNN 9[.0-9]+ \\(kb [0-9a-f]{12}\\)\n")))
      << v.out;
  EXPECT_TRUE(std::regex_search(v.out, std::regex("\nruns on: +Linux x86-64, glibc >= 2\\.[0-9]+")))
      << v.out;
}

TEST(Docs, FindingsMarkdownIsUpToDate) {
  CliRun r = run_cli({"explain", "--all", "--markdown"});
  ASSERT_EQ(r.code, 0);
  fs::path doc = fs::path(DLENV_SOURCE_DIR) / "docs/findings.md";
  const char* update = std::getenv("DLENV_UPDATE_GOLDENS");
  if (update && std::string(update) == "1") std::ofstream(doc, std::ios::binary) << r.out;
  EXPECT_EQ(read_text(doc), r.out) << "docs/findings.md is stale: regenerate with `dlenv explain "
                                      "--all --markdown > docs/findings.md`";
}

}  // namespace
}  // namespace dlenv
