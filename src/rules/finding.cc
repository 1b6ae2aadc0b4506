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

Finding make_finding(FindingId id, Severity severity, std::string title, std::string subject) {
  Finding x = make_finding(id, severity, std::move(title));
  x.subject = std::move(subject);
  return x;
}

}  // namespace dlenv
