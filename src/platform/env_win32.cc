// make_process_env on Windows: GetEnvironmentStringsW, converted to UTF-8, read once.
// Variable names are case-insensitive on Windows ("Path" is PATH), so get() ignores
// case; all() keeps the names as the system spells them.
#include <windows.h>

#include <string_view>

#include "platform/env.h"
#include "platform/win32_text.h"
#include "util/strings.h"

namespace dlenv {
namespace {

class WindowsEnv final : public Env {
 public:
  explicit WindowsEnv(std::map<std::string, std::string> vars) : vars_(std::move(vars)) {
    for (const auto& [k, v] : vars_) folded_.emplace(to_lower(k), v);
  }
  std::optional<std::string> get(std::string_view name) const override {
    auto it = folded_.find(to_lower(name));
    if (it == folded_.end()) return std::nullopt;
    return it->second;
  }
  std::map<std::string, std::string> all() const override { return vars_; }

 private:
  std::map<std::string, std::string> vars_;
  std::map<std::string, std::string> folded_;
};

}  // namespace

std::unique_ptr<Env> make_process_env() {
  std::map<std::string, std::string> vars;
  wchar_t* block = ::GetEnvironmentStringsW();
  if (block != nullptr) {
    for (const wchar_t* e = block; *e != L'\0';) {
      std::wstring_view wentry(e);
      e += wentry.size() + 1;
      std::string entry = win32::narrow(wentry);
      // Per-drive current directories are stored as "=C:=C:\dir": no name, skipped.
      size_t eq = entry.find('=');
      if (eq == std::string::npos || eq == 0) continue;
      vars.emplace(entry.substr(0, eq), entry.substr(eq + 1));
    }
    ::FreeEnvironmentStringsW(block);
  }
  return std::make_unique<WindowsEnv>(std::move(vars));
}

}  // namespace dlenv
