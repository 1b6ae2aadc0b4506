// `dlenv cudnn inspect|install|uninstall|list` (and, in env_cmd.h, `dlenv env`): each
// adds its subcommand to the CLI11 app and returns the function that runs it when the
// user chose it (nullopt otherwise), so cli.cc registers each with one line.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include "cli/choices.h"
#include "cli/setup.h"
#include "kb/kb.h"
#include "platform/env.h"
#include "platform/filesystem.h"

namespace dlenv {

using CommandRunner = std::function<std::optional<int>()>;

// `progress`: where inspect and install draw their progress line (stderr as it is, when
// output goes to a terminal), or nullptr for none.
CommandRunner add_cudnn_command(CLI::App& app, Choices& choices, std::ostream& out,
                                std::ostream& err, std::ostream* progress);

// --root / --os / --env-file / --kb as every system-reading command takes them.
struct ActionCommonOptions {
  std::string root;
  std::string os;
  std::string env_file;
  std::string kb_dir;
  bool json = false;
};
void add_action_common(CLI::App* app, ActionCommonOptions& o, Choices& choices);

using ActionSetup = SystemView;  // cli/setup.h
Result<ActionSetup> make_action_setup(const ActionCommonOptions& o);

}  // namespace dlenv
