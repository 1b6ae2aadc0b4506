#include <algorithm>
#include <cstdio>

#include "report/internal.h"
#include "report/report.h"
#include "util/safe_text.h"
#include "util/strings.h"

namespace dlenv {

bool color_wanted(bool is_tty, const char* no_color_env, const char* term_env,
                  const char* force_color_env, const char* clicolor_force_env) {
  auto set = [](const char* v) { return v != nullptr && v[0] != '\0'; };
  if (set(no_color_env)) return false;
  for (const char* force : {force_color_env, clicolor_force_env}) {
    if (set(force) && std::string_view(force) != "0") return true;
  }
  if (!is_tty) return false;
  if (term_env != nullptr && std::string_view(term_env) == "dumb") return false;
  return true;
}

std::vector<Finding> sorted_findings(const std::vector<Finding>& findings) {
  std::vector<Finding> out = findings;
  std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
    return static_cast<int>(a.severity) > static_cast<int>(b.severity);
  });
  return out;
}

namespace report_detail {

std::string clean(std::string_view s) {
  // A value is one line: line breaks and tabs become spaces; every other control byte,
  // escape sequence or byte that is not UTF-8 becomes a visible escape (util/safe_text.h).
  std::string flat(s);
  for (char& ch : flat) {
    if (ch == '\n' || ch == '\t') ch = ' ';
  }
  return std::string(trim(visible_text(flat)));
}

size_t display_width(std::string_view s) {
  size_t n = 0;
  for (char ch : s) {
    if ((static_cast<unsigned char>(ch) & 0xC0) != 0x80) ++n;
  }
  return n;
}

std::string status_phrase(FactStatus s) {
  switch (s) {
    case FactStatus::ok: return "not found";  // "ok" without a value
    case FactStatus::not_found: return "not found";
    case FactStatus::not_supported: return "not supported";
    case FactStatus::permission_denied: return "permission denied";
    case FactStatus::timed_out: return "timed out";
    case FactStatus::error: return "error";
    case FactStatus::skipped: return "skipped";
  }
  return "error";
}

std::string unknown_text(FactStatus s, std::string_view reason) {
  std::string out = status_phrase(s);
  std::string why = clean(reason);
  if (!why.empty()) out += ": " + why;
  return out;
}

std::string driver_version_text(const DriverFacts& d) {
  // Same order as DriverFacts::version(), but the text is kept as written:
  // Version::str() would turn "580.95.05" into "580.95.5".
  for (const Fact<std::string>* f :
       {&d.nvml_driver_version, &d.kernel_module_version, &d.sys_module_version,
        &d.nvidia_smi_version, &d.windows_dll_version}) {
    if (f->ok() && Version::parse(**f)) return clean(**f);
  }
  return {};
}

std::vector<std::string> active_via(const ToolkitFacts& t) {
  std::vector<std::string> out;
  if (t.active_path) out.push_back("PATH");
  if (t.active_cuda_home) out.push_back("CUDA_HOME");
  if (t.active_ld_library_path) out.push_back("LD_LIBRARY_PATH");
  if (t.in_ld_cache) out.push_back("ld.so.cache");
  if (t.is_default_link) out.push_back("default link");
  return out;
}

Counts count_findings(const std::vector<Finding>& findings) {
  Counts c;
  for (const Finding& f : findings) {
    switch (f.severity) {
      case Severity::error: ++c.errors; break;
      case Severity::warning: ++c.warnings; break;
      case Severity::info: ++c.infos; break;
    }
  }
  return c;
}

std::string counts_text(const Counts& c) {
  auto n = [](int k, const char* one, const char* many) {
    return std::to_string(k) + " " + (k == 1 ? one : many);
  };
  return n(c.errors, "error", "errors") + ", " + n(c.warnings, "warning", "warnings") + ", " +
         std::to_string(c.infos) + " info";
}

}  // namespace report_detail
}  // namespace dlenv
