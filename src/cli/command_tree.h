// The command table as data: every subcommand (nested ones too), its options and
// positionals, read back from the CLI11 app that parses the command line. The shell
// completions (cli/completion.h) and the man page (cli/man_page.h) are generated from it,
// so no flag is listed twice.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/choices.h"

namespace dlenv {

struct OptionEntry {
  std::vector<std::string> names;  // "-v", "--verbose" (positionals: empty)
  std::string value_name;          // "DIR" for an option that takes a value; "" for a flag
  std::string positional;          // a positional's name ("id", "source")
  std::string description;
  std::vector<std::string> choices;  // a closed set of values (cli/choices.h), else empty
  bool takes_value() const { return !value_name.empty() || !positional.empty(); }
  // The long name (else the short one): what the man page and the completions show first.
  const std::string& main_name() const { return names.back(); }
};

struct CommandEntry {
  std::vector<std::string> path;  // {} for dlenv itself, {"cudnn", "install"}
  std::string name;               // "dlenv", "install"
  std::string description;
  std::vector<OptionEntry> options;  // without --help (every command has it)
  std::vector<OptionEntry> positionals;
  std::vector<CommandEntry> subcommands;
  std::string path_text() const;  // "cudnn install" ("" for dlenv)
};

// Hidden options and subcommands (no group) are left out.
CommandEntry describe_commands(const CLI::App& app, const Choices& choices);

// Every command of the tree, depth first, dlenv itself first.
std::vector<const CommandEntry*> all_commands(const CommandEntry& root);

}  // namespace dlenv
