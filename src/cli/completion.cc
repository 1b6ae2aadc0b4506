#include "cli/completion.h"

#include <algorithm>

#include "util/strings.h"

namespace dlenv {
namespace {

// What every generator needs, keyed by the command's path ("", "doctor", "cudnn install").
struct Table {
  struct Command {
    const CommandEntry* entry;
    std::string key;
    std::vector<OptionEntry> options;  // with --help, and at the top the default command's
  };
  std::vector<Command> commands;
};

Table make_table(const CommandEntry& root, std::string_view default_command) {
  OptionEntry help;
  help.names = {"-h", "--help"};
  help.description = "Print this help and exit";
  Table t;
  for (const CommandEntry* c : all_commands(root)) {
    Table::Command cmd{c, c->path_text(), c->options};
    cmd.options.insert(cmd.options.begin(), help);
    if (c->path.empty()) {
      for (const auto& sub : c->subcommands) {
        if (sub.name != default_command) continue;
        for (const auto& o : sub.options) {
          bool known = std::any_of(cmd.options.begin(), cmd.options.end(),
                                   [&](const auto& k) { return k.main_name() == o.main_name(); });
          if (!known) cmd.options.push_back(o);
        }
      }
    }
    t.commands.push_back(std::move(cmd));
  }
  return t;
}

std::vector<std::string> subcommand_names(const CommandEntry& c) {
  std::vector<std::string> out;
  for (const auto& s : c.subcommands) out.push_back(s.name);
  return out;
}

std::vector<std::string> option_names(const std::vector<OptionEntry>& options, bool values_only) {
  std::vector<std::string> out;
  for (const auto& o : options) {
    if (values_only && !o.takes_value()) continue;
    out.insert(out.end(), o.names.begin(), o.names.end());
  }
  return out;
}

// The positional values of a command: the first positional with a closed set.
std::vector<std::string> positional_choices(const CommandEntry& c) {
  for (const auto& p : c.positionals) {
    if (!p.choices.empty()) return p.choices;
  }
  return {};
}

// The first sentence-ish line of a description, for the one-line completion menus.
std::string summary(std::string_view description) {
  std::string s(trim(description.substr(0, description.find('\n'))));
  return s;
}

// '...' for POSIX shells (bash, zsh).
std::string sh_quote(std::string_view s) {
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'') {
      out += "'\\''";
    } else {
      out += ch;
    }
  }
  return out + "'";
}

// '...' for fish: backslash and quote are escaped inside.
std::string fish_quote(std::string_view s) {
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "'";
}

// '...' for PowerShell: a quote is doubled.
std::string ps_quote(std::string_view s) {
  std::string out = "'";
  for (char ch : s) {
    out += ch;
    if (ch == '\'') out += '\'';
  }
  return out + "'";
}

std::string words(const std::vector<std::string>& w) {
  return join(w, " ");
}

// The bash/zsh helper functions: one `case` per table, echoing space-separated words.
std::string posix_case_function(const std::string& name,
                                const std::vector<std::pair<std::string, std::string>>& rows,
                                const std::string& subject) {
  std::string out = name + "() {\n  case " + subject + " in\n";
  for (const auto& [key, value] : rows) {
    if (value.empty()) continue;
    out += "    " + sh_quote(key) + ") echo " + sh_quote(value) + " ;;\n";
  }
  return out + "  esac\n}\n";
}

struct PosixTables {
  std::vector<std::pair<std::string, std::string>> subcommands, options, value_options, choices;
};

PosixTables posix_tables(const Table& t) {
  PosixTables p;
  for (const auto& c : t.commands) {
    p.subcommands.emplace_back(c.key, words(subcommand_names(*c.entry)));
    p.options.emplace_back(c.key, words(option_names(c.options, false)));
    p.value_options.emplace_back(c.key, words(option_names(c.options, true)));
    for (const auto& o : c.options) {
      if (o.choices.empty()) continue;
      for (const auto& n : o.names) p.choices.emplace_back(c.key + "|" + n, words(o.choices));
    }
    p.choices.emplace_back(c.key + "|", words(positional_choices(*c.entry)));
  }
  return p;
}

std::string posix_helpers(const Table& t, const std::string& shell) {
  PosixTables p = posix_tables(t);
  std::string out;
  out += posix_case_function("_dlenv_subcommands", p.subcommands, "\"$1\"");
  out += posix_case_function("_dlenv_options", p.options, "\"$1\"");
  out += posix_case_function("_dlenv_value_options", p.value_options, "\"$1\"");
  out += posix_case_function("_dlenv_choices", p.choices, "\"$1|$2\"");
  out +=
      "_dlenv_has() {\n"
      "  local want=\"$1\" w\n"
      "  shift\n"
      "  for w in \"$@\"; do\n"
      "    [[ \"$w\" == \"$want\" ]] && return 0\n"
      "  done\n"
      "  return 1\n"
      "}\n";
  // The words before the cursor decide the command: subcommand names descend, an option
  // that takes a value skips that value, `--` ends dlenv's own arguments (which -- CMD).
  const bool zsh = shell == "zsh";
  const std::string split = zsh ? "${=$(" : "$(";
  const std::string split_end = zsh ? ")}" : ")";
  out +=
      "# The command the words before the cursor select (\"\" for dlenv itself; \"--\" after "
      "--).\n";
  out += "_dlenv_command() {\n";
  out += "  local cmd=\"\" w skip=0\n";
  out += "  for w in \"$@\"; do\n";
  out += "    if ((skip)); then\n      skip=0\n      continue\n    fi\n";
  out += "    if [[ \"$w\" == \"--\" ]]; then\n      echo \"--\"\n      return\n    fi\n";
  out += "    if [[ \"$w\" == -* ]]; then\n";
  out += "      _dlenv_has \"$w\" " + split + "_dlenv_value_options \"$cmd\"" + split_end +
         " && skip=1\n";
  out += "      continue\n    fi\n";
  out += "    _dlenv_has \"$w\" " + split + "_dlenv_subcommands \"$cmd\"" + split_end +
         " && cmd=\"${cmd:+$cmd }$w\"\n";
  out += "  done\n  echo \"$cmd\"\n}\n";
  return out;
}

std::string bash_script(const Table& t) {
  std::string out =
      "# bash completion for dlenv, generated by `dlenv completion bash` from its command table.\n"
      "# Load it with: source <(dlenv completion bash)\n"
      "# shellcheck disable=SC2046\n";
  out += posix_helpers(t, "bash");
  out +=
      "_dlenv() {\n"
      "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"\" cmd values\n"
      "  ((COMP_CWORD > 1)) && prev=\"${COMP_WORDS[COMP_CWORD - 1]}\"\n"
      "  cmd=\"$(_dlenv_command \"${COMP_WORDS[@]:1:COMP_CWORD-1}\")\"\n"
      "  COMPREPLY=()\n"
      "  [[ \"$cmd\" == \"--\" ]] && return 0\n"
      "  if [[ \"$prev\" == -* ]] && _dlenv_has \"$prev\" $(_dlenv_value_options \"$cmd\"); then\n"
      "    values=\"$(_dlenv_choices \"$cmd\" \"$prev\")\"\n"
      "    [[ -n \"$values\" ]] && mapfile -t COMPREPLY < <(compgen -W \"$values\" -- \"$cur\")\n"
      "    return 0\n"
      "  fi\n"
      "  if [[ \"$cur\" == -* ]]; then\n"
      "    mapfile -t COMPREPLY < <(compgen -W \"$(_dlenv_options \"$cmd\")\" -- \"$cur\")\n"
      "    return 0\n"
      "  fi\n"
      "  values=\"$(_dlenv_subcommands \"$cmd\") $(_dlenv_choices \"$cmd\" \"\")\"\n"
      "  mapfile -t COMPREPLY < <(compgen -W \"$values\" -- \"$cur\")\n"
      "}\n"
      "complete -o default -F _dlenv dlenv dlenv.exe\n";
  return out;
}

std::string zsh_script(const Table& t) {
  std::string out =
      "#compdef dlenv dlenv.exe\n"
      "# zsh completion for dlenv, generated by `dlenv completion zsh` from its command table.\n"
      "# Put it in a directory of $fpath as _dlenv, or load it with: source <(dlenv completion "
      "zsh)\n";
  out += posix_helpers(t, "zsh");
  // "name:description" lines for _describe.
  std::vector<std::pair<std::string, std::string>> sub_rows, opt_rows;
  auto described = [](const std::string& name, const std::string& description) {
    std::string n;
    for (char ch : name) {
      if (ch == ':') n += '\\';
      n += ch;
    }
    return n + ":" + summary(description);
  };
  for (const auto& c : t.commands) {
    std::vector<std::string> subs, opts;
    for (const auto& s : c.entry->subcommands) subs.push_back(described(s.name, s.description));
    for (const auto& o : c.options) {
      for (const auto& n : o.names) opts.push_back(described(n, o.description));
    }
    sub_rows.emplace_back(c.key, join(subs, "\n"));
    opt_rows.emplace_back(c.key, join(opts, "\n"));
  }
  out += posix_case_function("_dlenv_subcommand_lines", sub_rows, "\"$1\"");
  out += posix_case_function("_dlenv_option_lines", opt_rows, "\"$1\"");
  out +=
      "_dlenv() {\n"
      "  local cur=\"${words[CURRENT]}\" prev=\"${words[CURRENT-1]}\" cmd values\n"
      "  local -a entries\n"
      "  cmd=\"$(_dlenv_command \"${(@)words[2,CURRENT-1]}\")\"\n"
      "  if [[ \"$cmd\" == \"--\" ]]; then\n"
      "    _files\n"
      "    return\n"
      "  fi\n"
      "  if ((CURRENT > 2)) && [[ \"$prev\" == -* ]] &&\n"
      "      _dlenv_has \"$prev\" ${=$(_dlenv_value_options \"$cmd\")}; then\n"
      "    values=\"$(_dlenv_choices \"$cmd\" \"$prev\")\"\n"
      "    if [[ -n \"$values\" ]]; then\n"
      "      compadd -- ${=values}\n"
      "    else\n"
      "      _files\n"
      "    fi\n"
      "    return\n"
      "  fi\n"
      "  if [[ \"$cur\" == -* ]]; then\n"
      "    entries=(\"${(@f)$(_dlenv_option_lines \"$cmd\")}\")\n"
      "    _describe -t options 'dlenv option' entries\n"
      "    return\n"
      "  fi\n"
      "  entries=(\"${(@f)$(_dlenv_subcommand_lines \"$cmd\")}\")\n"
      "  values=\"$(_dlenv_choices \"$cmd\" \"\")\"\n"
      "  if [[ -n \"${entries[1]}\" ]]; then\n"
      "    _describe -t commands 'dlenv command' entries\n"
      "  elif [[ -n \"$values\" ]]; then\n"
      "    compadd -- ${=values}\n"
      "  else\n"
      "    _files\n"
      "  fi\n"
      "}\n"
      "if [[ \"${funcstack[1]}\" == \"_dlenv\" ]]; then\n"
      "  _dlenv \"$@\"\n"
      "else\n"
      "  compdef _dlenv dlenv dlenv.exe\n"
      "fi\n";
  return out;
}

std::string fish_switch_function(const std::string& name,
                                 const std::vector<std::pair<std::string, std::string>>& rows) {
  std::string out = "function " + name + "\n    switch \"$argv[1]\"\n";
  for (const auto& [key, value] : rows) {
    if (value.empty()) continue;
    out += "        case " + fish_quote(key) + "\n            printf '%s\\n' " + value + "\n";
  }
  return out + "    end\nend\n";
}

std::string fish_script(const Table& t) {
  std::string out =
      "# fish completion for dlenv, generated by `dlenv completion fish` from its command table.\n"
      "# Save it as ~/.config/fish/completions/dlenv.fish\n";
  std::vector<std::pair<std::string, std::string>> subs, values;
  for (const auto& c : t.commands) {
    subs.emplace_back(c.key, words(subcommand_names(*c.entry)));
    values.emplace_back(c.key, words(option_names(c.options, true)));
  }
  out += fish_switch_function("__dlenv_subcommands", subs);
  out += fish_switch_function("__dlenv_value_options", values);
  out +=
      "# The command the words before the cursor select (\"\" for dlenv itself; \"--\" after --).\n"
      "function __dlenv_command\n"
      "    set -l cmd ''\n"
      "    set -l skip 0\n"
      "    for w in (commandline -opc)[2..-1]\n"
      "        if test $skip -eq 1\n"
      "            set skip 0\n"
      "            continue\n"
      "        end\n"
      "        if test \"$w\" = '--'\n"
      "            echo -- '--'\n"
      "            return\n"
      "        end\n"
      "        if string match -q -- '-*' $w\n"
      "            if contains -- $w (__dlenv_value_options \"$cmd\")\n"
      "                set skip 1\n"
      "            end\n"
      "            continue\n"
      "        end\n"
      "        if contains -- $w (__dlenv_subcommands \"$cmd\")\n"
      "            set cmd (string trim -- \"$cmd $w\")\n"
      "        end\n"
      "    end\n"
      "    echo -- $cmd\n"
      "end\n"
      "function __dlenv_at\n"
      "    set -l cmd (__dlenv_command)\n"
      "    test \"$cmd\" = \"$argv[1]\"\n"
      "end\n";
  for (const auto& c : t.commands) {
    const std::string cond = "-n \"__dlenv_at '" + c.key + "'\"";
    for (const auto& s : c.entry->subcommands) {
      out += "complete -c dlenv " + cond + " -f -a " + fish_quote(s.name) + " -d " +
             fish_quote(summary(s.description)) + "\n";
    }
    for (const auto& o : c.options) {
      std::string line = "complete -c dlenv " + cond;
      for (const auto& n : o.names) {
        line += n.starts_with("--") ? " -l " + n.substr(2) : " -s " + n.substr(1);
      }
      if (!o.choices.empty()) {
        line += " -x -a " + fish_quote(words(o.choices));
      } else if (o.takes_value()) {
        line += " -r";
      }
      out += line + " -d " + fish_quote(summary(o.description)) + "\n";
    }
    auto pos = positional_choices(*c.entry);
    if (!pos.empty()) {
      out += "complete -c dlenv " + cond + " -f -a " + fish_quote(words(pos)) + "\n";
    }
  }
  return out;
}

std::string ps_array(const std::vector<std::string>& items) {
  std::vector<std::string> q;
  for (const auto& i : items) q.push_back(ps_quote(i));
  return "@(" + join(q, ", ") + ")";
}

std::string powershell_script(const Table& t) {
  std::string subs, opts, values, choices;
  for (const auto& c : t.commands) {
    const std::string key = ps_quote(c.key);
    subs += "        " + key + " = " + ps_array(subcommand_names(*c.entry)) + "\n";
    opts += "        " + key + " = " + ps_array(option_names(c.options, false)) + "\n";
    values += "        " + key + " = " + ps_array(option_names(c.options, true)) + "\n";
    for (const auto& o : c.options) {
      if (o.choices.empty()) continue;
      for (const auto& n : o.names) {
        choices += "        " + ps_quote(c.key + "|" + n) + " = " + ps_array(o.choices) + "\n";
      }
    }
    auto pos = positional_choices(*c.entry);
    if (!pos.empty()) choices += "        " + ps_quote(c.key + "|") + " = " + ps_array(pos) + "\n";
  }
  return "# PowerShell completion for dlenv, generated by `dlenv completion powershell` from its\n"
         "# command table. Load it with: dlenv completion powershell | Out-String | "
         "Invoke-Expression\n"
         "Register-ArgumentCompleter -Native -CommandName dlenv, dlenv.exe -ScriptBlock {\n"
         "    param($wordToComplete, $commandAst, $cursorPosition)\n"
         "    $subcommands = @{\n" +
         subs +
         "    }\n"
         "    $options = @{\n" +
         opts +
         "    }\n"
         "    $valueOptions = @{\n" +
         values +
         "    }\n"
         "    $choices = @{\n" +
         choices +
         "    }\n"
         "    $before = @($commandAst.CommandElements |\n"
         "        Where-Object { $_.Extent.EndOffset -lt $cursorPosition } |\n"
         "        ForEach-Object { $_.ToString() })\n"
         "    $cmd = ''\n"
         "    $skip = $false\n"
         "    for ($i = 1; $i -lt $before.Count; $i++) {\n"
         "        $w = $before[$i]\n"
         "        if ($skip) { $skip = $false; continue }\n"
         "        if ($w -eq '--') { return }\n"
         "        if ($w.StartsWith('-')) {\n"
         "            if ($valueOptions[$cmd] -contains $w) { $skip = $true }\n"
         "            continue\n"
         "        }\n"
         "        if ($subcommands[$cmd] -contains $w) { $cmd = ($cmd + ' ' + $w).Trim() }\n"
         "    }\n"
         "    $prev = if ($before.Count -gt 1) { $before[-1] } else { '' }\n"
         "    if ($prev.StartsWith('-') -and ($valueOptions[$cmd] -contains $prev)) {\n"
         "        $candidates = @($choices[\"$cmd|$prev\"])\n"
         "    } elseif ($wordToComplete.StartsWith('-')) {\n"
         "        $candidates = @($options[$cmd])\n"
         "    } else {\n"
         "        $candidates = @($subcommands[$cmd]) + @($choices[\"$cmd|\"])\n"
         "    }\n"
         "    $candidates | Where-Object { $_ -and $_.StartsWith($wordToComplete) } |\n"
         "        ForEach-Object {\n"
         "            [System.Management.Automation.CompletionResult]::new(\n"
         "                $_, $_, 'ParameterValue', $_)\n"
         "        }\n"
         "}\n";
}

}  // namespace

const std::vector<std::string>& completion_shells() {
  static const std::vector<std::string> shells = {"bash", "zsh", "fish", "powershell"};
  return shells;
}

std::optional<std::string> completion_script(const CommandEntry& root, std::string_view shell,
                                             std::string_view default_command) {
  Table t = make_table(root, default_command);
  if (shell == "bash") return bash_script(t);
  if (shell == "zsh") return zsh_script(t);
  if (shell == "fish") return fish_script(t);
  if (shell == "powershell") return powershell_script(t);
  return std::nullopt;
}

}  // namespace dlenv
