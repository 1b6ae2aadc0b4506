// `dlenv env --cuda X.Y`: print (or persist) the settings that make one toolkit active.
#pragma once

#include "cli/cudnn_cmd.h"

namespace dlenv {

CommandRunner add_env_command(CLI::App& app, Choices& choices, std::ostream& out,
                              std::ostream& err);

}  // namespace dlenv
