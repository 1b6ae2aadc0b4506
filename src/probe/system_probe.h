// Probes for SystemFacts (probe/system_facts.h): WSL, containers, the Docker host,
// the host compiler (probe/system.cc) and the kernel: Secure Boot, module
// signatures, DKMS, kernel log (probe/kernel_log.cc). Linux only; file reads
// through ctx.fs so they work under --root; /dev/kmsg and `gcc -dumpversion`
// only when live.
#pragma once

#include "probe/probe.h"
#include "probe/system_facts.h"

namespace dlenv {

// `facts` holds what the other probes found (host, driver, toolkits, env).
void probe_system(const ProbeContext& ctx, const LoaderConfig& loader, const Facts& facts,
                  SystemFacts& out);
void probe_kernel(const ProbeContext& ctx, const Facts& facts, KernelFacts& out);

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
