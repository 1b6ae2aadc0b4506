// FactsBuilder: Facts for rule tests in a few lines, in memory (no tree, no probes). It starts
// from nothing (no driver, no GPU); `healthy_gpu_machine()` is a working driver 580 + H200.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "probe/facts.h"

namespace dlenv::testing {

class FactsBuilder {
 public:
  // Driver `version` loaded (kernel module and NVML agree), the device nodes read/write.
  FactsBuilder& driver(const std::string& version, int cuda_driver = 13000) {
    f_.driver.kernel_module_version =
        Fact<std::string>::known(version, "/proc/driver/nvidia/version");
    f_.driver.nvml_driver_version = Fact<std::string>::known(version, "NVML");
    f_.driver.cuda_driver_version = Fact<int>::known(cuda_driver, "cuDriverGetVersion");
    f_.driver.nvidia_loaded = f_.driver.nvidia_uvm_loaded = true;
    f_.driver.modules_source = "/proc/modules";
    for (const char* n : {"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm"}) node(n, true);
    return *this;
  }
  FactsBuilder& nvml_version(const std::string& v) {
    f_.driver.nvml_driver_version = Fact<std::string>::known(v, "NVML");
    return *this;
  }
  FactsBuilder& node(const std::string& path, bool accessible, bool present = true) {
    for (auto& n : f_.driver.device_nodes) {
      if (n.path == path) {
        n.present = present;
        n.readable = n.writable = accessible;
        return *this;
      }
    }
    DeviceNode d;
    d.path = path;
    d.present = present;
    d.readable = d.writable = accessible;
    d.mode = accessible ? 0666 : 0660;
    d.source = "/dev";
    f_.driver.device_nodes.push_back(d);
    return *this;
  }
  FactsBuilder& no_device_nodes() {
    f_.driver.device_nodes.clear();
    return *this;
  }
  // An NVIDIA GPU on the PCI bus, bound to `bound_driver` ("" when none).
  FactsBuilder& pci_gpu(const std::string& bound_driver = "nvidia") {
    f_.driver.pci_devices.push_back("0000:0" + std::to_string(f_.driver.pci_devices.size()) +
                                    ":00.0");
    f_.driver.pci_drivers.push_back(bound_driver);
    f_.driver.pci_scanned = true;
    return *this;
  }
  FactsBuilder& libcuda_file(const std::string& path, const std::string& version,
                             const std::string& found_via, bool stub = false) {
    f_.driver.libcuda_files.push_back({path, version, stub, found_via});
    return *this;
  }
  FactsBuilder& nouveau() {
    f_.driver.nouveau_loaded = true;
    f_.driver.modules_source = "/proc/modules";
    return *this;
  }
  FactsBuilder& gpu(const std::string& name, Version cc, const std::string& mode = "default") {
    GpuFacts g;
    g.index = static_cast<int>(f_.gpus.size());
    g.name = Fact<std::string>::known(name, "NVML");
    g.compute_capability = Fact<Version>::known(cc, "NVML");
    g.compute_mode = Fact<std::string>::known(mode, "NVML");
    g.source = "NVML";
    f_.gpus.push_back(g);
    f_.gpu_count = Fact<int>::known(static_cast<int>(f_.gpus.size()), "NVML");
    return *this;
  }
  FactsBuilder& hide_gpus(const std::string& cuda_visible_devices) {
    f_.env.vars["CUDA_VISIBLE_DEVICES"] = cuda_visible_devices;
    for (auto& g : f_.gpus) {
      g.visible = false;
      g.visibility_reason = "not in CUDA_VISIBLE_DEVICES";
    }
    return *this;
  }
  FactsBuilder& env_var(const std::string& name, const std::string& value) {
    f_.env.vars[name] = value;
    return *this;
  }
  FactsBuilder& container(const std::string& kind) {
    f_.host.container = Fact<std::string>::known(kind, "/proc/1/cgroup");
    return *this;
  }
  // A CUDA toolkit at `root`; `on_path`: its nvcc is the first on PATH; `home`: CUDA_HOME.
  FactsBuilder& toolkit(const std::string& root, Version v, bool on_path = false,
                        bool home = false) {
    ToolkitFacts t;
    t.root = t.real_root = root;
    t.version = Fact<Version>::known(v, root + "/version.json");
    t.nvcc = Fact<std::string>::known(root + "/bin/nvcc", root);
    t.lib_dirs = {root + "/lib64"};
    t.active_path = on_path;
    t.active_cuda_home = home;
    if (home) f_.env.vars["CUDA_HOME"] = root;
    f_.toolkits.push_back(t);
    return *this;
  }
  // cuDNN major.minor.patch in `dir` (inside `toolkit_root` when given), header and library.
  FactsBuilder& cudnn(const std::string& dir, Version library, Version header,
                      const std::string& toolkit_root = "", int cuda_major = 0) {
    CudnnCopy k;
    k.dir = dir;
    k.major = library.major();
    k.library = dir + "/libcudnn.so." + std::to_string(k.major);
    k.library_version = Fact<Version>::known(library, k.library);
    k.header_version = Fact<Version>::known(header, dir + "/../include/cudnn_version.h");
    k.header_path = dir + "/../include/cudnn_version.h";
    k.toolkit_root = toolkit_root;
    if (cuda_major) k.cuda_major = Fact<int>::known(cuda_major, k.library);
    f_.cudnn.push_back(k);
    return *this;
  }
  FactsBuilder& cudnn_mixed_file(const std::string& file, const std::string& version) {
    f_.cudnn.back().mixed_versions[file] = version;
    return *this;
  }
  FactsBuilder& interrupted_change(const std::string& toolkit) {
    f_.interrupted_changes.push_back({toolkit, toolkit + "/.dlenv/journal",
                                      "cudnn-install of cuDNN 9.1.0.70 by process 1234",
                                      "dlenv cudnn recover --toolkit " + toolkit});
    return *this;
  }
  FactsBuilder& windows() {
    f_.windows = WindowsFacts{};
    f_.driver.windows_dll_version =
        Fact<std::string>::unknown(FactStatus::not_found, "no nvcuda.dll", "System32");
    return *this;
  }
  // A Python environment at `prefix` (a venv of Python `version`); the methods below add to the
  // newest one.
  FactsBuilder& python_env(const std::string& prefix, const std::string& version = "3.12.3") {
    PythonEnv e;
    e.prefix = prefix;
    e.interpreter = Fact<std::string>::known(prefix + "/bin/python", prefix);
    e.version = Fact<std::string>::known(version, prefix + "/pyvenv.cfg");
    e.bits = Fact<int>::known(64, prefix + "/bin/python");
    e.kind = "venv";
    const std::string mm = version.substr(0, version.rfind('.'));
    e.site_packages = {prefix + "/lib/python" + mm + "/site-packages"};
    f_.python.push_back(e);
    return *this;
  }
  FactsBuilder& package(const std::string& name, const std::string& version) {
    PythonPackage p;
    p.name = name;
    p.version = version;
    p.installer = "pip";
    p.location = f_.python.back().site_packages.front();
    p.source = p.location + "/" + name + "-" + version + ".dist-info/METADATA";
    f_.python.back().packages.push_back(p);
    return *this;
  }
  // A framework as the Python probe reports it: `cuda` "" for a CPU build, `tag` the local label.
  FactsBuilder& framework(const std::string& name, const std::string& package,
                          const std::string& version, const std::string& cuda,
                          const std::string& tag = "") {
    FrameworkFacts fw;
    fw.name = name;
    fw.package = package;
    fw.version = version;
    fw.local_tag = tag;
    const std::string src = f_.python.back().site_packages.front() + "/" + name;
    if (cuda.empty()) {
      fw.cuda = Fact<std::string>::unknown(FactStatus::not_found, "a CPU build", src);
    } else {
      fw.cuda = Fact<std::string>::known(cuda, src);
    }
    fw.cuda_build = Fact<bool>::known(!cuda.empty(), src);
    f_.python.back().frameworks.push_back(fw);
    return package_if_missing(package, version);
  }
  FactsBuilder& framework_cuda_packages(std::vector<std::string> names) {
    f_.python.back().frameworks.back().cuda_packages = std::move(names);
    return *this;
  }
  FactsBuilder& python_bits(int bits) {
    f_.python.back().bits = Fact<int>::known(bits, f_.python.back().prefix);
    return *this;
  }
  // Any other fact, set by hand: .with([](Facts& f) { f.system.wsl.version = 1; }).
  template <class F>
  FactsBuilder& with(F set) {
    set(f_);
    return *this;
  }
  Facts build() const { return f_; }

 private:
  FactsBuilder& package_if_missing(const std::string& name, const std::string& version) {
    for (const auto& p : f_.python.back().packages) {
      if (p.name == name) return *this;
    }
    return package(name, version);
  }
  Facts f_;
};

inline FactsBuilder healthy_gpu_machine() {
  FactsBuilder b;
  b.driver("580.95.05").gpu("NVIDIA H200", Version{9, 0});
  return b;
}

}  // namespace dlenv::testing
