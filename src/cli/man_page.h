// dlenv.1: the man page (roff, man macros), generated from the command table
// (cli/command_tree.h). Printed by `dlenv help --man`.
#pragma once

#include <string>
#include <string_view>

#include "cli/command_tree.h"

namespace dlenv {

// dlenv's own description (its --help text) says what runs without a command.
std::string man_page(const CommandEntry& root, std::string_view version);

}  // namespace dlenv
