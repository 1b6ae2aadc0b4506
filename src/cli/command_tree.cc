#include "cli/command_tree.h"

#include "util/strings.h"

namespace dlenv {
namespace {

OptionEntry describe_option(const CLI::Option& o, const Choices& choices) {
  OptionEntry e;
  for (const auto& s : o.get_snames()) e.names.push_back("-" + s);
  for (const auto& l : o.get_lnames()) e.names.push_back("--" + l);
  if (o.get_positional()) e.positional = o.get_name(true);
  if (o.nonpositional() && o.get_items_expected_max() != 0) {
    e.value_name = std::string(trim(o.get_type_name()));  // DIR, OS, ... (CLI11: TEXT, INT)
    if (e.value_name.empty()) e.value_name = "VALUE";
  }
  e.description = o.get_description();
  e.choices = choices.of(&o);
  return e;
}

CommandEntry describe(const CLI::App& app, std::vector<std::string> path, const Choices& choices) {
  CommandEntry c;
  c.path = path;
  c.name = path.empty() ? app.get_name() : path.back();
  c.description = app.get_description();
  const CLI::Option* help = app.get_help_ptr();
  for (const CLI::Option* o : app.get_options()) {
    if (o == help || o->get_group().empty()) continue;
    OptionEntry e = describe_option(*o, choices);
    (e.names.empty() ? c.positionals : c.options).push_back(std::move(e));
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_group().empty()) continue;
    auto sub_path = path;
    sub_path.push_back(sub->get_name());
    c.subcommands.push_back(describe(*sub, sub_path, choices));
  }
  return c;
}

void collect(const CommandEntry& c, std::vector<const CommandEntry*>& out) {
  out.push_back(&c);
  for (const auto& s : c.subcommands) collect(s, out);
}

}  // namespace

std::string CommandEntry::path_text() const {
  return join(path, " ");
}

CommandEntry describe_commands(const CLI::App& app, const Choices& choices) {
  return describe(app, {}, choices);
}

std::vector<const CommandEntry*> all_commands(const CommandEntry& root) {
  std::vector<const CommandEntry*> out;
  collect(root, out);
  return out;
}

}  // namespace dlenv
