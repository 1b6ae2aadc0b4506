#include "cli/suggest.h"

#include <algorithm>

namespace dlenv {

size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: three rows of the dynamic-programming table.
  std::vector<size_t> before(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        cur[j] = std::min(cur[j], before[j - 2] + 1);
      }
    }
    before.swap(prev);
    prev.swap(cur);
  }
  return prev[b.size()];
}

std::optional<std::string> closest_name(std::string_view typed,
                                        const std::vector<std::string>& candidates) {
  std::string_view bare = typed;
  while (bare.starts_with('-')) bare.remove_prefix(1);
  if (bare.empty()) return std::nullopt;
  const size_t limit = std::min<size_t>(2, (bare.size() - 1) / 2 + (bare.size() > 3 ? 1 : 0));
  std::optional<std::string> best;
  size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    size_t d = edit_distance(typed, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  if (best) return best;
  // `dlenv doctor --mark` -> --markdown: an unambiguous start of one name.
  std::optional<std::string> prefix_of;
  for (const auto& c : candidates) {
    if (typed.size() >= 3 && c.starts_with(typed)) {
      if (prefix_of) return std::nullopt;
      prefix_of = c;
    }
  }
  return prefix_of;
}

}  // namespace dlenv
