// "Did you mean ...": the closest of a set of names to what the user typed.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlenv {

// Levenshtein distance (insert, delete, substitute; one each), and adjacent transposition.
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `typed`, when it is near enough to be a typo: at most 2 edits, and
// about half of the typed word's letters (`dlenv docter` -> doctor, `--jsn` -> --json); else
// the one candidate that starts with what was typed (`--mark` -> --markdown), when only one does.
std::optional<std::string> closest_name(std::string_view typed,
                                        const std::vector<std::string>& candidates);

}  // namespace dlenv
