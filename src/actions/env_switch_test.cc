#include "actions/env_switch.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "actions/cudnn_install.h"
#include "actions/cudnn_test_support.h"
#include "platform/env.h"
#include "platform/filesystem.h"

namespace dlenv {
namespace {

using testing::TempDir;
namespace sfs = std::filesystem;

std::shared_ptr<const Kb> kb() {
  static auto k = Kb::load_embedded();
  return *k;
}

// Two toolkits (12.4 with cuDNN, 13.0 without) and /usr/local/cuda -> cuda-13.0.
struct TwoToolkits {
  TempDir root{"envroot"};
  std::unique_ptr<FileSystem> fs;
  TwoToolkits() {
    for (auto [dir, ver] :
         {std::pair{"usr/local/cuda-12.4", "12.4.1"}, {"usr/local/cuda-13.0", "13.0.2"}}) {
      testing::write_file(root.at(std::string(dir) + "/version.json"),
                          std::string("{\"cuda\": {\"version\": \"") + ver + "\"}}");
      testing::write_file(root.at(std::string(dir) + "/bin/nvcc"), "#!/bin/sh\n", 0755);
      sfs::create_directories(root.at(std::string(dir) + "/lib64"));
    }
    testing::write_file(root.at("usr/local/cuda-12.4/include/cudnn_version.h"),
                        testing::version_header(9, 1, 0));
    sfs::create_symlink("cuda-13.0", root.at("usr/local/cuda"));
    fs = make_rooted_filesystem(root.path());
  }
};

TEST(EnvSwitch, OtherToolkitsLeavePathAndLdLibraryPath) {
  TwoToolkits t;
  auto env =
      make_map_env({{"PATH", "/usr/local/cuda/bin:/home/me/bin:/usr/local/cuda-13.0/bin:/usr/bin"},
                    {"LD_LIBRARY_PATH", "/usr/local/cuda-13.0/lib64:/opt/mylib"}});
  ProbeContext ctx{*t.fs, *env, *kb(), Os::linux, false, "test"};
  auto s = plan_env_switch(ctx, Version{12, 4});
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->toolkit, "/usr/local/cuda-12.4");
  EXPECT_EQ(s->path,
            (std::vector<std::string>{"/usr/local/cuda-12.4/bin", "/home/me/bin", "/usr/bin"}));
  EXPECT_EQ(s->ld_library_path,
            (std::vector<std::string>{"/usr/local/cuda-12.4/lib64", "/opt/mylib"}));
  EXPECT_EQ(s->removed.size(), 3u);
  EXPECT_EQ(s->set.at("CUDNN_HOME"), "/usr/local/cuda-12.4");
  EXPECT_EQ(render_env_commands(*s, Shell::bash, Os::linux),
            "export PATH='/usr/local/cuda-12.4/bin:/home/me/bin:/usr/bin'\n"
            "export LD_LIBRARY_PATH='/usr/local/cuda-12.4/lib64:/opt/mylib'\n"
            "export CUDA_HOME='/usr/local/cuda-12.4'\n"
            "export CUDA_PATH='/usr/local/cuda-12.4'\n"
            "export CUDNN_HOME='/usr/local/cuda-12.4'\n");
  std::string fish = render_env_commands(*s, Shell::fish, Os::linux);
  EXPECT_NE(fish.find("set -gx PATH '/usr/local/cuda-12.4/bin' '/home/me/bin' '/usr/bin'\n"),
            std::string::npos)
      << fish;
  std::string pwsh = render_env_commands(*s, Shell::pwsh, Os::linux);
  EXPECT_NE(pwsh.find("$env:CUDA_HOME = '/usr/local/cuda-12.4'\n"), std::string::npos) << pwsh;
  std::string cmd = render_env_commands(*s, Shell::cmd, Os::linux);
  EXPECT_NE(cmd.find("set \"CUDA_PATH=/usr/local/cuda-12.4\"\n"), std::string::npos) << cmd;
  // 13.0 has no cuDNN: CUDNN_HOME is unset, in every shell's words.
  auto s13 = plan_env_switch(ctx, Version{13, 0});
  ASSERT_TRUE(s13);
  EXPECT_EQ(s13->unset, std::vector<std::string>{"CUDNN_HOME"});
  EXPECT_NE(render_env_commands(*s13, Shell::zsh, Os::linux).find("unset CUDNN_HOME\n"),
            std::string::npos);
  EXPECT_NE(render_env_commands(*s13, Shell::fish, Os::linux).find("set -e CUDNN_HOME\n"),
            std::string::npos);
  auto none = plan_env_switch(ctx, Version{11, 8});
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("no CUDA 11.8 toolkit found"), std::string::npos);
  EXPECT_NE(none.error().message.find("/usr/local/cuda-12.4 (12.4.1)"), std::string::npos);
}

TEST(EnvSwitch, QuotesSurviveTheShells) {
  EnvSwitch s;
  s.path = {"/opt/it's here/bin"};
  s.set["CUDA_HOME"] = "/opt/it's here";
  EXPECT_EQ(render_env_commands(s, Shell::bash, Os::linux),
            "export PATH='/opt/it'\\''s here/bin'\nexport CUDA_HOME='/opt/it'\\''s here'\n");
  EXPECT_NE(
      render_env_commands(s, Shell::pwsh, Os::linux).find("$env:PATH = '/opt/it''s here/bin'"),
      std::string::npos);
  EXPECT_NE(render_env_commands(s, Shell::fish, Os::linux).find("'/opt/it\\'s here/bin'"),
            std::string::npos);
}

TEST(EnvSwitch, WindowsPathsAndSeparators) {
  TempDir root("envwin");
  const std::string tk = "Program Files/NVIDIA GPU Computing Toolkit/CUDA/v12.4";
  testing::write_file(root.at(tk + "/version.json"), "{\"cuda\": {\"version\": \"12.4.1\"}}");
  testing::write_file(root.at(tk + "/bin/nvcc.exe"), "MZ");
  testing::write_file(root.at("Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.8/version.json"),
                      "{\"cuda\": {\"version\": \"11.8.0\"}}");
  auto fs = make_rooted_filesystem(root.path());
  auto env = make_map_env({{"PATH",
                            "C:\\Program Files\\NVIDIA GPU Computing "
                            "Toolkit\\CUDA\\v11.8\\bin;C:\\Windows\\system32"}});
  ProbeContext ctx{*fs, *env, *kb(), Os::windows, false, "test"};
  auto s = plan_env_switch(ctx, Version{12, 4});
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(render_env_commands(*s, Shell::pwsh, Os::windows),
            "$env:PATH = 'C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4\\bin;"
            "C:\\Windows\\system32'\n"
            "$env:CUDA_HOME = 'C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4'\n"
            "$env:CUDA_PATH = 'C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4'\n"
            "Remove-Item Env:CUDNN_HOME -ErrorAction SilentlyContinue\n");
}

TEST(EnvPersist, BlockBackupAndExactUndo) {
  TempDir root("persist");
  const std::string original = "# my bashrc\nalias ll='ls -l'\n";
  testing::write_file(root.at("home/me/.bashrc"), original, 0600);
  auto fs = make_rooted_filesystem(root.path());
  auto w = make_file_writer(root.path());
  auto r = persist_env_block(*fs, *w, "/home/me/.bashrc", "export CUDA_HOME='/a'\n");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->backup, "/home/me/.bashrc.dlenv-backup");
  std::string text = testing::read_host_file(root.at("home/me/.bashrc"));
  EXPECT_EQ(text.substr(0, original.size()), original);
  EXPECT_NE(text.find("export CUDA_HOME='/a'\n# <<< dlenv env <<<\n"), std::string::npos) << text;
  EXPECT_EQ(sfs::status(root.at("home/me/.bashrc")).permissions(), sfs::perms(0600));
  // A second persist replaces the block (one block, the backup stays the original).
  ASSERT_TRUE(persist_env_block(*fs, *w, "/home/me/.bashrc", "export CUDA_HOME='/b'\n"));
  text = testing::read_host_file(root.at("home/me/.bashrc"));
  EXPECT_EQ(text.find("'/a'"), std::string::npos);
  EXPECT_EQ(text.find("# >>> dlenv env"), text.rfind("# >>> dlenv env"));
  EXPECT_EQ(testing::read_host_file(root.at("home/me/.bashrc.dlenv-backup")), original);
  auto u = undo_persist_env_block(*fs, *w, "/home/me/.bashrc");
  ASSERT_TRUE(u) << u.error().message;
  EXPECT_EQ(u->what, "restored");
  EXPECT_EQ(testing::read_host_file(root.at("home/me/.bashrc")), original);
  EXPECT_FALSE(sfs::exists(root.at("home/me/.bashrc.dlenv-backup")));
  EXPECT_FALSE(sfs::exists(root.at("home/me/.bashrc.dlenv-old")));
  EXPECT_FALSE(undo_persist_env_block(*fs, *w, "/home/me/.bashrc"));
}

TEST(EnvPersist, AFileItCreatedIsRemovedByUndo) {
  TempDir root("persist2");
  auto fs = make_rooted_filesystem(root.path());
  auto w = make_file_writer(root.path());
  auto r = persist_env_block(*fs, *w, "/conf.d/dlenv.fish", "set -gx CUDA_HOME '/a'\n");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->what, "wrote");
  auto u = undo_persist_env_block(*fs, *w, "/conf.d/dlenv.fish");
  ASSERT_TRUE(u) << u.error().message;
  EXPECT_EQ(u->what, "removed");
  EXPECT_FALSE(sfs::exists(root.at("conf.d/dlenv.fish")));
}

// Lines the user adds after the persist survive the undo; a symlinked rc is edited at
// its target and stays a link; mode 0600 is kept.
TEST(EnvPersist, UndoKeepsUserLinesAndALinkedRc) {
  TempDir root("persist3");
  const std::string original = "# dotfiles bashrc\nalias ll='ls -l'\n";
  testing::write_file(root.at("home/me/dotfiles/bashrc"), original, 0600);
  sfs::create_symlink("dotfiles/bashrc", root.at("home/me/.bashrc"));
  auto fs = make_rooted_filesystem(root.path());
  auto w = make_file_writer(root.path());
  auto r = persist_env_block(*fs, *w, "/home/me/.bashrc", "export CUDA_HOME='/a'\n");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->file, "/home/me/dotfiles/bashrc");
  EXPECT_EQ(sfs::read_symlink(root.at("home/me/.bashrc")), "dotfiles/bashrc");
  EXPECT_EQ(sfs::status(root.at("home/me/dotfiles/bashrc")).permissions(), sfs::perms(0600));
  std::string text = testing::read_host_file(root.at("home/me/dotfiles/bashrc"));
  ASSERT_NE(text.find("export CUDA_HOME='/a'"), std::string::npos);
  // The user adds a line after the block.
  testing::write_file(root.at("home/me/dotfiles/bashrc"), text + "export EDITOR=vim\n", 0600);
  auto u = undo_persist_env_block(*fs, *w, "/home/me/.bashrc");
  ASSERT_TRUE(u) << u.error().message;
  EXPECT_EQ(testing::read_host_file(root.at("home/me/dotfiles/bashrc")),
            original + "export EDITOR=vim\n");
  EXPECT_EQ(sfs::read_symlink(root.at("home/me/.bashrc")), "dotfiles/bashrc");
  EXPECT_EQ(sfs::status(root.at("home/me/dotfiles/bashrc")).permissions(), sfs::perms(0600));
  EXPECT_FALSE(sfs::exists(root.at("home/me/dotfiles/bashrc.dlenv-backup")));
  EXPECT_FALSE(sfs::exists(root.at("home/me/dotfiles/bashrc.dlenv-old")));
}

// Lines the user adds before and after the block survive byte for byte; the rc is
// replaced in one rename through its link (never a moment without it), keeping mode
// 0600 and, as root, a foreign owner; nothing of dlenv's is left next to it.
TEST(EnvPersist, ByteExactAroundTheBlockAtomicKeepingModeAndOwner) {
  TempDir root("persist4");
  const std::string original = "# rc\nexport A=1\n";
  testing::write_file(root.at("home/me/dotfiles/bashrc"), original, 0600);
  sfs::create_symlink("dotfiles/bashrc", root.at("home/me/.bashrc"));
  const std::string target = root.at("home/me/dotfiles/bashrc");
  const bool as_root = ::geteuid() == 0;
  if (as_root) {
    ASSERT_EQ(::chown(target.c_str(), 4321, 4322), 0);
  }
  auto fs = make_rooted_filesystem(root.path());
  auto w = make_file_writer(root.path());
  auto owner = [&] {
    struct stat st {};
    ::stat(target.c_str(), &st);
    return std::pair<uid_t, gid_t>(st.st_uid, st.st_gid);
  };
  const auto owner_before = owner();
  ASSERT_TRUE(persist_env_block(*fs, *w, "/home/me/.bashrc", "export CUDA_HOME='/a'\n"));
  std::string text = testing::read_host_file(target);
  const size_t at = text.find(kEnvBlockBegin);
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_EQ(text.substr(0, at), original);
  // The user adds a line before and one after the block.
  const std::string edited = "export BEFORE=1\n" + text + "export AFTER=1\n";
  testing::write_file(target, edited, 0600);
  if (as_root) {
    ASSERT_EQ(::chown(target.c_str(), 4321, 4322), 0);
  }
  // A second persist replaces only the block.
  ASSERT_TRUE(persist_env_block(*fs, *w, "/home/me/.bashrc", "export CUDA_HOME='/b'\n"));
  text = testing::read_host_file(target);
  EXPECT_EQ(text.find("'/a'"), std::string::npos);
  EXPECT_EQ(text.substr(0, 16 + original.size()), "export BEFORE=1\n" + original);
  EXPECT_TRUE(text.ends_with(std::string(kEnvBlockEnd) + "\n")) << text;
  EXPECT_NE(text.find("export AFTER=1\n"), std::string::npos);
  EXPECT_EQ(sfs::status(target).permissions(), sfs::perms(0600));
  EXPECT_EQ(owner(), owner_before);
  EXPECT_EQ(sfs::read_symlink(root.at("home/me/.bashrc")), "dotfiles/bashrc");
  EXPECT_FALSE(sfs::exists(target + ".dlenv-new"));
  EXPECT_EQ(testing::read_host_file(target + ".dlenv-backup"), original);
  // Undo: exactly the user's lines, no block, mode and owner kept.
  auto u = undo_persist_env_block(*fs, *w, "/home/me/.bashrc");
  ASSERT_TRUE(u) << u.error().message;
  EXPECT_EQ(testing::read_host_file(target), "export BEFORE=1\n" + original + "export AFTER=1\n");
  EXPECT_EQ(sfs::status(target).permissions(), sfs::perms(0600));
  EXPECT_EQ(owner(), owner_before);
  EXPECT_FALSE(sfs::exists(target + ".dlenv-new"));
  EXPECT_FALSE(sfs::exists(target + ".dlenv-backup"));
  EXPECT_EQ(sfs::read_symlink(root.at("home/me/.bashrc")), "dotfiles/bashrc");
}

TEST(UserEnvironmentStore, SaysItIsWindowsOnlyHere) {
  auto store = make_user_environment_store();
  auto r = store->set("CUDA_PATH", UserEnvValue{"x"});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("only on Windows"), std::string::npos);
}

// HKCU\Environment as a map (the Wine test tests/fixtures/win/env_persist.cmake runs
// the registry one).
class FakeUserEnvironment : public UserEnvironmentStore {
 public:
  std::map<std::string, UserEnvValue> values;
  std::optional<std::string> backup;
  std::string fail_set;  // set() of this name fails
  Result<std::optional<UserEnvValue>> get(const std::string& name) const override {
    auto it = values.find(name);
    if (it == values.end()) return std::optional<UserEnvValue>();
    return std::optional<UserEnvValue>(it->second);
  }
  Result<void> set(const std::string& name, const UserEnvValue& v) override {
    if (name == fail_set) return fail(name + ": access denied");
    values[name] = v;
    return {};
  }
  Result<void> remove(const std::string& name) override {
    values.erase(name);
    return {};
  }
  Result<void> broadcast_change() override { return {}; }
  Result<std::optional<std::string>> load_backup() const override { return backup; }
  Result<void> save_backup(const std::optional<std::string>& t) override {
    backup = t;
    return {};
  }
  std::string where() const override { return "HKCU\\Environment (fake)"; }
};

TEST(UserEnvironment, PersistThenUndoRestoresValuesTypesAndAbsence) {
  FakeUserEnvironment store;
  store.values["CUDA_PATH"] = {"C:\\old", false};  // REG_SZ, as the CUDA installer writes it
  store.values["CUDNN_HOME"] = {"C:\\cudnn-old", true};
  store.values["OTHER"] = {"kept", true};
  const auto original = store.values;
  EnvSwitch sw;
  sw.set = {{"CUDA_PATH", "C:\\CUDA\\v11.7"}, {"CUDA_HOME", "C:\\CUDA\\v11.7"}};
  sw.unset = {"CUDNN_HOME"};
  auto r = persist_user_environment(store, sw);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(store.values["CUDA_PATH"], (UserEnvValue{"C:\\CUDA\\v11.7", true}));
  EXPECT_EQ(store.values["CUDA_HOME"].value, "C:\\CUDA\\v11.7");
  EXPECT_EQ(store.values.count("CUDNN_HOME"), 0u);
  EXPECT_EQ(r->size(), 3u);
  ASSERT_TRUE(store.backup);
  // A second persist (another version) keeps the first backup: undo goes back to the start.
  sw.set = {{"CUDA_PATH", "C:\\CUDA\\v12.4"}, {"CUDA_HOME", "C:\\CUDA\\v12.4"}};
  sw.unset.clear();
  ASSERT_TRUE(persist_user_environment(store, sw));
  EXPECT_EQ(store.values["CUDA_PATH"].value, "C:\\CUDA\\v12.4");
  auto u = undo_user_environment(store);
  ASSERT_TRUE(u) << u.error().message;
  EXPECT_EQ(store.values, original);  // CUDA_HOME, absent before, is deleted again
  EXPECT_FALSE(store.backup);
  auto again = undo_user_environment(store);
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message.find("nothing to undo"), std::string::npos);
}

TEST(UserEnvironment, AFailedWriteLeavesABackupThatUndoes) {
  FakeUserEnvironment store;
  store.values["CUDA_PATH"] = {"C:\\old", true};
  store.fail_set = "CUDA_PATH";
  EnvSwitch sw;
  sw.set = {{"CUDA_HOME", "C:\\new"}, {"CUDA_PATH", "C:\\new"}};
  auto r = persist_user_environment(store, sw);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("CUDA_PATH: access denied"), std::string::npos);
  EXPECT_EQ(store.values.count("CUDA_HOME"), 1u);  // written before the failure
  store.fail_set.clear();
  ASSERT_TRUE(undo_user_environment(store));
  EXPECT_EQ(store.values.size(), 1u);
  EXPECT_EQ(store.values["CUDA_PATH"].value, "C:\\old");
}

TEST(UserEnvironment, UnreadableBackupIsRefused) {
  FakeUserEnvironment store;
  store.backup = "not json";
  EnvSwitch sw;
  sw.set = {{"CUDA_PATH", "x"}};
  auto r = persist_user_environment(store, sw);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("cannot be read"), std::string::npos);
  EXPECT_TRUE(store.values.empty());
  EXPECT_FALSE(undo_user_environment(store));
}

// A Windows toolkit argument keeps its drive on the machine itself (the current directory's
// drive must not matter) and is read as drive C: under --root, as every Windows probe reads
// paths (probe/windows_probes.h, win_logical).
TEST(EnvSwitch, WindowsToolkitArgumentKeepsItsDriveOnTheMachineItself) {
  auto env = make_map_env({});
  auto real = make_real_filesystem();
  ProbeContext live{*real, *env, *kb(), Os::windows, false, "test"};
  EXPECT_EQ(logical_toolkit_path(live, "D:\\CUDA\\v12.4\\"), "D:/CUDA/v12.4");
  EXPECT_EQ(
      logical_toolkit_path(live, "c:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4"),
      "C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v12.4");
  TempDir root("winroot");
  auto rooted = make_rooted_filesystem(root.path());
  ProbeContext sysroot{*rooted, *env, *kb(), Os::windows, false, "test"};
  EXPECT_EQ(logical_toolkit_path(sysroot, "C:\\CUDA\\v12.4"), "/CUDA/v12.4");
  EXPECT_EQ(logical_toolkit_path(sysroot, "D:\\CUDA\\v12.4"), "") << "only C: is in the root";
  ProbeContext linux_ctx{*real, *env, *kb(), Os::linux, false, "test"};
  EXPECT_EQ(logical_toolkit_path(linux_ctx, "/usr/local/cuda/../cuda-12.4/"),
            "/usr/local/cuda-12.4");
}

}  // namespace
}  // namespace dlenv
