// `dlenv completion bash|zsh|fish|powershell`: completion scripts generated from the
// command table (cli/command_tree.h): subcommands at every level, each command's flags,
// and the values of options and positionals that are a closed set (cli/choices.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command_tree.h"

namespace dlenv {

// The shells `dlenv completion` writes for, in the order the help lists them.
const std::vector<std::string>& completion_shells();

// The script for `shell` (one of completion_shells()); nullopt for another name. At the top
// level the options of `default_command` (doctor: `dlenv --json`) are offered too.
std::optional<std::string> completion_script(const CommandEntry& root, std::string_view shell,
                                             std::string_view default_command);

}  // namespace dlenv
