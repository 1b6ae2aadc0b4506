// Env: the environment variables a probe sees. The process environment, or a
// KEY=VALUE file given with --env-file (so tests and --root runs never see the host's).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace dlenv {

class Env {
 public:
  virtual ~Env() = default;
  virtual std::optional<std::string> get(std::string_view name) const = 0;
  // Every variable, sorted by name.
  virtual std::map<std::string, std::string> all() const = 0;
};

// The environment of this process (read once, at construction).
std::unique_ptr<Env> make_process_env();
// A fixed set of variables.
std::unique_ptr<Env> make_map_env(std::map<std::string, std::string> vars);
// Parses KEY=VALUE lines ('#' comments, blank lines, optional `export `, optional
// single/double quotes around the value). Errors name the file and line.
// Keys must be [A-Za-z_][A-Za-z0-9_]*; whitespace around key and value is trimmed;
// quoted values are taken verbatim (no escapes); a later duplicate key wins.
Result<std::map<std::string, std::string>> parse_env_file(std::string_view text,
                                                          std::string_view file_name);

// Splits a PATH-like list on `sep` (':' on POSIX, ';' on Windows); empty elements
// are dropped.
std::vector<std::string> split_path_list(std::string_view value, char sep);

}  // namespace dlenv
