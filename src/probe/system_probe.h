// Probes for SystemFacts (probe/system_facts.h): WSL, containers, the Docker host,
// the host compiler (probe/system.cc) and the kernel: Secure Boot, module
// signatures, DKMS, kernel log (probe/kernel_log.cc). Linux only; file reads
// through ctx.fs so they work under --root; /dev/kmsg and `gcc -dumpversion`
// only when live.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "probe/probe.h"
#include "probe/system_facts.h"

namespace dlenv {

// `facts` holds what the other probes found (host, driver, toolkits, env).
// probe_system also runs probe_fabric and probe_forward_compat (probe/fabric.cc,
// probe/forward_compat.cc).
void probe_system(const ProbeContext& ctx, const LoaderConfig& loader, const Facts& facts,
                  SystemFacts& out);
void probe_kernel(const ProbeContext& ctx, const Facts& facts, KernelFacts& out);
// NVSwitches and NVIDIA Fabric Manager (service, process, package version).
void probe_fabric(const ProbeContext& ctx, const Facts& facts, FabricFacts& out);
// The libcuda.so.1 the loader picks (loader model) and the cuda-compat copies present.
void probe_forward_compat(const ProbeContext& ctx, const LoaderConfig& loader,
                          ForwardCompatFacts& out);

// One installed package of the dpkg database.
struct DpkgPackage {
  std::string name;
  std::string version;  // as recorded ("1:580.95.05-0ubuntu1")
};
inline constexpr const char* kDpkgStatus = "/var/lib/dpkg/status";
// The installed packages of /var/lib/dpkg/status whose name `keep` accepts; nullopt
// when the database cannot be read (not Debian/Ubuntu, or no permission).
std::optional<std::vector<DpkgPackage>> read_dpkg_status(
    const FileSystem& fs, const std::function<bool(std::string_view)>& keep);
// "1:580.95.05-0ubuntu1" -> "580.95.05" (epoch and Debian revision dropped).
std::string dpkg_upstream_version(std::string_view version);

// Parses a tmpfs size option value ("65536k", "8g", "1073741824"); nullopt for
// percentages and garbage.
std::optional<uint64_t> parse_tmpfs_size(std::string_view value);
// "#if __GNUC__ > 15" before "unsupported GNU version" in host_config.h -> 15.
std::optional<int> host_config_max_gcc(std::string_view header_text);
// "gcc-13", "x86_64-linux-gnu-g++-12", "/usr/bin/gcc-11" -> the major; nullopt otherwise.
std::optional<int> gcc_major_from_name(std::string_view name);
// The value byte of an efivarfs SecureBoot variable (4 attribute bytes + data),
// or the 1-byte sysfs "data" file.
std::optional<bool> secure_boot_from_efivar(std::string_view bytes);

}  // namespace dlenv
