// Driver facts that come from files: the kernel module (/proc, /sys), loaded
// modules, device nodes, and every libcuda / libnvidia-ml file the loader can see.
#include <algorithm>
#include <regex>

#include "probe/probe.h"
#include "util/strings.h"

namespace dlenv {
namespace {

// "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build ..."
std::optional<std::string> version_after_module(const std::string& line) {
  static const std::regex re(R"((\d{2,4}\.\d{1,3}(\.\d{1,3})?))");
  size_t from = line.find("Module");
  if (from == std::string::npos) from = line.find(':');
  if (from == std::string::npos) from = 0;
  std::string rest = line.substr(from);
  // Skip "x86_64" and similar by requiring a dotted number.
  std::smatch m;
  if (std::regex_search(rest, m, re)) return m[1].str();
  return std::nullopt;
}

// "libcuda.so.580.95.05" -> "580.95.05"; "libcuda.so.1" -> "1".
std::string suffix_version(const std::string& file, const std::string& stem) {
  if (!starts_with(file, stem)) return {};
  return file.size() > stem.size() + 1 ? file.substr(stem.size() + 1) : std::string();
}

void add_library_files(const ProbeContext& ctx, const LoaderConfig& loader, const std::string& stem,
                       const std::vector<std::string>& extra_dirs, std::vector<LibraryFile>& out) {
  auto add = [&](const std::string& path, const std::string& via) {
    std::string real = ctx.fs.real_path(path).value_or(path);
    // One entry per real file: libcuda.so -> libcuda.so.1 -> libcuda.so.580.95.05.
    for (auto& existing : out) {
      if (existing.path == path ||
          ctx.fs.real_path(existing.path).value_or(existing.path) == real) {
        return;
      }
    }
    LibraryFile f;
    f.path = path;
    std::string real_name = path_basename(real);
    f.version = suffix_version(real_name, stem);
    f.is_stub = contains(path, "/stubs/") || contains(real, "/stubs/");
    f.found_via = contains(path, "/compat/") && via == "directory scan"
                      ? "forward-compat package (used only when on LD_LIBRARY_PATH)"
                      : via;
    out.push_back(std::move(f));
  };
  if (loader.cache) {
    for (const auto& e : loader.cache->entries) {
      if (starts_with(e.soname, stem) && ctx.fs.exists(e.path)) add(e.path, "ld.so.cache");
    }
  }
  auto scan = [&](const std::string& dir, const std::string& via) {
    auto entries = ctx.fs.list_dir(dir);
    if (!entries) return;
    for (const auto& e : *entries) {
      if (e.name == stem || starts_with(e.name, stem + ".")) add(path_join(dir, e.name), via);
    }
  };
  for (const auto& d : loader.ld_library_path) scan(d, "LD_LIBRARY_PATH");
  for (const auto& d : extra_dirs) scan(d, "directory scan");
}

}  // namespace

void probe_driver_files(const ProbeContext& ctx, const LoaderConfig& loader, DriverFacts& d) {
  const FileSystem& fs = ctx.fs;
  const char* proc_version = "/proc/driver/nvidia/version";
  if (auto text = fs.read_file(proc_version)) {
    for (const auto& line : split_lines(*text)) {
      if (!starts_with(line, "NVRM version:")) continue;
      if (auto v = version_after_module(line)) {
        d.kernel_module_version = Fact<std::string>::known(*v, proc_version);
      }
      d.open_kernel_module = Fact<bool>::known(contains(line, "Open Kernel Module"), proc_version);
    }
    if (!d.kernel_module_version) {
      d.kernel_module_version =
          Fact<std::string>::unknown(FactStatus::error, "no 'NVRM version:' line", proc_version);
    }
  } else {
    d.kernel_module_version = Fact<std::string>::unknown(
        FactStatus::not_found,
        "the nvidia kernel module is not loaded (no " + std::string(proc_version) + ")",
        proc_version);
  }
  const char* sys_version = "/sys/module/nvidia/version";
  if (auto text = fs.read_file(sys_version)) {
    d.sys_module_version = Fact<std::string>::known(std::string(trim(*text)), sys_version);
  } else {
    d.sys_module_version =
        Fact<std::string>::unknown(FactStatus::not_found, "not present", sys_version);
  }

  d.modules_source = "/proc/modules";
  if (auto mods = fs.read_file("/proc/modules")) {
    for (const auto& line : split_lines(*mods)) {
      std::string name = line.substr(0, line.find(' '));
      if (name == "nouveau") d.nouveau_loaded = true;
      if (name == "nova_core" || name == "nova_drm" || name == "nova") d.nova_loaded = true;
      if (name == "nvidia") d.nvidia_loaded = true;
      if (name == "nvidia_uvm") d.nvidia_uvm_loaded = true;
      if (starts_with(name, "nvidia") || name == "nouveau" || starts_with(name, "nova")) {
        d.loaded_modules.push_back(name);
      }
    }
  } else {
    d.modules_source = "/proc/modules (unreadable)";
    // /sys/module is a second source for the module list.
    d.nouveau_loaded = fs.exists("/sys/module/nouveau");
    d.nova_loaded = fs.exists("/sys/module/nova_core");
    d.nvidia_loaded = fs.exists("/sys/module/nvidia");
    d.nvidia_uvm_loaded = fs.exists("/sys/module/nvidia_uvm");
  }

  // Device nodes. Under --root these may be plain files: presence is what counts.
  std::vector<std::string> nodes = {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
                                    "/dev/nvidia-modeset"};
  if (auto dev = fs.list_dir("/dev")) {
    for (const auto& e : *dev) {
      if (starts_with(e.name, "nvidia") && e.name.size() > 6 &&
          std::all_of(e.name.begin() + 6, e.name.end(),
                      [](char c) { return c >= '0' && c <= '9'; })) {
        nodes.push_back("/dev/" + e.name);
      }
    }
  }
  for (const auto& n : nodes) {
    DeviceNode node;
    node.path = n;
    node.source = n;
    if (auto st = fs.stat(n)) {
      node.present = true;
      node.mode = st->mode;
      node.gid = st->gid;
      node.readable = fs.can_read(n);
      node.writable = fs.can_write(n);
    }
    d.device_nodes.push_back(node);
  }

  // PCI: NVIDIA display (0x03xxxx) controllers, and the driver bound to each.
  if (auto pci = fs.list_dir("/sys/bus/pci/devices")) {
    d.pci_scanned = true;
    for (const auto& e : *pci) {
      std::string base = "/sys/bus/pci/devices/" + e.name;
      auto vendor = fs.read_file(base + "/vendor");
      auto cls = fs.read_file(base + "/class");
      if (!vendor || trim(*vendor) != "0x10de" || !cls || !starts_with(trim(*cls), "0x03"))
        continue;
      d.pci_devices.push_back(e.name);
      std::string drv;
      if (auto link = fs.read_link(base + "/driver")) drv = path_basename(*link);
      d.pci_drivers.push_back(drv);
    }
  }
  for (const auto& dir : loader.conf_dirs) {
    if (ends_with(dir, "/stubs") || ends_with(dir, "/stubs/")) d.ld_conf_stub_dirs.push_back(dir);
  }

  std::vector<std::string> dirs = {
      "/usr/lib/x86_64-linux-gnu",  "/usr/lib64",       "/usr/lib",
      "/usr/lib/aarch64-linux-gnu", "/usr/lib/wsl/lib", "/usr/local/cuda/compat"};
  add_library_files(ctx, loader, "libcuda.so", dirs, d.libcuda_files);
  add_library_files(ctx, loader, "libnvidia-ml.so", dirs, d.libnvml_files);
}

std::vector<GpuFacts> probe_gpus_from_proc(const ProbeContext& ctx) {
  std::vector<GpuFacts> gpus;
  const std::string base = "/proc/driver/nvidia/gpus";
  auto entries = ctx.fs.list_dir(base);
  if (!entries) return gpus;
  for (const auto& e : *entries) {
    std::string info_path = base + "/" + e.name + "/information";
    auto text = ctx.fs.read_file(info_path);
    if (!text) continue;
    GpuFacts g;
    g.source = info_path;
    int minor = -1;
    for (const auto& line : split_lines(*text)) {
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string key(trim(std::string_view(line).substr(0, colon)));
      std::string value(trim(std::string_view(line).substr(colon + 1)));
      if (key == "Model") g.name = Fact<std::string>::known(value, info_path);
      if (key == "GPU UUID") g.uuid = Fact<std::string>::known(value, info_path);
      if (key == "Bus Location") g.pci_bus_id = Fact<std::string>::known(value, info_path);
      if (key == "Device Minor") minor = static_cast<int>(parse_int(value).value_or(-1));
    }
    if (!g.pci_bus_id) g.pci_bus_id = Fact<std::string>::known(e.name, base);
    g.index = minor;
    if (g.name) {
      if (auto info = ctx.kb.gpu_by_name(*g.name)) {
        g.compute_capability = Fact<Version>::known(
            info->compute_capability, "knowledge base (by name \"" + info->name + "\")");
      } else {
        g.compute_capability = Fact<Version>::unknown(
            FactStatus::not_found, "GPU name not in the knowledge base", "knowledge base");
      }
    }
    for (auto* f : {&g.memory_total_bytes}) {
      *f = Fact<uint64_t>::unknown(FactStatus::not_supported, "not in /proc (needs NVML)");
    }
    gpus.push_back(std::move(g));
  }
  // Order by PCI bus id (what nvidia-smi and CUDA_DEVICE_ORDER=PCI_BUS_ID use).
  std::sort(gpus.begin(), gpus.end(), [](const GpuFacts& a, const GpuFacts& b) {
    return a.pci_bus_id.value.value_or("") < b.pci_bus_id.value.value_or("");
  });
  for (size_t i = 0; i < gpus.size(); ++i) {
    if (gpus[i].index < 0) gpus[i].index = static_cast<int>(i);
  }
  return gpus;
}

void apply_cuda_visible_devices(const std::optional<std::string>& value,
                                std::vector<GpuFacts>& gpus) {
  if (!value) return;
  for (auto& g : gpus) {
    g.visible = false;
    g.visibility_reason = "not listed in CUDA_VISIBLE_DEVICES=\"" + *value + "\"";
  }
  // CUDA semantics: a comma list of indices, UUIDs (GPU-..., prefix allowed) or MIG ids;
  // parsing stops at the first entry that names no device.
  for (const auto& raw : split(*value, ',', true)) {
    std::string item(trim(raw));
    GpuFacts* match = nullptr;
    if (auto idx = parse_int(item)) {
      for (auto& g : gpus) {
        if (g.index == *idx) match = &g;
      }
    } else if (starts_with(item, "GPU-") || starts_with(item, "MIG-")) {
      for (auto& g : gpus) {
        if (g.uuid && starts_with(*g.uuid, item)) match = &g;
      }
      if (starts_with(item, "MIG-")) break;  // MIG ids: can't map to a GPU here
    }
    if (!match) break;
    match->visible = true;
    match->visibility_reason.clear();
  }
}

}  // namespace dlenv
