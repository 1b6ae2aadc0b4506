// Facts about the Linux system around the driver: WSL, containers and the Docker
// host side, the kernel (Secure Boot, module signatures, kernel log), and the host
// compiler nvcc would use. Plain data, filled by probe/system.cc and
// probe/kernel_log.cc; read by rules/wsl_checks.cc, container_checks.cc, kernel_checks.cc.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "probe/fact.h"

namespace dlenv {

// One file of /usr/lib/wsl/lib (or another library directory).
struct FileKind {
  std::string path;
  bool symlink = false;
  std::string target;  // link text when symlink
  uint64_t size = 0;   // of the regular file (stat, links followed)
};

struct WslFacts {
  int version = 0;                // 0 not WSL, 1 WSL1, 2 WSL2
  std::string version_source;     // "/proc/version: ...-microsoft-standard-WSL2"
  bool dxg = false;               // /dev/dxg (the GPU paravirtualisation device)
  bool lib_dir = false;           // /usr/lib/wsl/lib exists
  std::vector<FileKind> libcuda;  // /usr/lib/wsl/lib/libcuda.so*
  bool lib_dir_in_ld_conf = false;
  bool lib_dir_on_ld_library_path = false;
  // Can dlopen("libcuda.so") (unversioned) succeed, and through what.
  bool unversioned_libcuda = false;
  std::string unversioned_libcuda_via;  // "ld.so.cache -> PATH", "LD_LIBRARY_PATH DIR", ...
  std::string unversioned_basis;        // "ld.so.cache" or "ld.so.conf dirs (no cache)"
  // Linux driver libraries outside /usr/lib/wsl/lib (a Linux driver installed inside WSL).
  std::vector<std::string> linux_driver_files;
  // Linux NVIDIA driver packages installed in the distribution (dpkg status).
  std::vector<std::string> linux_driver_packages;
  std::string packages_source;
};

struct ContainerFacts {
  // Image environment (NVIDIA base images set these).
  Fact<std::string> nvidia_require_cuda;  // NVIDIA_REQUIRE_CUDA
  Fact<std::string> cuda_version;         // CUDA_VERSION
  bool disable_require = false;           // NVIDIA_DISABLE_REQUIRE=true|1
  // /dev/shm size (tmpfs size= option of the last /dev/shm mount in /proc/mounts).
  Fact<uint64_t> shm_bytes;
  // Device cgroup (v1) of this process: does it allow the NVIDIA major (195)?
  Fact<bool> devices_allow_nvidia;  // /sys/fs/cgroup/devices/devices.list
};

// The Docker host side: is the NVIDIA Container Toolkit there and wired up?
struct DockerHostFacts {
  bool docker = false;       // dockerd found (/usr/bin/dockerd, /usr/sbin/dockerd, snap)
  std::string docker_path;   // where
  bool docker_snap = false;  // /snap/bin/docker or /snap/docker
  std::vector<std::string> toolkit_files;  // nvidia-ctk, nvidia-container-runtime(-hook), -cli
  bool runtime_hook = false;  // nvidia-container-runtime-hook: what `docker --gpus` needs
  // nvidia-container-cli finds the driver through the ld cache: its libnvidia-ml.so.1 entry.
  Fact<std::string> nvml_in_ld_cache;
  Fact<std::vector<std::string>> daemon_runtimes;  // "runtimes" keys of /etc/docker/daemon.json
  Fact<std::string> default_runtime;               // "default-runtime"
  Fact<std::string>
      cgroup_driver;  // "systemd" / "cgroupfs" (daemon.json exec-opts, else cgroup v2)
  std::vector<std::string> cdi_specs;  // /etc/cdi/nvidia*.yaml, /var/run/cdi/nvidia*.yaml
  // /dev/nvidiaN and /dev/nvidiactl without their /dev/char/195:N link (runc needs them).
  std::vector<std::string> dev_char_missing;
  bool dev_char_checked = false;
};

struct KernelLogLine {
  std::string text;
  std::string source;  // "/dev/kmsg" (this boot) or a log file (any boot)
};

struct KernelFacts {
  Fact<bool> secure_boot;  // efivars SecureBoot-8be4df61-... value byte
  // nvidia.ko files for the running kernel (/lib/modules/$(uname -r)/...): path -> signed?
  // "signed", "unsigned", "unknown (compressed)".
  std::map<std::string, std::string> nvidia_modules;
  std::string modules_dir;
  bool mok_key_present = false;   // a DKMS signing key on disk
  Fact<bool> mok_key_enrolled;    // that key's bytes in MokListRT
  std::vector<std::string> dkms;  // /var/lib/dkms/nvidia/<ver>/<kernel>/... entries
  // Kernel log lines that matter: Xid, "fallen off the bus", key rejections, NVRM errors.
  std::vector<KernelLogLine> log_lines;
  std::vector<std::string> log_sources;     // what was read ("/dev/kmsg: 1234 records", ...)
  std::vector<std::string> log_unreadable;  // "/dev/kmsg: permission denied", ...
};

struct HostCompilerFacts {
  Fact<std::string> compiler;  // the host compiler nvcc would run (NVCC_CCBIN, CUDAHOSTCXX, gcc)
  Fact<int> gcc_major;
  // Per toolkit root: newest GCC major its include/crt/host_config.h accepts.
  std::map<std::string, Fact<int>> toolkit_max_gcc;
};

// NVSwitch systems (HGX/DGX) and NVIDIA Fabric Manager (probe/fabric.cc).
struct FabricFacts {
  // What shows NVSwitches: entries of /proc/driver/nvidia-nvswitch/devices (the directory
  // alone exists wherever the nvswitch module is loaded, e.g. a VM with one GPU passed
  // through), /dev/nvidia-nvswitchN nodes, NVIDIA bridge-class PCI functions (0x0680).
  std::vector<std::string> nvswitch_evidence;
  bool checked = false;            // false: no NVIDIA GPU or driver here, nothing was read
  std::string binary;              // nv-fabricmanager found ("" none)
  std::vector<std::string> units;  // nvidia-fabricmanager.service unit files
  Fact<bool> enabled;              // a *.wants/nvidia-fabricmanager.service link
  Fact<bool> running;              // an nv-fabricmanager process in /proc/*/comm
  std::string package;             // "nvidia-fabricmanager-580" (dpkg), "" none
  Fact<std::string> version;       // "580.95.05": package version, else `--version`
};

// Forward compatibility: the libcuda.so.1 the dynamic loader picks, and the cuda-compat
// copies present (probe/fabric.cc).
struct ForwardCompatFacts {
  Fact<std::string> libcuda;  // the file the loader picks for libcuda.so.1 (logical path)
  std::string rule;           // how it was picked ("LD_LIBRARY_PATH", "ld.so.cache", ...)
  std::string version;        // from its real file name (libcuda.so.590.44.01 -> "590.44.01")
  bool compat = false;        // it lives in a cuda-compat directory (.../compat/)
  std::vector<std::string> compat_copies;  // every compat libcuda.so.* present, with version
};

struct SystemFacts {
  WslFacts wsl;
  ContainerFacts container;
  DockerHostFacts docker;
  KernelFacts kernel;
  HostCompilerFacts host_compiler;
  FabricFacts fabric;
  ForwardCompatFacts forward_compat;
};

}  // namespace dlenv
