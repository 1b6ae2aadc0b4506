// Kernel facts: Secure Boot state (efivars), the nvidia.ko files built for the
// running kernel and whether they carry a signature, the DKMS signing key and
// whether it is enrolled (MokListRT), DKMS build state, and the kernel log lines
// that matter (Xid, "fallen off the bus", rejected module keys).
#include <algorithm>

#include "platform/kmsg.h"
#include "probe/system_probe.h"
#include "util/strings.h"

namespace dlenv {
namespace {

constexpr const char* kSecureBootVar =
    "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e0c63e7dcf8c";
constexpr const char* kSecureBootSysfs =
    "/sys/firmware/efi/vars/SecureBoot-8be4df61-93ca-11d2-aa0d-e0c63e7dcf8c/data";
constexpr std::string_view kSigMagic = "~Module signature appended~\n";
constexpr size_t kMaxLogLines = 40;
constexpr size_t kLogTailBytes = 4u << 20;

bool interesting(const std::string& m) {
  return contains(m, "NVRM: Xid") || contains(m, "fallen off the bus") ||
         (contains(m, "nvidia") &&
          (contains(m, "Key was rejected") || contains(m, "module verification failed") ||
           contains(m, "Required key not available"))) ||
         contains(m, "Loading of unsigned module is rejected") ||
         (contains(m, "Lockdown:") && contains(m, "unsigned module"));
}

void keep_line(KernelFacts& k, std::string text, const std::string& source) {
  if (text.size() > 300) text = text.substr(0, 300) + "...";
  k.log_lines.push_back({std::move(text), source});
}

void read_log_file(const FileSystem& fs, const std::string& path, KernelFacts& k) {
  if (!fs.exists(path)) return;
  auto mapped = fs.map_file(path);
  if (!mapped) {
    k.log_unreadable.push_back(mapped.error().message);
    return;
  }
  std::string_view all = (*mapped)->bytes().as_string_view();
  // Only the tail: logs can be gigabytes; the recent lines are what count.
  std::string_view tail = all.size() > kLogTailBytes ? all.substr(all.size() - kLogTailBytes) : all;
  std::vector<std::string> hits;
  for (const auto& line : split_lines(tail)) {
    if (interesting(line)) hits.push_back(line);
  }
  // The newest lines matter most.
  size_t from = hits.size() > kMaxLogLines ? hits.size() - kMaxLogLines : 0;
  for (size_t i = from; i < hits.size(); ++i) keep_line(k, hits[i], path);
  k.log_sources.push_back(path + (all.size() > kLogTailBytes ? " (last 4 MiB)" : "") + ": " +
                          std::to_string(hits.size()) + " matching lines");
}

void probe_modules(const ProbeContext& ctx, const Facts& facts, KernelFacts& k) {
  const FileSystem& fs = ctx.fs;
  if (!facts.host.kernel) return;
  std::string rel = *facts.host.kernel;
  k.modules_dir = "/lib/modules/" + rel;
  std::vector<std::string> dirs = {k.modules_dir + "/updates/dkms", k.modules_dir + "/updates",
                                   k.modules_dir + "/extra", k.modules_dir + "/extra/nvidia",
                                   k.modules_dir + "/kernel/drivers/video"};
  if (auto entries = fs.list_dir(k.modules_dir + "/kernel")) {
    for (const auto& e : *entries) {
      if (starts_with(e.name, "nvidia")) dirs.push_back(k.modules_dir + "/kernel/" + e.name);
    }
  }
  for (const auto& dir : dirs) {
    auto entries = fs.list_dir(dir);
    if (!entries) continue;
    for (const auto& e : *entries) {
      if (e.name != "nvidia.ko" && !starts_with(e.name, "nvidia.ko.")) continue;
      std::string p = path_join(dir, e.name);
      std::string state = "unknown (compressed)";
      if (e.name == "nvidia.ko") {
        if (auto m = fs.map_file(p)) {
          std::string_view b = (*m)->bytes().as_string_view();
          state = b.size() >= kSigMagic.size() && ends_with(b, kSigMagic) ? "signed" : "unsigned";
        } else {
          state = "unreadable";
        }
      }
      k.nvidia_modules[p] = state;
    }
  }

  // DKMS: /var/lib/dkms/nvidia/<version>/<kernel>/...
  if (auto versions = fs.list_dir("/var/lib/dkms/nvidia")) {
    for (const auto& v : *versions) {
      if (v.type != FileType::directory) continue;
      auto kernels = fs.list_dir("/var/lib/dkms/nvidia/" + v.name);
      if (!kernels) continue;
      for (const auto& kk : *kernels) {
        if (kk.name == "source" || kk.name == "build" || kk.type != FileType::directory) continue;
        k.dkms.push_back("nvidia " + v.name + " built for " + kk.name);
      }
    }
  }
}

void probe_mok(const FileSystem& fs, KernelFacts& k) {
  std::optional<std::string> key;
  std::string key_path;
  for (const char* p : {"/var/lib/shim-signed/mok/MOK.der", "/var/lib/dkms/mok.pub",
                        "/etc/pki/akmods/certs/public_key.der"}) {
    if (auto r = fs.read_file(p, 64u << 10)) {
      key = std::move(*r);
      key_path = p;
      break;
    }
  }
  k.mok_key_present = key.has_value() && !key->empty();
  if (!k.mok_key_present) {
    k.mok_key_enrolled = Fact<bool>::unknown(FactStatus::not_found, "no DKMS/MOK signing key");
    return;
  }
  for (const char* list : {"/sys/firmware/efi/mok-variables/MokListRT",
                           "/sys/firmware/efi/efivars/MokListRT-605dab50-e046-4300-abb6-"
                           "3dd810dd8b23"}) {
    auto text = fs.read_file(list, 4u << 20);
    if (!text) continue;
    // MokListRT is an EFI_SIGNATURE_LIST: enrolled certificates appear as their DER bytes.
    k.mok_key_enrolled =
        Fact<bool>::known(text->find(*key) != std::string::npos, key_path + " in " + list);
    return;
  }
  k.mok_key_enrolled =
      Fact<bool>::unknown(FactStatus::not_found, "MokListRT not readable", key_path);
}

}  // namespace

std::optional<bool> secure_boot_from_efivar(std::string_view bytes) {
  if (bytes.size() == 5) return bytes[4] == 1;  // efivarfs: 4 attribute bytes + value
  if (bytes.size() == 1) return bytes[0] == 1;  // sysfs vars/.../data
  return std::nullopt;
}

void probe_kernel(const ProbeContext& ctx, const Facts& facts, KernelFacts& k) {
  const FileSystem& fs = ctx.fs;
  if (auto v = fs.read_file(kSecureBootVar, 64)) {
    if (auto sb = secure_boot_from_efivar(*v)) {
      k.secure_boot = Fact<bool>::known(*sb, kSecureBootVar);
    } else {
      k.secure_boot = Fact<bool>::unknown(
          FactStatus::error, "unexpected size " + std::to_string(v->size()), kSecureBootVar);
    }
  } else if (auto d = fs.read_file(kSecureBootSysfs, 64)) {
    if (auto sb = secure_boot_from_efivar(*d)) {
      k.secure_boot = Fact<bool>::known(*sb, kSecureBootSysfs);
    }
  } else if (fs.exists("/sys/firmware/efi")) {
    k.secure_boot =
        Fact<bool>::unknown(FactStatus::not_found, "no SecureBoot variable", kSecureBootVar);
  } else if (fs.is_dir("/sys/firmware")) {
    k.secure_boot = Fact<bool>::known(false, "/sys/firmware/efi absent: legacy BIOS boot");
  } else {
    k.secure_boot = Fact<bool>::unknown(FactStatus::not_found, "no /sys/firmware", "/sys/firmware");
  }
  probe_modules(ctx, facts, k);
  if (k.secure_boot.ok() && *k.secure_boot) probe_mok(fs, k);

  if (ctx.live && !fs.is_rooted()) {
    auto r = read_kernel_ring_buffer(&interesting);
    if (r) {
      k.log_sources.push_back("/dev/kmsg (this boot): " + std::to_string(r->records) + " records" +
                              (r->truncated ? " (stopped early)" : ""));
      size_t from = r->messages.size() > kMaxLogLines ? r->messages.size() - kMaxLogLines : 0;
      for (size_t i = from; i < r->messages.size(); ++i) keep_line(k, r->messages[i], "/dev/kmsg");
    } else {
      k.log_unreadable.push_back(r.error().message);
    }
  }
  for (const char* f : {"/var/log/kern.log", "/var/log/dmesg", "/var/log/messages"}) {
    read_log_file(fs, f, k);
  }
}

}  // namespace dlenv
