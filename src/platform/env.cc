#include "platform/env.h"

#include <cstdlib>
#include <utility>

#include "util/strings.h"

namespace dlenv {
namespace {

class MapEnv final : public Env {
 public:
  explicit MapEnv(std::map<std::string, std::string> vars) : vars_(std::move(vars)) {}

  std::optional<std::string> get(std::string_view name) const override {
    auto it = vars_.find(std::string(name));
    if (it == vars_.end()) return std::nullopt;
    return it->second;
  }
  std::map<std::string, std::string> all() const override { return vars_; }

 private:
  std::map<std::string, std::string> vars_;
};

bool is_key_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
bool is_key_char(char c) {
  return is_key_start(c) || (c >= '0' && c <= '9');
}

bool valid_key(std::string_view key) {
  if (key.empty() || !is_key_start(key.front())) return false;
  for (char c : key) {
    if (!is_key_char(c)) return false;
  }
  return true;
}

std::string line_error(std::string_view file_name, size_t line_no, std::string_view what) {
  return std::string(file_name) + ":" + std::to_string(line_no) + ": " + std::string(what);
}

}  // namespace

std::unique_ptr<Env> make_map_env(std::map<std::string, std::string> vars) {
  return std::make_unique<MapEnv>(std::move(vars));
}

Result<std::map<std::string, std::string>> parse_env_file(std::string_view text,
                                                          std::string_view file_name) {
  std::map<std::string, std::string> vars;
  std::vector<std::string> lines = split_lines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const size_t line_no = i + 1;
    std::string_view line = trim(lines[i]);
    if (line.empty() || line.front() == '#') continue;
    if (line.starts_with("export") && line.size() > 6 && (line[6] == ' ' || line[6] == '\t')) {
      line = trim(line.substr(6));
    }
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      return fail(
          line_error(file_name, line_no, "expected KEY=VALUE, got \"" + std::string(line) + "\""));
    }
    std::string_view key = trim(line.substr(0, eq));
    if (!valid_key(key)) {
      return fail(
          line_error(file_name, line_no, "invalid variable name \"" + std::string(key) + "\""));
    }
    std::string_view value = trim(line.substr(eq + 1));
    if (!value.empty() && (value.front() == '"' || value.front() == '\'')) {
      const char quote = value.front();
      if (value.size() < 2 || value.back() != quote) {
        return fail(line_error(file_name, line_no,
                               std::string("unterminated ") + (quote == '"' ? "double" : "single") +
                                   " quote in value of " + std::string(key)));
      }
      value = value.substr(1, value.size() - 2);
    }
    vars[std::string(key)] = std::string(value);
  }
  return vars;
}

std::vector<std::string> split_path_list(std::string_view value, char sep) {
  return split(value, sep, /*keep_empty=*/false);
}

}  // namespace dlenv
