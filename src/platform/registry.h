// Windows registry reads (HKCU / HKLM). Probes take a RegistryReader so tests
// can supply a fake; live_registry() is the real one (empty off Windows).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace dlenv {

enum class RegistryHive { current_user, local_machine };

// Reads a REG_SZ / REG_EXPAND_SZ value, unexpanded, as UTF-8.
// nullopt when the key or value does not exist (or off Windows).
using RegistryReader = std::function<std::optional<std::string>(RegistryHive, std::string_view key,
                                                                std::string_view value)>;

// The process's real registry (registry_win32.cc); off Windows it never finds anything.
RegistryReader live_registry();

}  // namespace dlenv
