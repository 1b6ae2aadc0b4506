#include "platform/registry.h"

namespace dlenv {

RegistryReader live_registry() {
  return [](RegistryHive, std::string_view, std::string_view) -> std::optional<std::string> {
    return std::nullopt;
  };
}

}  // namespace dlenv
