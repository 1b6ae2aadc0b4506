#include "actions/env_switch.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "actions/cudnn_install.h"
#include "util/safe_text.h"
#include "util/strings.h"

namespace dlenv {

const char* const kEnvBlockBegin =
    "# >>> dlenv env (written by `dlenv env --persist`; `--undo` removes it) >>>";
const char* const kEnvBlockEnd = "# <<< dlenv env <<<";

namespace {

// `text` without the dlenv block (markers included).
std::string strip_block(const std::string& text, bool* found) {
  *found = false;
  size_t b = text.find(kEnvBlockBegin);
  if (b == std::string::npos) return text;
  size_t e = text.find(kEnvBlockEnd, b);
  if (e == std::string::npos) return text;
  e += std::string_view(kEnvBlockEnd).size();
  if (e < text.size() && text[e] == '\n') ++e;
  *found = true;
  return text.substr(0, b) + text.substr(e);
}

std::string quote_posix(const std::string& s) {
  std::string o = "'";
  for (char c : s) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
}
std::string quote_fish(const std::string& s) {
  std::string o = "'";
  for (char c : s) {
    if (c == '\'' || c == '\\') o += '\\';
    o += c;
  }
  return o + "'";
}
std::string quote_pwsh(const std::string& s) {
  std::string o = "'";
  for (char c : s) o += c == '\'' ? std::string("''") : std::string(1, c);
  return o + "'";
}

}  // namespace

std::optional<Shell> parse_shell(const std::string& name) {
  if (name == "bash" || name == "sh") return Shell::bash;
  if (name == "zsh") return Shell::zsh;
  if (name == "fish") return Shell::fish;
  if (name == "pwsh" || name == "powershell") return Shell::pwsh;
  if (name == "cmd") return Shell::cmd;
  return std::nullopt;
}

const char* shell_name(Shell shell) {
  switch (shell) {
    case Shell::bash: return "bash";
    case Shell::zsh: return "zsh";
    case Shell::fish: return "fish";
    case Shell::pwsh: return "pwsh";
    case Shell::cmd: return "cmd";
  }
  return "bash";
}

std::vector<std::string> shell_names() {
  std::vector<std::string> out;
  for (Shell s : {Shell::bash, Shell::zsh, Shell::fish, Shell::pwsh, Shell::cmd}) {
    out.push_back(shell_name(s));
  }
  return out;
}

Result<EnvSwitch> plan_env_switch(const ProbeContext& ctx, const Version& cuda) {
  const FileSystem& fs = ctx.fs;
  const Os os = ctx.os;
  auto toolkits = find_cuda_toolkits(ctx);
  std::optional<ToolkitLocation> chosen;
  for (const auto& t : toolkits) {
    if (t.version && t.version->truncated(cuda.parts().size()) == cuda) {
      if (!chosen || t.is_default) chosen = t;
    }
  }
  if (!chosen) {
    std::vector<std::string> have;
    for (const auto& t : toolkits) {
      have.push_back(display_path(t.root, os) + (t.version ? " (" + t.version->str() + ")" : ""));
    }
    return fail(
        fmt::format("no CUDA {} toolkit found (found: {}); install it from "
                    "https://developer.nvidia.com/cuda-toolkit-archive",
                    cuda.str(), have.empty() ? "none" : join(have, ", ")));
  }
  EnvSwitch s;
  s.toolkit = chosen->root;
  s.version = *chosen->version;
  const char sep = os == Os::windows ? ';' : ':';
  // The toolkit an entry lies in (it or what it resolves to), or nullptr.
  auto owner = [&](const std::string& entry) -> const ToolkitLocation* {
    std::string logical = logical_toolkit_path(ctx, entry);
    std::string real = fs.real_path(logical).value_or(logical);
    for (const auto& t : toolkits) {
      for (const auto& r : {t.root, t.real}) {
        if (logical == r || starts_with(logical, r + "/") || real == r ||
            starts_with(real, r + "/")) {
          return &t;
        }
      }
    }
    return nullptr;
  };
  auto rebuild = [&](const char* var, std::vector<std::string> first) {
    std::vector<std::string> out = first;
    if (auto v = ctx.env.get(var)) {
      for (const auto& e : split_path_list(*v, sep)) {
        if (const ToolkitLocation* t = owner(e)) {
          if (std::find(first.begin(), first.end(), e) != first.end()) continue;
          s.removed.push_back(t->real == chosen->real
                                  ? e + " (this toolkit under another name; its entry is first now)"
                                  : e + " (CUDA " + (t->version ? t->version->str() : "?") +
                                        " at " + display_path(t->root, os) + ")");
        } else if (std::find(out.begin(), out.end(), e) == out.end()) {
          out.push_back(e);
        }
      }
    }
    return out;
  };
  const std::string tk = chosen->root;
  std::vector<std::string> bins = {display_path(path_join(tk, "bin"), os)};
  if (os == Os::windows && fs.is_dir(path_join(tk, "bin/x64"))) {
    bins.push_back(display_path(path_join(tk, "bin/x64"), os));  // CUDA 13 DLLs
  }
  s.path = rebuild("PATH", bins);
  if (os == Os::linux) {
    std::string lib = "lib64";
    for (const char* d : {"lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"}) {
      if (fs.is_dir(path_join(tk, d))) {
        lib = d;
        break;
      }
    }
    s.ld_library_path = rebuild("LD_LIBRARY_PATH", {path_join(tk, lib)});
  }
  const std::string shown = display_path(tk, os);
  s.set["CUDA_HOME"] = shown;
  s.set["CUDA_PATH"] = shown;
  if (fs.exists(path_join(tk, "include/cudnn_version.h"))) {
    s.set["CUDNN_HOME"] = shown;
  } else {
    s.unset.push_back("CUDNN_HOME");
    s.notes.push_back("no cuDNN inside " + shown + ": `dlenv cudnn install ARCHIVE --cuda " +
                      s.version.truncated(2).str() + "` puts one there");
  }
  if (!fs.exists(path_join(tk, os == Os::windows ? "bin/nvcc.exe" : "bin/nvcc"))) {
    s.notes.push_back(shown + " has no nvcc: it is a run-time-only toolkit");
  }
  return s;
}

std::string render_env_commands(const EnvSwitch& s, Shell shell, Os os) {
  const std::string sep = os == Os::windows ? ";" : ":";
  std::vector<std::pair<std::string, std::string>> vars;
  vars.emplace_back("PATH", join(s.path, sep));
  if (!s.ld_library_path.empty())
    vars.emplace_back("LD_LIBRARY_PATH", join(s.ld_library_path, sep));
  for (const auto& [k, v] : s.set) vars.emplace_back(k, v);
  std::string o;
  for (const auto& [k, v] : vars) {
    switch (shell) {
      case Shell::bash:
      case Shell::zsh: o += "export " + k + "=" + quote_posix(v) + "\n"; break;
      case Shell::fish:
        if (k == "PATH") {
          o += "set -gx PATH";
          for (const auto& p : s.path) o += " " + quote_fish(p);
          o += "\n";
        } else {
          o += "set -gx " + k + " " + quote_fish(v) + "\n";
        }
        break;
      case Shell::pwsh: o += "$env:" + k + " = " + quote_pwsh(v) + "\n"; break;
      case Shell::cmd: o += "set \"" + k + "=" + v + "\"\n"; break;
    }
  }
  for (const auto& k : s.unset) {
    switch (shell) {
      case Shell::bash:
      case Shell::zsh: o += "unset " + k + "\n"; break;
      case Shell::fish: o += "set -e " + k + "\n"; break;
      case Shell::pwsh: o += "Remove-Item Env:" + k + " -ErrorAction SilentlyContinue\n"; break;
      case Shell::cmd: o += "set " + k + "=\n"; break;
    }
  }
  return o;
}

namespace {

// The file an rc path really is: a link (~/.bashrc -> dotfiles/bashrc) is edited at its
// target and stays a link; links in the directories on the way are resolved so that
// the writer, which never follows one, can reach it.
std::string rc_target(const FileSystem& fs, const std::string& file) {
  if (auto real = fs.real_path(file)) return *real;
  const std::string dir = path_dirname(file);
  if (auto real = fs.real_path(dir)) return path_join(*real, path_basename(file));
  return file;
}

// The text outside the dlenv block, ending in a newline as persist writes it.
std::string outside_block(const std::string& text) {
  bool found = false;
  std::string rest = strip_block(text, &found);
  if (!rest.empty() && rest.back() != '\n') rest += '\n';
  return rest;
}

}  // namespace

namespace {

// A new file `path` holding `text`, with the mode and owner of `like`, flushed.
Result<void> write_like(Transaction& tx, const std::string& path, std::string_view text,
                        const FileStat& like) {
  auto f = tx.create_new_file(path, like.mode & 07777, text.size());
  if (!f) return std::unexpected(f.error());
  if (auto x = (*f)->set_owner(like.uid, like.gid); !x) return x;
  if (auto x = (*f)->write(text); !x) return x;
  return (*f)->finish();
}

// The atomic edit of `file`: `text` goes to FILE.dlenv-new in the same directory (the
// mode and owner of the file, flushed), which then takes the file's place in one
// rename: the file is always whole, old or new. Done last in its transaction.
Result<void> replace_atomically(Transaction& tx, FileWriter& w, const std::string& file,
                                std::string_view text, const FileStat& like) {
  const std::string temp = file + ".dlenv-new";
  if (auto x = write_like(tx, temp, text, like); !x) return x;
  return w.replace_file(temp, file);
}

Result<PersistResult> committed(Transaction& tx, PersistResult r) {
  auto done = tx.commit();
  if (!done) return std::unexpected(done.error());
  for (const auto& p : *done) r.what += " (could not delete " + p + ")";
  return r;
}

}  // namespace

Result<PersistResult> persist_env_block(const FileSystem& fs, FileWriter& w, const std::string& rc,
                                        const std::string& commands) {
  PersistResult r;
  const std::string file = rc_target(fs, rc);
  r.file = file;
  const std::string block = std::string(kEnvBlockBegin) + "\n" + commands + kEnvBlockEnd + "\n";
  const std::string backup = file + ".dlenv-backup";
  Transaction tx(w);
  auto st = fs.stat(file);
  if (st && st->type != FileType::regular) return fail(file + " is not a regular file");
  if (!st) {
    auto made =
        tx.make_dirs(path_dirname(file), [&](const std::string& p) { return fs.exists(p); });
    if (!made) return std::unexpected(made.error());
    if (auto x = tx.write_new_file(file, block, 0644); !x) return std::unexpected(x.error());
    r.what = "wrote";
    return committed(tx, r);
  }
  auto text = fs.read_file(file);
  if (!text) return std::unexpected(text.error());
  bool found = false;
  std::string rest = strip_block(*text, &found);
  if (!rest.empty() && rest.back() != '\n') rest += '\n';
  // The original from the first persist stays the one undo restores.
  r.backup = backup;
  if (!fs.exists(backup)) {
    if (auto x = write_like(tx, backup, *text, *st); !x) return std::unexpected(x.error());
  }
  if (auto x = replace_atomically(tx, w, file, rest + block, *st); !x) {
    return std::unexpected(x.error());
  }
  r.what = found ? "replaced the dlenv block in" : "added a dlenv block to";
  return committed(tx, r);
}

Result<PersistResult> undo_persist_env_block(const FileSystem& fs, FileWriter& w,
                                             const std::string& rc) {
  PersistResult r;
  const std::string file = rc_target(fs, rc);
  r.file = file;
  const std::string backup = file + ".dlenv-backup";
  const std::string old = file + ".dlenv-old";
  Transaction tx(w);
  auto st = fs.stat(file);
  if (st && st->type != FileType::regular) return fail(file + " is not a regular file");
  // Lines the user changed outside the block since the persist stay: then only the
  // block goes (the backup is dropped); otherwise the backup comes back byte for byte.
  std::optional<std::string> edited;
  if (fs.exists(backup) && st) {
    auto now = fs.read_file(file);
    auto then = fs.read_file(backup);
    if (!now) return std::unexpected(now.error());
    if (!then) return std::unexpected(then.error());
    if (outside_block(*now) != outside_block(*then)) edited = outside_block(*now);
  }
  if (edited) {
    tx.remove_on_commit(backup);
    if (auto x = replace_atomically(tx, w, file, *edited, *st); !x) {
      return std::unexpected(x.error());
    }
    r.what = "removed the dlenv block (keeping the lines you changed since) from";
    r.backup = backup;
  } else if (fs.exists(backup)) {
    auto x = st ? w.replace_file(backup, file) : tx.rename(backup, file);
    if (!x) return std::unexpected(x.error());
    r.what = "restored";
    r.backup = backup;
  } else {
    auto text = fs.read_file(file);
    if (!text) return fail(file + ": nothing to undo (no dlenv block and no backup)");
    bool found = false;
    std::string rest = strip_block(*text, &found);
    if (!found)
      return fail(file + " has no dlenv block and there is no " + backup + ": nothing to undo");
    if (rest.empty()) {
      if (auto x = tx.rename(file, old); !x) return std::unexpected(x.error());
      tx.remove_on_commit(old);
      r.what = "removed";  // dlenv created it
    } else {
      if (auto x = replace_atomically(tx, w, file, rest, *st); !x) {
        return std::unexpected(x.error());
      }
      r.what = "removed the dlenv block from";
    }
  }
  return committed(tx, r);
}

namespace {

std::string show(const std::optional<UserEnvValue>& v) {
  if (!v) return "(not set)";
  return v->value + (v->expandable ? "" : " [REG_SZ]");
}

}  // namespace

Result<std::vector<std::string>> persist_user_environment(UserEnvironmentStore& store,
                                                          const EnvSwitch& s) {
  // The saved values so far (from an earlier persist that was not undone).
  nlohmann::json saved = nlohmann::json::object();
  auto old = store.load_backup();
  if (!old) return std::unexpected(old.error());
  if (*old) {
    auto j = parse_json_text(**old, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("values") || !j["values"].is_object()) {
      return fail(store.where() +
                  ": the saved backup of an earlier `dlenv env --persist` cannot be read; run "
                  "`dlenv env --undo` or remove it before persisting again");
    }
    saved = j["values"];
  }
  std::vector<std::string> names;
  for (const auto& [k, v] : s.set) names.push_back(k);
  for (const auto& k : s.unset) names.push_back(k);
  std::map<std::string, std::optional<UserEnvValue>> before;
  for (const auto& k : names) {
    auto v = store.get(k);
    if (!v) return std::unexpected(v.error());
    before[k] = *v;
    if (!saved.contains(k)) {
      saved[k] = *v ? nlohmann::json{{"value", (*v)->value}, {"expandable", (*v)->expandable}}
                    : nlohmann::json(nullptr);
    }
  }
  // The backup is written before anything changes: undo works even after a failure below.
  nlohmann::json doc{{"schema", "dlenv.user-env-backup/1"}, {"values", saved}};
  if (auto r = store.save_backup(json_text(doc)); !r) return std::unexpected(r.error());
  std::vector<std::string> changes;
  for (const auto& [k, v] : s.set) {
    UserEnvValue nv{v, true};
    if (before[k] && *before[k] == nv) continue;
    if (auto r = store.set(k, nv); !r) return std::unexpected(r.error());
    changes.push_back(fmt::format("{}: {} -> {}", k, show(before[k]), v));
  }
  for (const auto& k : s.unset) {
    if (!before[k]) continue;
    if (auto r = store.remove(k); !r) return std::unexpected(r.error());
    changes.push_back(fmt::format("{}: {} -> (removed)", k, show(before[k])));
  }
  return changes;
}

Result<std::vector<std::string>> undo_user_environment(UserEnvironmentStore& store) {
  auto old = store.load_backup();
  if (!old) return std::unexpected(old.error());
  if (!*old) {
    return fail(store.where() +
                ": nothing to undo (no `dlenv env --persist` has changed it, or it was undone)");
  }
  auto j = parse_json_text(**old, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("values") || !j["values"].is_object()) {
    return fail(store.where() + ": the saved backup cannot be read (not dlenv.user-env-backup/1)");
  }
  std::vector<std::string> changes;
  for (const auto& [k, v] : j["values"].items()) {
    auto now = store.get(k);
    if (!now) return std::unexpected(now.error());
    std::optional<UserEnvValue> want;
    if (v.is_object() && v.contains("value") && v["value"].is_string()) {
      want = UserEnvValue{v["value"].get<std::string>(), v.value("expandable", true)};
    }
    if (*now == want) continue;
    if (want) {
      if (auto r = store.set(k, *want); !r) return std::unexpected(r.error());
    } else {
      if (auto r = store.remove(k); !r) return std::unexpected(r.error());
    }
    changes.push_back(fmt::format("{}: {} -> {}", k, show(*now), show(want)));
  }
  if (auto r = store.save_backup(std::nullopt); !r) return std::unexpected(r.error());
  return changes;
}

}  // namespace dlenv
