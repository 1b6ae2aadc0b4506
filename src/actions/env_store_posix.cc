// The Windows user environment does not exist here: every call says so.
#include "actions/env_switch.h"

namespace dlenv {
namespace {

class NoUserEnvironmentStore : public UserEnvironmentStore {
 public:
  Result<std::optional<UserEnvValue>> get(const std::string& name) const override {
    return fail(why(name));
  }
  Result<void> set(const std::string& name, const UserEnvValue&) override {
    return fail(why(name));
  }
  Result<void> remove(const std::string& name) override { return fail(why(name)); }
  Result<void> broadcast_change() override { return fail(why("WM_SETTINGCHANGE")); }
  Result<std::optional<std::string>> load_backup() const override {
    return fail(why("the backup"));
  }
  Result<void> save_backup(const std::optional<std::string>&) override {
    return fail(why("the backup"));
  }
  std::string where() const override { return "HKCU\\Environment"; }

 private:
  static std::string why(const std::string& name) {
    return name +
           ": the per-user environment (HKCU\\Environment) exists only on Windows; on Linux "
           "use `dlenv env --persist --persist-file FILE`";
  }
};

}  // namespace

std::unique_ptr<UserEnvironmentStore> make_user_environment_store() {
  return std::make_unique<NoUserEnvironmentStore>();
}

}  // namespace dlenv
