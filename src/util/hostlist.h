// Slurm hostlist expressions: "gpu[001-017,020],login1" for a list of node names, and back.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlenv {

// Compresses node names as Slurm writes them (`scontrol show hostlist`): names that differ
// only in their last run of digits share one bracket of ranges, "gpu001,gpu002,gpu003,gpu020"
// -> "gpu[001-003,020]". Zero-padded numbers keep their width and join only numbers of the
// same width ("n09,n10" -> "n[09-10]"; "n9,n10" -> "n[9-10]"; "n01,n1" stay apart). A name
// without digits, or whose digits do not fit in 18, is kept as it is. Duplicates are
// dropped; groups are sorted by prefix, suffix and first number; elements are joined by ','.
std::string compress_hostlist(const std::vector<std::string>& names);

// The names a hostlist expression denotes, in its order: "gpu[001-003,020],login1" ->
// gpu001, gpu002, gpu003, gpu020, login1. nullopt for a malformed expression (unbalanced
// brackets, a range whose end is below its start, more than `max_names` names).
std::optional<std::vector<std::string>> expand_hostlist(std::string_view expr,
                                                        size_t max_names = 1u << 20);

}  // namespace dlenv
