// `dlenv env --cuda X.Y`: the settings that make one of several CUDA toolkits
// the active one -- PATH and LD_LIBRARY_PATH with every other toolkit's entries
// removed and this one's first, CUDA_HOME / CUDA_PATH, CUDNN_HOME -- printed as
// commands for one shell, or persisted (a marked block in a profile file the user
// names, with a backup and an exact undo; on Windows the user environment in
// HKCU\Environment through UserEnvironmentStore).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actions/file_writer.h"
#include "actions/transaction.h"
#include "probe/probe.h"

namespace dlenv {

enum class Shell { bash, zsh, fish, pwsh, cmd };
std::optional<Shell> parse_shell(const std::string& name);  // also "sh", "powershell"
const char* shell_name(Shell shell);
// Every shell's name (shell_name), in enum order: the values `dlenv env --shell` completes.
std::vector<std::string> shell_names();

struct EnvSwitch {
  std::string toolkit;  // logical root
  Version version;
  std::vector<std::string> path;             // the new PATH, in order
  std::vector<std::string> ld_library_path;  // the new LD_LIBRARY_PATH (Linux)
  std::vector<std::string> removed;          // entries dropped: they belong to other toolkits
  std::map<std::string, std::string> set;    // CUDA_HOME, CUDA_PATH, CUDNN_HOME
  std::vector<std::string> unset;            // CUDNN_HOME when this toolkit has no cuDNN
  std::vector<std::string> notes;
};

// Error (listing the toolkits found) when no toolkit has version `cuda` (X.Y or X).
Result<EnvSwitch> plan_env_switch(const ProbeContext& ctx, const Version& cuda);

// The commands, one per line, for eval / Invoke-Expression.
std::string render_env_commands(const EnvSwitch& s, Shell shell, Os os);

// Persisting: the commands in a block between marker lines in `file` (logical path).
// The marker lines (each on a line of its own):
extern const char* const kEnvBlockBegin;
extern const char* const kEnvBlockEnd;
// The first time an existing file is changed it is copied to `file`.dlenv-backup;
// undo puts that copy back exactly (or removes a file persist created); when lines
// outside the block changed since, undo removes only the block and keeps them. A
// symlinked file (~/.bashrc -> dotfiles/bashrc) is edited at its target and stays a
// link; the file's mode is kept.
struct PersistResult {
  std::string file;
  std::string backup;  // "" when the file did not exist before
  std::string what;    // "wrote", "replaced the dlenv block in", "restored", "removed"
};
Result<PersistResult> persist_env_block(const FileSystem& fs, FileWriter& writer,
                                        const std::string& file, const std::string& commands);
Result<PersistResult> undo_persist_env_block(const FileSystem& fs, FileWriter& writer,
                                             const std::string& file);

// The per-user environment of Windows (HKCU\Environment + WM_SETTINGCHANGE).
// env_store_win32.cc implements it; elsewhere every call fails saying so.
struct UserEnvValue {
  std::string value;
  bool expandable = true;  // REG_EXPAND_SZ (else REG_SZ)
  bool operator==(const UserEnvValue&) const = default;
};
class UserEnvironmentStore {
 public:
  virtual ~UserEnvironmentStore() = default;
  virtual Result<std::optional<UserEnvValue>> get(const std::string& name) const = 0;
  virtual Result<void> set(const std::string& name, const UserEnvValue& value) = 0;
  virtual Result<void> remove(const std::string& name) = 0;
  // Tells running programs (Explorer, new shells) that the environment changed.
  virtual Result<void> broadcast_change() = 0;
  // Where `persist_user_environment` keeps the values it replaced (Windows:
  // HKCU\Software\dlenv, value UserEnvironmentBackup), as text; nullopt = none.
  virtual Result<std::optional<std::string>> load_backup() const = 0;
  virtual Result<void> save_backup(const std::optional<std::string>& text) = 0;
  // "HKCU\Environment" (for messages).
  virtual std::string where() const = 0;
};
std::unique_ptr<UserEnvironmentStore> make_user_environment_store();

// `dlenv env --persist` on Windows: sets s.set and removes s.unset in the store.
// Before the first change the previous value of every variable it touches (absent
// ones too) is saved with save_backup; a later persist adds only variables not
// saved yet, so undo always returns to the state before the first persist.
// Returns one line per change ("CUDA_PATH: C:\old -> C:\new"). PATH is not
// touched (the user part of PATH comes after the system part, which holds the
// CUDA installer's entries: a user entry cannot win; the note says so).
Result<std::vector<std::string>> persist_user_environment(UserEnvironmentStore& store,
                                                          const EnvSwitch& s);
// `dlenv env --undo` on Windows: puts back every saved value exactly (value and
// type), removes the ones that did not exist, deletes the backup. Error when no
// backup exists (nothing to undo).
Result<std::vector<std::string>> undo_user_environment(UserEnvironmentStore& store);

}  // namespace dlenv
