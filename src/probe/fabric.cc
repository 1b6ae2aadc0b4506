// NVSwitch systems (HGX / DGX boards) need NVIDIA Fabric Manager, of the driver's
// exact version, running on the host; without it CUDA fails with error 802
// ("system not yet initialized") while nvidia-smi still lists the GPUs. Everything
// here is read through ctx.fs (so it works under --root); `nv-fabricmanager
// --version` runs only live and only when no package records the version.
#include <algorithm>
#include <cctype>
#include <chrono>

#include "platform/process.h"
#include "probe/system_probe.h"
#include "util/strings.h"

namespace dlenv {
namespace {

constexpr const char* kUnit = "nvidia-fabricmanager.service";
// The kernel keeps 15 characters of a process name: "nv-fabricmanager" -> "nv-fabricmanage".
constexpr const char* kCommPrefix = "nv-fabricmanage";

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

void find_nvswitches(const FileSystem& fs, FabricFacts& out) {
  // The directory exists wherever nvidia.ko has NVSwitch support; only entries are switches.
  const std::string proc = "/proc/driver/nvidia-nvswitch/devices";
  if (auto entries = fs.list_dir(proc)) {
    for (const auto& e : *entries) out.nvswitch_evidence.push_back(path_join(proc, e.name));
  }
  if (auto dev = fs.list_dir("/dev")) {
    for (const auto& e : *dev) {
      if (starts_with(e.name, "nvidia-nvswitch") && all_digits(e.name.substr(15))) {
        out.nvswitch_evidence.push_back("/dev/" + e.name);
      }
    }
  }
  // NVSwitch is an NVIDIA PCI function of class 0x0680 (bridge, other).
  if (auto pci = fs.list_dir("/sys/bus/pci/devices")) {
    for (const auto& e : *pci) {
      std::string base = "/sys/bus/pci/devices/" + e.name;
      auto vendor = fs.read_file(base + "/vendor", 64);
      if (!vendor || trim(*vendor) != "0x10de") continue;
      auto cls = fs.read_file(base + "/class", 64);
      if (cls && starts_with(trim(*cls), "0x0680")) {
        out.nvswitch_evidence.push_back(base + " (NVIDIA PCI bridge, class " +
                                        std::string(trim(*cls)) + ")");
      }
    }
  }
}

// The dotted version in `nv-fabricmanager --version` output
// ("Fabric Manager version is : 580.95.05").
std::optional<std::string> version_in(std::string_view text) {
  for (auto line : split_lines(text)) {
    for (const auto& word : split(std::string(line), ' ')) {
      auto v = Version::parse(trim(word));
      if (v && v->parts().size() >= 2 && std::isdigit(static_cast<unsigned char>(word[0]))) {
        return v->str();
      }
    }
  }
  return std::nullopt;
}

void find_process(const FileSystem& fs, FabricFacts& out) {
  auto procs = fs.list_dir("/proc");
  if (!procs) {
    out.running = Fact<bool>::unknown(FactStatus::permission_denied,
                                      "cannot list /proc: " + procs.error().message, "/proc");
    return;
  }
  int seen = 0;
  for (const auto& e : *procs) {
    if (!all_digits(e.name)) continue;
    std::string comm = "/proc/" + e.name + "/comm";
    auto name = fs.read_file(comm, 64);
    if (!name) continue;
    ++seen;
    if (starts_with(trim(*name), kCommPrefix)) {
      out.running = Fact<bool>::known(true, comm + " (pid " + e.name + ")");
      return;
    }
  }
  out.running = Fact<bool>::known(
      false, "/proc/*/comm (" + std::to_string(seen) + " processes, none nv-fabricmanager)");
}

}  // namespace

void probe_fabric(const ProbeContext& ctx, const Facts& facts, FabricFacts& out) {
  const FileSystem& fs = ctx.fs;
  const auto& d = facts.driver;
  auto skip = [&](const std::string& why) {
    out.running = Fact<bool>::unknown(FactStatus::skipped, why, "/proc/*/comm");
    out.version = Fact<std::string>::unknown(FactStatus::skipped, why, kDpkgStatus);
  };
  if (!d.kernel_module_version.ok() && d.pci_devices.empty() &&
      !fs.is_dir("/proc/driver/nvidia-nvswitch")) {
    skip("not read: no NVIDIA driver or GPU");
    out.enabled = Fact<bool>::unknown(FactStatus::skipped, "not read: no NVIDIA driver or GPU");
    return;
  }
  out.checked = true;
  find_nvswitches(fs, out);

  for (const char* p : {"/usr/bin/nv-fabricmanager", "/usr/sbin/nv-fabricmanager",
                        "/usr/local/bin/nv-fabricmanager"}) {
    if (fs.exists(p)) {
      out.binary = p;
      break;
    }
  }
  for (const char* dir :
       {"/etc/systemd/system", "/lib/systemd/system", "/usr/lib/systemd/system"}) {
    std::string unit = path_join(dir, kUnit);
    if (fs.exists(unit)) out.units.push_back(unit);
  }
  std::string wants = std::string("/etc/systemd/system/multi-user.target.wants/") + kUnit;
  if (fs.exists(wants)) {
    out.enabled = Fact<bool>::known(true, wants);
  } else if (!out.units.empty()) {
    out.enabled = Fact<bool>::known(false, wants + " is absent");
  } else {
    out.enabled = Fact<bool>::unknown(FactStatus::not_found, "no unit file", kUnit);
  }

  // The rest costs a walk of /proc and the package database: only where switches are.
  if (out.nvswitch_evidence.empty()) return skip("not read: no NVSwitch on this machine");
  find_process(fs, out);

  auto is_fm = [](std::string_view name) {
    return (name == "nvidia-fabricmanager" || starts_with(name, "nvidia-fabricmanager-") ||
            starts_with(name, "cuda-drivers-fabricmanager")) &&
           !contains(name, "-dev");
  };
  if (auto pkgs = read_dpkg_status(fs, is_fm)) {
    for (const auto& p : *pkgs) {
      if (starts_with(p.name, "cuda-drivers-fabricmanager") && !out.package.empty()) continue;
      out.package = p.name;
      out.version = Fact<std::string>::known(
          dpkg_upstream_version(p.version),
          std::string(kDpkgStatus) + " (" + p.name + " " + p.version + ")");
      if (!starts_with(p.name, "cuda-drivers-fabricmanager")) break;
    }
  }
  if (!out.version.ok() && !out.binary.empty() && ctx.live) {
    ProcessOptions po;
    po.timeout = std::chrono::milliseconds(3000);
    auto r = run_process({fs.host_path(out.binary), "--version"}, po);
    std::string cmd = out.binary + " --version";
    if (r && !r->timed_out) {
      if (auto v = version_in(r->out + "\n" + r->err)) {
        out.version = Fact<std::string>::known(*v, cmd);
      } else {
        out.version =
            Fact<std::string>::unknown(FactStatus::error, "no version in its output", cmd);
      }
    } else {
      out.version =
          Fact<std::string>::unknown(r ? FactStatus::timed_out : FactStatus::error,
                                     r ? std::string("no answer in 3 s") : r.error().message, cmd);
    }
  } else if (!out.version.ok()) {
    out.version = Fact<std::string>::unknown(
        FactStatus::not_found,
        out.binary.empty() ? "no fabric manager package or binary"
                           : "no package records it (the binary is not run under --root)",
        kDpkgStatus);
  }
}

}  // namespace dlenv
