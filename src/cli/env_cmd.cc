#include "cli/env_cmd.h"

#include <nlohmann/json.hpp>
#include <ostream>

#include "actions/cudnn_install.h"
#include "actions/env_switch.h"
#include "cli/cli.h"
#include "cli/kill_point.h"
#include "util/safe_text.h"
#include "util/strings.h"

namespace dlenv {
namespace {

struct EnvOptions {
  ActionCommonOptions common;
  std::string cuda;
  std::string shell;
  bool persist = false;
  bool undo = false;
  std::string persist_file;
};

std::string suggested_profile(Shell shell) {
  switch (shell) {
    case Shell::zsh: return "~/.zshrc";
    case Shell::fish: return "~/.config/fish/conf.d/dlenv.fish";
    case Shell::pwsh: return "$PROFILE";
    default: return "~/.bashrc";
  }
}

int run_env(const EnvOptions& o, std::ostream& out, std::ostream& err) {
  auto setup = make_action_setup(o.common);
  if (!setup) {
    err << "dlenv env: " << setup.error().message << "\n";
    return kExitUsage;
  }
  std::optional<Shell> shell;
  if (!o.shell.empty()) {
    shell = parse_shell(o.shell);
    if (!shell) {
      err << "dlenv env: --shell must be one of " << join(shell_names(), ", ") << ", not '"
          << o.shell << "'\n";
      return kExitUsage;
    }
  } else if (setup->os == Os::windows) {
    shell = Shell::pwsh;
  } else {
    auto sh = setup->env->get("SHELL");
    shell = sh ? parse_shell(path_basename(*sh)) : std::nullopt;
    if (!shell) shell = Shell::bash;
  }
  ProbeContext ctx{*setup->fs, *setup->env, *setup->kb, setup->os, setup->live, "environment"};
  if (o.undo && setup->os == Os::windows && o.persist_file.empty()) {
    if (!setup->live) {
      err << "dlenv env --undo: the Windows user environment can only be changed on Windows "
             "itself (not under --root or --os windows)\n";
      return kExitUsage;
    }
    auto store = make_user_environment_store();
    auto r = undo_user_environment(*store);
    if (!r) {
      err << "dlenv env --undo: " << r.error().message << "\n";
      return kExitFindings;
    }
    if (auto b = store->broadcast_change(); !b)
      err << "dlenv env --undo: " << b.error().message << "\n";
    out << "restored " << store->where() << " as it was before `dlenv env --persist`"
        << (r->empty() ? " (nothing had changed since)" : ":") << "\n";
    for (const auto& c : *r) out << "  " << c << "\n";
    return kExitOk;
  }
  if (o.undo) {
    if (o.persist_file.empty()) {
      err << "dlenv env --undo: give the file with --persist-file PATH\n";
      return kExitUsage;
    }
    auto writer = make_cli_file_writer(setup->root);
    auto r = undo_persist_env_block(*setup->fs, *writer, o.persist_file);
    if (!r) {
      err << "dlenv env --undo: " << r.error().message << "\n";
      return kExitFindings;
    }
    out << r->what << " " << r->file << (r->backup.empty() ? "" : " (from " + r->backup + ")")
        << "\n";
    return kExitOk;
  }
  if (o.cuda.empty()) {
    err << "dlenv env: give --cuda X.Y (the toolkit to make active)\n";
    return kExitUsage;
  }
  auto cuda = Version::parse(o.cuda);
  if (!cuda) {
    err << "dlenv env: --cuda wants X.Y, not '" << o.cuda << "'\n";
    return kExitUsage;
  }
  auto sw = plan_env_switch(ctx, *cuda);
  if (!sw) {
    err << "dlenv env: " << sw.error().message << "\n";
    return kExitFindings;
  }
  const std::string commands = render_env_commands(*sw, *shell, setup->os);
  if (o.persist) {
    if (setup->os == Os::windows) {
      if (!setup->live) {
        err << "dlenv env --persist: the Windows user environment can only be written on "
               "Windows itself (not under --root or --os windows)\n";
        return kExitUsage;
      }
      auto store = make_user_environment_store();
      auto r = persist_user_environment(*store, *sw);
      if (!r) {
        err << "dlenv env --persist: " << r.error().message << "\n";
        return kExitFindings;
      }
      if (auto b = store->broadcast_change(); !b)
        err << "dlenv env --persist: " << b.error().message << "\n";
      out << (r->empty() ? "nothing to change in " : "changed ") << store->where()
          << (r->empty() ? ""
                         : " (the previous values are kept; `dlenv env --undo` restores them):")
          << "\n";
      for (const auto& c : *r) out << "  " << c << "\n";
      out << "PATH is not changed durably: put " << (sw->path.empty() ? "" : sw->path.front())
          << " first in it yourself (the system PATH, where the CUDA installer puts its entries, "
             "comes before the user's)\n";
      return kExitOk;
    }
    if (o.persist_file.empty()) {
      err << "dlenv env --persist: say where with --persist-file PATH (for " << shell_name(*shell)
          << " usually " << suggested_profile(*shell)
          << "); the file is backed up first and `--undo --persist-file PATH` restores it\n";
      return kExitUsage;
    }
    auto writer = make_cli_file_writer(setup->root);
    auto r = persist_env_block(*setup->fs, *writer, o.persist_file, commands);
    if (!r) {
      err << "dlenv env --persist: " << r.error().message << "\n";
      return kExitFindings;
    }
    out << r->what << " " << r->file
        << (r->backup.empty() ? "" : " (the original is kept as " + r->backup + ")") << "\n";
    return kExitOk;
  }
  if (o.common.json) {
    nlohmann::json doc{{"schema", "dlenv.env/1"},
                       {"toolkit", display_path(sw->toolkit, setup->os)},
                       {"version", sw->version.str()},
                       {"shell", shell_name(*shell)},
                       {"path", sw->path},
                       {"ld_library_path", sw->ld_library_path},
                       {"removed", sw->removed},
                       {"set", sw->set},
                       {"unset", sw->unset},
                       {"notes", sw->notes},
                       {"commands", commands}};
    out << json_text(doc, 2) << "\n";
    return kExitOk;
  }
  out << commands;
  // Notes go to stderr so `eval "$(dlenv env --cuda X.Y)"` only sees commands.
  for (const auto& r : sw->removed) err << "# removed " << r << "\n";
  for (const auto& n : sw->notes) err << "# " << n << "\n";
  return kExitOk;
}

}  // namespace

CommandRunner add_env_command(CLI::App& app, Choices& choices, std::ostream& out,
                              std::ostream& err) {
  auto o = std::make_shared<EnvOptions>();
  auto* env = app.add_subcommand(
      "env",
      "Print the shell commands that make one CUDA toolkit the active one (or persist them)");
  env->add_option("--cuda", o->cuda, "The toolkit's CUDA version")->type_name("X.Y");
  // Checked by parse_shell, which also takes sh and powershell.
  choices.attach(env->add_option("--shell", o->shell,
                                 join(shell_names(), "|") + " (default: $SHELL, pwsh on Windows)")
                     ->type_name("SHELL"),
                 shell_names, false);
  env->add_flag("--persist", o->persist,
                "Write the settings durably (Linux: a block in --persist-file, backed up first; "
                "Windows: HKCU\\Environment)");
  env->add_option("--persist-file", o->persist_file, "The profile file to write (or undo)")
      ->type_name("PATH");
  env->add_flag("--undo", o->undo,
                "Restore --persist-file (Windows without it: HKCU\\Environment) as it was before "
                "--persist");
  add_action_common(env, o->common, choices);
  return [=, &out, &err]() -> std::optional<int> {
    if (!*env) return std::nullopt;
    return run_env(*o, out, err);
  };
}

}  // namespace dlenv
