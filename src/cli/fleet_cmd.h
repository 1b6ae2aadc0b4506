// `dlenv fleet FILE...|DIR|-`: many nodes' `dlenv doctor --json` reports merged into one
// drift table (report/fleet.h).
#pragma once

#include "cli/cudnn_cmd.h"

namespace dlenv {

CommandRunner add_fleet_command(CLI::App& app, Choices& choices, std::istream& in,
                                std::ostream& out, std::ostream& err);

}  // namespace dlenv
