#include "rules/resolve.h"

#include <algorithm>

namespace dlenv {
namespace {

bool about(const Finding& f, const std::string& subject) {
  return f.subject == subject ||
         std::find(f.covers.begin(), f.covers.end(), subject) != f.covers.end();
}

bool superseded(const Finding& f, const std::vector<Finding>& all) {
  if (f.subject.empty()) return false;
  for (const Supersession& s : kSupersessions) {
    if (finding_name(s.superseded) != f.id) continue;
    const std::string_view by = finding_name(s.by);
    for (const auto& g : all) {
      if (g.id == by && about(g, f.subject)) return true;
    }
  }
  return false;
}

void merge_into(Finding& into, Finding&& from) {
  into.severity = std::max(into.severity, from.severity);
  into.confirmed = into.confirmed && from.confirmed;
  for (auto& e : from.evidence) {
    const bool known = std::any_of(into.evidence.begin(), into.evidence.end(), [&](const auto& x) {
      return x.fact == e.fact && x.source == e.source;
    });
    if (!known) into.evidence.push_back(std::move(e));
  }
  for (auto& c : from.covers) {
    if (!about(into, c)) into.covers.push_back(std::move(c));
  }
}

}  // namespace

std::vector<Finding> resolve_findings(std::vector<Finding> findings) {
  std::vector<Finding> kept;
  kept.reserve(findings.size());
  for (auto& f : findings) {
    if (superseded(f, findings)) continue;
    auto same = f.subject.empty() ? kept.end()
                                  : std::find_if(kept.begin(), kept.end(), [&](const Finding& k) {
                                      return k.id == f.id && about(k, f.subject);
                                    });
    if (same != kept.end()) {
      merge_into(*same, std::move(f));
    } else {
      kept.push_back(std::move(f));
    }
  }
  std::stable_sort(kept.begin(), kept.end(), [](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    return a.id < b.id;
  });
  return kept;
}

}  // namespace dlenv
