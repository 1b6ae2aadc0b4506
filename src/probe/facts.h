// Facts: what the probes observed. Plain data, no behaviour. Every fact is a
// value or a reason, plus the source it came from (file, API call, command).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "probe/fact.h"
#include "probe/loader_facts.h"
#include "probe/python_facts.h"
#include "probe/system_facts.h"
#include "probe/windows_facts.h"
#include "util/version.h"

namespace dlenv {

struct HostFacts {
  Fact<std::string> os;      // "linux" / "windows"
  Fact<std::string> distro;  // PRETTY_NAME from /etc/os-release
  Fact<std::string> kernel;  // /proc/sys/kernel/osrelease
  Fact<std::string> glibc;   // "2.35": libc.so.6's newest GLIBC_2.N version (probe/glibc.cc)
  Fact<std::string> arch;    // "x86_64"
  Fact<std::string> hostname;
  // "AMD EPYC 9654 96-Core Processor": /proc/cpuinfo's model name (Windows:
  // PROCESSOR_IDENTIFIER); logical CPUs: its processor entries (NUMBER_OF_PROCESSORS).
  Fact<std::string> cpu_model;
  Fact<int> cpu_count;
  Fact<std::string> container;  // "docker", "podman", "kubernetes", "none"
  Fact<bool> wsl2;
  std::vector<std::string> container_evidence;
};

struct DeviceNode {
  std::string path;  // "/dev/nvidiactl"
  bool present = false;
  bool readable = false;
  bool writable = false;
  uint32_t mode = 0;
  uint32_t gid = 0;
  std::string source;
};

struct LibraryFile {
  std::string path;       // logical path
  std::string version;    // from the file name suffix, e.g. "580.95.05" ("" when none)
  bool is_stub = false;   // lives in a .../stubs directory
  std::string found_via;  // "ld.so.cache", "LD_LIBRARY_PATH", "dir scan"
};

struct DriverFacts {
  Fact<std::string> kernel_module_version;  // /proc/driver/nvidia/version "NVRM version:" line
  Fact<std::string> sys_module_version;     // /sys/module/nvidia/version
  Fact<bool> open_kernel_module;            // "Open Kernel Module" in /proc text
  Fact<std::string> nvml_driver_version;    // nvmlSystemGetDriverVersion
  Fact<std::string> nvml_library;           // the libnvidia-ml file that was loaded
  Fact<std::string> nvml_error;             // nvmlInit failure text, when it failed
  Fact<int> cuda_driver_version;            // cuDriverGetVersion (13000 = 13.0)
  Fact<std::string> libcuda_library;        // the libcuda file that was loaded
  Fact<std::string> libcuda_error;
  Fact<std::string> nvidia_smi_version;  // fallback: nvidia-smi output
  // Windows: nvcuda.dll's file version as a driver version (31.0.15.2849 -> "528.49").
  Fact<std::string> windows_dll_version;
  std::vector<LibraryFile> libcuda_files;   // every libcuda.so* the loader could find
  std::vector<LibraryFile> libnvml_files;   // every libnvidia-ml.so*
  std::vector<std::string> loaded_modules;  // nvidia-related lines of /proc/modules
  bool nouveau_loaded = false;
  bool nova_loaded = false;
  bool nvidia_loaded = false;
  bool nvidia_uvm_loaded = false;
  std::string modules_source;
  std::vector<DeviceNode> device_nodes;
  // NVIDIA display/3D controllers on the PCI bus (/sys/bus/pci/devices/*/vendor 0x10de),
  // whether or not a driver is bound: "0000:18:00.0 (driver: nvidia)".
  std::vector<std::string> pci_devices;
  std::vector<std::string> pci_drivers;  // bound driver per pci_devices entry ("" when none)
  bool pci_scanned = false;
  std::vector<std::string> ld_conf_stub_dirs;  // ld.so.conf entries ending in /stubs
  // Effective driver version: NVML, else kernel module, else nvidia-smi, else nvcuda.dll.
  std::optional<Version> version() const;
};

struct GpuFacts {
  int index = -1;  // NVML index (or /proc order)
  Fact<std::string> name;
  Fact<std::string> uuid;
  Fact<std::string> pci_bus_id;
  Fact<Version> compute_capability;  // from NVML, else the KB by name
  Fact<uint64_t> memory_total_bytes;
  Fact<bool> persistence_mode;
  Fact<std::string> mig_mode;      // "enabled" / "disabled" / "n/a"
  Fact<std::string> compute_mode;  // "default" / "exclusive-process" / "prohibited"
  // Windows driver model (nvmlDeviceGetDriverModel): "WDDM", "TCC", "MCDM"; "n/a" where
  // NVML does not support the query (Linux).
  Fact<std::string> driver_model;
  bool visible = true;  // not hidden by CUDA_VISIBLE_DEVICES
  std::string visibility_reason;
  std::string source;
};

struct ToolkitFacts {
  std::string root;       // logical path, e.g. "/usr/local/cuda-12.4"
  std::string real_root;  // symlinks resolved
  Fact<Version> version;  // full version (version.json cuda.version, else version.txt, else cuda.h)
  Fact<std::string> nvcc;               // path to nvcc inside the toolkit
  Fact<Version> nvcc_version;           // from `nvcc --version` (live) or the nvcc dist-info
  std::vector<std::string> found_via;   // "/usr/local/cuda-*", "CUDA_HOME", "PATH (nvcc)", ...
  bool pip_assembled = false;           // built from NVIDIA's pip wheels (dist-info dir)
  std::vector<std::string> lib_dirs;    // logical dirs holding its libraries
  bool is_default_link = false;         // /usr/local/cuda points here
  bool active_path = false;             // its bin/ is the first nvcc on PATH
  bool active_ld_library_path = false;  // its lib dir is on LD_LIBRARY_PATH
  bool active_cuda_home = false;        // CUDA_HOME/CUDA_PATH names it
  bool in_ld_cache = false;             // ld.so.cache resolves libcudart from here
  Fact<std::string> cudart_library;     // libcudart.so.N inside the toolkit
};

struct CudnnCopy {
  std::string dir;                // directory holding the main library (logical)
  std::string library;            // path of libcudnn.so.N (or cudnn64_N.dll)
  Fact<Version> library_version;  // from the file name (libcudnn.so.9.1.0) or dist-info
  Fact<Version> header_version;   // cudnn_version.h / cudnn.h macros
  std::string header_path;
  Fact<Version> live_version;  // cudnnGetVersion() when loaded live
  Fact<int> cuda_major;        // the CUDA major it was built for
  int major = 0;               // cuDNN major (8, 9)
  std::vector<std::string>
      found_via;             // "toolkit /usr/local/cuda-13.0", "ld.so.cache", "pip wheel", ...
  std::string toolkit_root;  // when it sits inside a toolkit
  std::string python_site;   // when it is a pip wheel copy
  std::vector<std::string> sublibraries_present;
  std::vector<std::string> sublibraries_missing;
  // Other versions of cuDNN libraries in the same directory (file name -> version)
  std::map<std::string, std::string> mixed_versions;
};

struct EnvFacts {
  std::map<std::string, std::string> vars;  // the relevant variables that are set
  std::vector<std::string> path;
  std::vector<std::string> ld_library_path;
  std::string source;  // "process environment" or "--env-file FILE"
};

struct ProbeTiming {
  std::map<std::string, double> ms;  // probe name -> wall ms
};

// A change dlenv began in a toolkit (cudnn install/uninstall) and did not finish:
// its journal <toolkit>/.dlenv/journal is still there (docs/install-transactions.md).
// The journal is read by actions/transaction.h, beside its writer; the cli fills these
// in for doctor.
struct InterruptedChange {
  std::string toolkit;          // real path, as shown
  std::string journal;          // as shown
  std::string description;      // "cudnn-install of cuDNN 9.1.0.70 by process 1234"
  std::string recover_command;  // "dlenv cudnn recover --toolkit /usr/local/cuda-12.4"
};

// A live probe's child process that crashed, hung, ended early or answered garbage while
// loading a library, or the pre-check that refused the library before it was loaded
// (probe/live_isolation.h).
// `probe` of a broken file found on LD_LIBRARY_PATH by the ELF pre-check alone (no load).
inline constexpr const char* kLdLibraryPathCheck = "LD_LIBRARY_PATH";

struct LiveProbeFailure {
  std::string probe;    // "NVML", "libcuda", "cuDNN", "load", or kLdLibraryPathCheck
  std::string library;  // what it was loading: a name or a path
  std::string path;     // the file (a name: the file the loader model picks); may be empty
  // "crashed the loader with SIGBUS", "did not answer within 5 s", "ended with exit status 7",
  // "answered garbage (...)"; empty when the pre-check refused the file before any load.
  std::string failure;
  // The ELF/PE pre-check's finding on `problem_path` (the file or one it needs): "the file is
  // truncated (4096 of 81920 bytes: ...)". Empty when the files look sound.
  std::string file_problem;
  std::string problem_path;
};

struct Facts {
  std::string tool_version;
  bool rooted = false;
  std::string root;
  HostFacts host;
  DriverFacts driver;
  Fact<int> gpu_count;  // NVML device count (or /proc count under --root)
  std::vector<GpuFacts> gpus;
  std::vector<ToolkitFacts> toolkits;
  std::vector<CudnnCopy> cudnn;
  EnvFacts env;
  std::vector<PythonEnv> python;  // one per environment found
  SystemFacts system;  // WSL, container, Docker host, kernel, host compiler (probe/system.cc)
  std::optional<WindowsFacts> windows;  // only for --os windows (probe/windows_*.cc)
  LoaderFacts loader;                   // what the loader models resolve (probe/loader_facts.cc)
  std::vector<InterruptedChange> interrupted_changes;
  std::vector<LiveProbeFailure> live_failures;  // live probes that failed in their child
  ProbeTiming timing;
};

}  // namespace dlenv
