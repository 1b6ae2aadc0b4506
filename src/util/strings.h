// Small string helpers used by every layer.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlenv {

std::string_view trim(std::string_view s);
std::vector<std::string> split(std::string_view s, char sep, bool keep_empty = false);
std::vector<std::string> split_lines(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);
bool contains(std::string_view s, std::string_view needle);
std::string to_lower(std::string_view s);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
std::optional<long long> parse_int(std::string_view s);
// Joins path components with '/', collapsing duplicate separators at the seam.
std::string path_join(std::string_view a, std::string_view b);
std::string path_dirname(std::string_view p);
std::string path_basename(std::string_view p);
// The part after the last '/' or '\\' (a file name from a Windows or a POSIX path, as given:
// GetModuleFileNameW, a DLL in a process's module list, a user's argument); all of `p`
// when it has neither.
std::string_view file_name_of(std::string_view p);
// Lexically normalises "a/./b/../c" -> "a/c"; keeps a leading '/'.
std::string path_normalize(std::string_view p);
// Human size: 1536 -> "1.5 KiB".
std::string human_bytes(unsigned long long bytes);
// A size as a user writes it: "1048576", "512K", "64M", "2G", "1T" (binary units,
// an optional "iB"/"B": "2GiB"); nullopt for anything else or an overflow.
std::optional<unsigned long long> parse_byte_size(std::string_view text);

}  // namespace dlenv
