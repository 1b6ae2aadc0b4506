// The report layer's test machine, shared by its test files (report_test.cc, fleet_test.cc,
// prometheus_test.cc).
#pragma once

#include <vector>

#include "probe/facts.h"
#include "rules/finding.h"

namespace dlenv {

// A realistic H200 machine: driver 580.95.05, CUDA 13.0, one GPU, toolkit
// 13.0 at /usr/local/cuda-13.0, cuDNN 9.14.0 (system) and 9.19.0 (pip wheel).
inline Facts h200_facts() {
  Facts f;
  f.tool_version = "0.1.0";

  f.host.os = Fact<std::string>::known("linux", "compile-time");
  f.host.distro = Fact<std::string>::known("Ubuntu 24.04.3 LTS", "/etc/os-release");
  f.host.kernel = Fact<std::string>::known("6.8.0-85-generic", "/proc/sys/kernel/osrelease");
  f.host.arch = Fact<std::string>::known("x86_64", "uname");
  f.host.hostname = Fact<std::string>::known("h200-node-07", "/proc/sys/kernel/hostname");
  f.host.glibc = Fact<std::string>::known("2.39", "/usr/lib/x86_64-linux-gnu/libc.so.6");
  f.host.cpu_model = Fact<std::string>::known("AMD EPYC 9654 96-Core Processor", "/proc/cpuinfo");
  f.host.cpu_count = Fact<int>::known(192, "/proc/cpuinfo");
  f.host.container = Fact<std::string>::known("none", "/proc/1/cgroup");
  f.host.wsl2 = Fact<bool>::known(false, "/proc/sys/kernel/osrelease");

  DriverFacts& d = f.driver;
  d.kernel_module_version = Fact<std::string>::known("580.95.05", "/proc/driver/nvidia/version");
  d.sys_module_version = Fact<std::string>::known("580.95.05", "/sys/module/nvidia/version");
  d.open_kernel_module = Fact<bool>::known(true, "/proc/driver/nvidia/version");
  d.nvml_driver_version = Fact<std::string>::known("580.95.05", "nvmlSystemGetDriverVersion");
  d.nvml_library = Fact<std::string>::known("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
                                            "dlopen(libnvidia-ml.so.1)");
  d.nvml_error = Fact<std::string>::unknown(FactStatus::not_found, "", "nvmlInit_v2");
  d.cuda_driver_version = Fact<int>::known(13000, "cuDriverGetVersion");
  d.libcuda_library =
      Fact<std::string>::known("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "dlopen(libcuda.so.1)");
  d.nvidia_smi_version = Fact<std::string>::unknown(
      FactStatus::skipped, "NVML answered; nvidia-smi not needed", "nvidia-smi");
  d.libcuda_files = {
      {"/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05", "580.95.05", false, "ld.so.cache"},
      {"/usr/local/cuda-13.0/lib64/stubs/libcuda.so", "", true, "dir scan"},
  };
  d.libnvml_files = {
      {"/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.95.05", "580.95.05", false, "ld.so.cache"},
  };
  d.loaded_modules = {"nvidia_uvm 2076672 0 - Live 0x0000000000000000 (OE)",
                      "nvidia 14376960 2 nvidia_uvm, Live 0x0000000000000000 (OE)"};
  d.nvidia_loaded = true;
  d.nvidia_uvm_loaded = true;
  d.modules_source = "/proc/modules";
  d.device_nodes = {
      {"/dev/nvidiactl", true, true, true, 020666, 0, "stat(/dev/nvidiactl)"},
      {"/dev/nvidia0", true, true, true, 020666, 0, "stat(/dev/nvidia0)"},
      {"/dev/nvidia-uvm", false, false, false, 0, 0, "stat(/dev/nvidia-uvm)"},
  };

  f.gpu_count = Fact<int>::known(1, "nvmlDeviceGetCount_v2");
  GpuFacts g;
  g.index = 0;
  g.name = Fact<std::string>::known("NVIDIA H200", "nvmlDeviceGetName");
  g.uuid =
      Fact<std::string>::known("GPU-3f1c2a9e-7b4d-4e21-9c0a-5d8e6f7a1b2c", "nvmlDeviceGetUUID");
  g.pci_bus_id = Fact<std::string>::known("00000000:19:00.0", "nvmlDeviceGetPciInfo_v3");
  g.compute_capability = Fact<Version>::known(Version{9, 0}, "nvmlDeviceGetCudaComputeCapability");
  g.memory_total_bytes = Fact<uint64_t>::known(150754820096ULL, "nvmlDeviceGetMemoryInfo");
  g.persistence_mode = Fact<bool>::known(true, "nvmlDeviceGetPersistenceMode");
  g.mig_mode = Fact<std::string>::known("disabled", "nvmlDeviceGetMigMode");
  g.compute_mode = Fact<std::string>::unknown(
      FactStatus::permission_denied, "NVML_ERROR_NO_PERMISSION", "nvmlDeviceGetComputeMode");
  g.source = "NVML";
  f.gpus.push_back(g);

  ToolkitFacts t;
  t.root = "/usr/local/cuda-13.0";
  t.real_root = "/usr/local/cuda-13.0";
  t.version = Fact<Version>::known(Version{13, 0, 2}, "/usr/local/cuda-13.0/version.json");
  t.nvcc = Fact<std::string>::known("/usr/local/cuda-13.0/bin/nvcc", "file exists");
  t.nvcc_version = Fact<Version>::known(Version{13, 0, 88}, "nvcc --version");
  t.found_via = {"/usr/local/cuda-*", "CUDA_HOME", "PATH (nvcc)"};
  t.lib_dirs = {"/usr/local/cuda-13.0/lib64", "/usr/local/cuda-13.0/targets/x86_64-linux/lib"};
  t.is_default_link = true;
  t.active_path = true;
  t.active_cuda_home = true;
  t.in_ld_cache = false;
  t.cudart_library =
      Fact<std::string>::known("/usr/local/cuda-13.0/lib64/libcudart.so.13", "dir scan");
  f.toolkits.push_back(t);

  CudnnCopy sys;
  sys.dir = "/usr/lib/x86_64-linux-gnu";
  sys.library = "/usr/lib/x86_64-linux-gnu/libcudnn.so.9.14.0";
  sys.library_version = Fact<Version>::known(Version{9, 14, 0}, "file name");
  sys.header_version = Fact<Version>::known(Version{9, 14, 0}, "/usr/include/cudnn_version.h");
  sys.header_path = "/usr/include/cudnn_version.h";
  sys.live_version = Fact<Version>::unknown(FactStatus::skipped, "not loaded (use --live)");
  sys.cuda_major = Fact<int>::known(13, "/usr/lib/x86_64-linux-gnu/libcudnn.so.9.14.0 (NEEDED)");
  sys.major = 9;
  sys.found_via = {"ld.so.cache"};
  sys.sublibraries_present = {"libcudnn_ops.so.9", "libcudnn_cnn.so.9", "libcudnn_adv.so.9",
                              "libcudnn_graph.so.9", "libcudnn_engines_runtime_compiled.so.9"};
  sys.sublibraries_missing = {"libcudnn_engines_precompiled.so.9", "libcudnn_heuristic.so.9"};
  sys.mixed_versions = {{"libcudnn_ops.so.9.13.1", "9.13.1"}};
  f.cudnn.push_back(sys);

  CudnnCopy pip;
  pip.dir = "/home/ana/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib";
  pip.library = "/home/ana/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9";
  pip.library_version = Fact<Version>::known(
      Version{9, 19, 0, 56},
      "/home/ana/.venv/lib/python3.12/site-packages/nvidia_cudnn_cu13-9.19.0.56.dist-info");
  pip.header_version =
      Fact<Version>::unknown(FactStatus::not_found, "the wheel ships no cudnn_version.h");
  pip.live_version = Fact<Version>::unknown(FactStatus::skipped, "not loaded (use --live)");
  pip.cuda_major = Fact<int>::known(13, "wheel name nvidia-cudnn-cu13");
  pip.major = 9;
  pip.found_via = {"pip wheel"};
  pip.python_site = "/home/ana/.venv/lib/python3.12/site-packages";
  f.cudnn.push_back(pip);

  f.env.vars = {{"CUDA_HOME", "/usr/local/cuda-13.0"},
                {"PATH", "/usr/local/cuda-13.0/bin:/usr/local/bin:/usr/bin:/bin"}};
  f.env.path = {"/usr/local/cuda-13.0/bin", "/usr/local/bin", "/usr/bin", "/bin"};
  f.env.source = "process environment";

  f.timing.ms = {{"driver", 0.4}, {"gpus", 15.5}, {"toolkits", 1.25}, {"cudnn", 2.5}};
  return f;
}

inline std::vector<Finding> h200_findings() {
  Finding info;
  info.id = "cudnn-multiple-copies";
  info.severity = Severity::info;
  info.layer = "cudnn";
  info.title = "2 copies of cuDNN 9 are installed";
  info.evidence = {{"cuDNN 9.14.0 in /usr/lib/x86_64-linux-gnu", "ld.so.cache"},
                   {"cuDNN 9.19.0.56 in the pip wheel nvidia-cudnn-cu13",
                    "/home/ana/.venv/lib/python3.12/site-packages"}};

  Finding warning;
  warning.id = "cudnn-sublibrary-missing";
  warning.severity = Severity::warning;
  warning.layer = "cudnn";
  warning.title = "cuDNN 9.14.0 is missing 2 of its sub-libraries";
  warning.evidence = {{"libcudnn_engines_precompiled.so.9 not found", "/usr/lib/x86_64-linux-gnu"},
                      {"libcudnn_heuristic.so.9 not found", "/usr/lib/x86_64-linux-gnu"}};
  warning.fix = {{"Reinstall the complete cuDNN package",
                  "sudo apt-get install --reinstall libcudnn9-cuda-13", "sh"}};
  warning.confirmed = false;

  Finding error;
  error.id = "cudnn-mixed-versions";
  error.severity = Severity::error;
  error.layer = "cudnn";
  error.title = "cuDNN libraries of different versions share one directory";
  error.evidence = {{"libcudnn.so.9.14.0", "/usr/lib/x86_64-linux-gnu"},
                    {"libcudnn_ops.so.9.13.1", "/usr/lib/x86_64-linux-gnu"}};
  error.fix = {{"Remove the stray library left by an older install",
                "sudo rm /usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9.13.1\nsudo ldconfig", "sh"},
               {"Check that only one version is left", "", ""}};

  // Deliberately out of severity order: the renderers sort.
  return {info, warning, error};
}

}  // namespace dlenv
