#include "probe/facts.h"

namespace dlenv {

const char* fact_status_name(FactStatus s) {
  switch (s) {
    case FactStatus::ok: return "ok";
    case FactStatus::not_found: return "not-found";
    case FactStatus::not_supported: return "not-supported";
    case FactStatus::permission_denied: return "permission-denied";
    case FactStatus::timed_out: return "timed-out";
    case FactStatus::error: return "error";
    case FactStatus::skipped: return "skipped";
  }
  return "error";
}

std::optional<Version> DriverFacts::version() const {
  for (const Fact<std::string>* f :
       {&nvml_driver_version, &kernel_module_version, &sys_module_version, &nvidia_smi_version,
        &windows_dll_version}) {
    if (f->ok()) {
      if (auto v = Version::parse(**f)) return v;
    }
  }
  return std::nullopt;
}

}  // namespace dlenv
