#include "rules/finding.h"

namespace dlenv {

Finding make_finding(FindingId id, Severity severity, std::string title) {
  const FindingMeta& m = finding_meta(id);
  Finding x;
  x.id = std::string(m.id);
  x.severity = severity;
  x.layer = std::string(m.layer);
  x.title = std::move(title);
  return x;
}

}  // namespace dlenv
