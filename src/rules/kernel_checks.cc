// The kernel: Secure Boot refusing an unsigned nvidia module, Xid 79 (GPU fallen off the bus)
// in this boot's kernel log.
#include <algorithm>

#include "probe/live_isolation.h"
#include "rules/rule_helpers.h"
#include "util/strings.h"

namespace dlenv {
namespace checks {

using namespace rule_helpers;

void secure_boot(const Ctx& c, Findings& out) {
  const auto& k = c.f.system.kernel;
  const auto& d = c.f.driver;
  if (!k.secure_boot.ok() || !*k.secure_boot) return;
  if (d.kernel_module_version.ok() || d.nvidia_loaded) return;
  if (c.f.system.wsl.version != 0 || in_container(c.f)) return;
  bool gpu = !d.pci_devices.empty();
  if (!gpu && k.nvidia_modules.empty() && k.dkms.empty()) return;
  Finding x = make_finding(FindingId::secure_boot_blocks_unsigned_module, Severity::warning,
                           "Secure Boot is on and the nvidia module is not loaded: an unsigned or "
                           "unenrolled module is refused");
  x.evidence.push_back(ev("Secure Boot enabled", k.secure_boot.source));
  x.evidence.push_back(ev("nvidia module not loaded", d.modules_source));
  bool strong = false;
  for (const auto& [path, state] : k.nvidia_modules) {
    x.evidence.push_back(ev(path + ": " + state, path));
    strong |= state == "unsigned";
  }
  for (const auto& e : k.dkms) x.evidence.push_back(ev(e, "/var/lib/dkms"));
  if (k.mok_key_enrolled.ok() && !*k.mok_key_enrolled) {
    x.evidence.push_back(ev("the DKMS signing key is not enrolled in the firmware (MokListRT)",
                            k.mok_key_enrolled.source));
    strong = true;
  }
  for (const auto& l : k.log_lines) {
    if (contains(l.text, "Key was rejected") || contains(l.text, "Required key not available") ||
        contains(l.text, "unsigned module") || contains(l.text, "verification failed")) {
      x.evidence.push_back(ev(l.text, l.source));
      strong = true;
    }
  }
  if (strong) {
    x.severity = Severity::error;
    x.title = "Secure Boot refuses the nvidia kernel module (not signed with an enrolled key)";
  }
  x.fix.push_back(
      step("enroll the DKMS signing key, then reboot and confirm it in the blue MOK "
           "screen (needs console access)",
           k.mok_key_present ? "sudo mokutil --import /var/lib/shim-signed/mok/MOK.der"
                               "   # or /var/lib/dkms/mok.pub"
                             : "sudo update-secureboot-policy --enroll-key"));
  x.fix.push_back(step("or install the distribution's pre-signed driver modules",
                       "sudo apt install linux-modules-nvidia-580-$(uname -r)   # Ubuntu"));
  x.fix.push_back(step("or disable Secure Boot in the firmware settings"));
  out.push_back(std::move(x));
}

void xid79(const Ctx& c, Findings& out) {
  const auto& k = c.f.system.kernel;
  std::vector<const KernelLogLine*> hits;
  bool this_boot = false;
  for (const auto& l : k.log_lines) {
    bool h = contains(l.text, "fallen off the bus") ||
             (contains(l.text, "NVRM: Xid") && contains(l.text, "): 79,"));
    if (!h) continue;
    hits.push_back(&l);
    this_boot |= l.source == "/dev/kmsg";
  }
  if (hits.empty()) return;
  Finding x = make_finding(FindingId::gpu_fallen_off_bus_xid79,
                           this_boot ? Severity::error : Severity::warning,
                           this_boot ? "A GPU fell off the bus during this boot (Xid 79)"
                                     : "The kernel log records a GPU falling off the bus (Xid 79)");
  size_t from = hits.size() > 3 ? hits.size() - 3 : 0;
  for (size_t i = from; i < hits.size(); ++i)
    x.evidence.push_back(ev(hits[i]->text, hits[i]->source));
  if (hits.size() > 3) {
    x.evidence.push_back(ev(std::to_string(hits.size()) + " such lines in all", "kernel log"));
  }
  if (!this_boot) {
    x.evidence.push_back(
        ev("from a log file: it may be from an earlier boot", hits.back()->source));
  }
  x.fix.push_back(step(
      "this is hardware or platform, not software: check power delivery (PSU, cables), cooling "
      "and seating of the card, update the system BIOS, then reboot"));
  x.fix.push_back(step("collect details for the vendor", "sudo nvidia-bug-report.sh"));
  out.push_back(std::move(x));
}

// This file's entries of the check table (rules/check_table.cc lists them).
extern const Check secure_boot_entry{"secure_boot",
                                     "Secure Boot against an unsigned module",
                                     secure_boot,
                                     {FindingId::secure_boot_blocks_unsigned_module},
                                     fact_area::driver | fact_area::system};
extern const Check xid79_entry{"xid79",
                               "Xid 79 (GPU fallen off the bus)",
                               xid79,
                               {FindingId::gpu_fallen_off_bus_xid79},
                               fact_area::system};

}  // namespace checks
}  // namespace dlenv
