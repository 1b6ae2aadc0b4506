// Windows driver facts from files: nvcuda.dll (the CUDA driver, System32) and nvml.dll
// (System32, or NVSMI on older drivers) with their version resources. The driver version
// is encoded in the file version (31.0.15.2849 = 528.49), so it is known under --root
// and when NVML fails. GPU names come from the display-adapter class keys of the registry.
#include "probe/windows_probes.h"
#include "util/strings.h"

namespace dlenv {

void probe_windows_driver(const ProbeContext& ctx, WindowsFacts& win, DriverFacts& driver,
                          std::vector<GpuFacts>& gpus) {
  const FileSystem& fs = ctx.fs;
  win.system32 = win_system32(ctx);
  if (auto p = win_child(fs, win.system32, "nvcuda.dll")) {
    win.nvcuda.push_back(win_read_file(fs, *p, "System32"));
  }
  if (auto p = win_child(fs, win.system32, "nvml.dll")) {
    win.nvml.push_back(win_read_file(fs, *p, "System32"));
  }
  std::string nvsmi = path_join(win_program_files(ctx), "NVIDIA Corporation/NVSMI");
  if (auto dir = win_find(fs, nvsmi)) {
    if (auto p = win_child(fs, *dir, "nvml.dll")) {
      win.nvml.push_back(win_read_file(fs, *p, "NVSMI"));
    }
  }
  // The driver version: nvcuda.dll first (what CUDA programs load), else nvml.dll.
  for (const auto* list : {&win.nvcuda, &win.nvml}) {
    for (const auto& f : *list) {
      if (!f.version) continue;
      if (auto v = nvidia_driver_from_file_version(*f.version)) {
        win.driver_version = Fact<std::string>::known(
            *v, f.path + " file version " + *f.version + " (last five digits)");
        break;
      }
    }
    if (win.driver_version) break;
  }
  if (!win.driver_version) {
    std::string where = path_join(win.system32, "nvcuda.dll");
    if (win.nvcuda.empty() && win.nvml.empty()) {
      win.driver_version = Fact<std::string>::unknown(
          FactStatus::not_found, "no nvcuda.dll or nvml.dll: no NVIDIA driver installed", where);
    } else {
      win.driver_version = Fact<std::string>::unknown(
          FactStatus::error, "the driver DLLs have no NVIDIA-style file version", where);
    }
  }
  driver.windows_dll_version = win.driver_version;

  // Display adapters: HKLM\SYSTEM\CurrentControlSet\Control\Class\{4d36e968-...}\NNNN.
  if (ctx.registry) {
    static const std::string kClass =
        "SYSTEM\\CurrentControlSet\\Control\\Class\\{4d36e968-e325-11ce-bfc1-08002be10318}\\";
    for (int i = 0; i < 16; ++i) {
      char num[8];
      std::snprintf(num, sizeof num, "%04d", i);
      std::string key = kClass + num;
      auto desc = ctx.registry(RegistryHive::local_machine, key, "DriverDesc");
      if (!desc) continue;
      auto provider = ctx.registry(RegistryHive::local_machine, key, "ProviderName");
      bool nvidia = contains(to_lower(*desc), "nvidia") ||
                    (provider && contains(to_lower(*provider), "nvidia"));
      if (!nvidia) continue;
      win.registry_gpus.push_back(*desc);
      GpuFacts g;
      g.index = static_cast<int>(gpus.size());
      std::string src = "HKLM\\" + key + " DriverDesc (" + ctx.registry_source + ")";
      g.name = Fact<std::string>::known(*desc, src);
      if (auto info = ctx.kb.gpu_by_name(*desc)) {
        g.compute_capability =
            Fact<Version>::known(info->compute_capability, "knowledge base (by name)");
      } else {
        g.compute_capability =
            Fact<Version>::unknown(FactStatus::not_found, "GPU name not in the knowledge base");
      }
      const char* why = "not in the registry (NVML answers it on the machine itself)";
      g.uuid = Fact<std::string>::unknown(FactStatus::skipped, why);
      g.pci_bus_id = Fact<std::string>::unknown(FactStatus::skipped, why);
      g.memory_total_bytes = Fact<uint64_t>::unknown(FactStatus::skipped, why);
      g.source = src;
      gpus.push_back(std::move(g));
    }
  }
}

}  // namespace dlenv
