// The generated completion scripts and man page, checked by the real shells and groff:
// syntax (bash -n, zsh -n, fish --no-execute), what bash's completion function offers,
// and a man page that renders without warnings. A shell that is not installed is skipped
// (scripts/install-deps.sh installs zsh and fish).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/cli_test_support.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using testing::run_cli;

struct ShellRun {
  int code = -1;
  std::string out;  // stdout and stderr
};

ShellRun sh(const std::string& command) {
  ShellRun r;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool installed(const std::string& program) {
  return sh("command -v " + program + " >/dev/null").code == 0;
}

class Generated : public ::testing::Test {
 protected:
  // `dlenv ARGS...` written to a file; its path.
  std::string write(const std::string& name, const std::vector<std::string>& args) {
    auto r = run_cli(args);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_FALSE(r.out.empty());
    auto path = dir_ / name;
    std::ofstream(path, std::ios::binary) << r.out;
    return path.string();
  }
  testing::TempTree tree_{"dlenv-completion"};
  const std::filesystem::path& dir_ = tree_.root();
};

TEST_F(Generated, BashScriptParses) {
  auto r = sh("bash -n " + write("dlenv.bash", {"completion", "bash"}));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, "");
}

TEST_F(Generated, ZshScriptParses) {
  if (!installed("zsh")) GTEST_SKIP() << "zsh is not installed (scripts/install-deps.sh)";
  auto r = sh("zsh -n " + write("_dlenv", {"completion", "zsh"}));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, "");
}

TEST_F(Generated, FishScriptParses) {
  if (!installed("fish")) GTEST_SKIP() << "fish is not installed (scripts/install-deps.sh)";
  auto r = sh("fish --no-execute " + write("dlenv.fish", {"completion", "fish"}));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, "");
}

TEST_F(Generated, UnknownShellIsAUsageError) {
  auto r = run_cli({"completion", "tcsh"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("bash, zsh, fish, powershell"), std::string::npos) << r.err;
}

// What bash's completion function offers for the words typed so far (the last one is the
// word at the cursor).
class BashCompletion : public Generated {
 protected:
  void SetUp() override { script_ = write("dlenv.bash", {"completion", "bash"}); }
  std::vector<std::string> complete(const std::vector<std::string>& words) {
    std::string array;
    for (const auto& w : words) array += " '" + w + "'";
    auto driver = dir_ / "driver.bash";
    std::ofstream(driver) << "source '" << script_ << "'\n"
                          << "COMP_WORDS=(" << array << ")\n"
                          << "COMP_CWORD=" << words.size() - 1 << "\n"
                          << "_dlenv\n"
                          << "printf '%s\\n' \"${COMPREPLY[@]}\"\n";
    auto r = sh("bash " + driver.string());
    EXPECT_EQ(r.code, 0) << r.out;
    return split(r.out, '\n');
  }
  std::string script_;
};

TEST_F(BashCompletion, Subcommands) {
  EXPECT_EQ(complete({"dlenv", "cu"}), (std::vector<std::string>{"cudnn"}));
  EXPECT_EQ(complete({"dlenv", "cudnn", "in"}), (std::vector<std::string>{"inspect", "install"}));
  auto all = complete({"dlenv", ""});
  for (const char* c : {"doctor", "verify", "plan", "explain", "deps", "which", "load", "cudnn",
                        "env", "completion", "help"}) {
    EXPECT_NE(std::find(all.begin(), all.end(), c), all.end()) << c;
  }
}

TEST_F(BashCompletion, Flags) {
  EXPECT_EQ(complete({"dlenv", "doctor", "--js"}), (std::vector<std::string>{"--json"}));
  EXPECT_EQ(complete({"dlenv", "cudnn", "install", "--dry"}),
            (std::vector<std::string>{"--dry-run"}));
  // Top level: doctor's flags, since `dlenv --json` is `dlenv doctor --json`.
  EXPECT_EQ(complete({"dlenv", "--mark"}), (std::vector<std::string>{"--markdown"}));
  // A value is not a command: `--root cudnn` stays in doctor.
  EXPECT_EQ(complete({"dlenv", "doctor", "--root", "cudnn", "--str"}),
            (std::vector<std::string>{"--strict"}));
}

TEST_F(BashCompletion, ClosedValueSets) {
  EXPECT_EQ(complete({"dlenv", "doctor", "--os", ""}),
            (std::vector<std::string>{"linux", "windows"}));
  EXPECT_EQ(complete({"dlenv", "plan", "--os", ""}),
            (std::vector<std::string>{"linux", "windows", "wsl2"}));
  EXPECT_EQ(complete({"dlenv", "env", "--shell", "f"}), (std::vector<std::string>{"fish"}));
  EXPECT_EQ(complete({"dlenv", "plan", "--framework", "onnx"}),
            (std::vector<std::string>{"onnxruntime-gpu"}));
  EXPECT_EQ(complete({"dlenv", "completion", "p"}), (std::vector<std::string>{"powershell"}));
  // Finding ids, as `dlenv explain --all` lists them.
  auto ids = split(run_cli({"explain", "--all"}).out, '\n');
  std::vector<std::string> cudnn_ids;
  for (const auto& id : ids) {
    if (id.starts_with("cudnn-")) cudnn_ids.push_back(id);
  }
  ASSERT_FALSE(cudnn_ids.empty());
  auto offered = complete({"dlenv", "explain", "cudnn-"});
  std::sort(offered.begin(), offered.end());
  std::sort(cudnn_ids.begin(), cudnn_ids.end());
  EXPECT_EQ(offered, cudnn_ids);
}

TEST_F(Generated, ManPageRendersWithoutWarningsAndNamesEveryCommand) {
  if (!installed("groff")) GTEST_SKIP() << "groff is not installed";
  auto page = write("dlenv.1", {"help", "--man"});
  auto warnings = sh("groff -man -Tutf8 -ww -z " + page);
  EXPECT_EQ(warnings.code, 0) << warnings.out;
  EXPECT_EQ(warnings.out, "");
  // Plain ASCII: no SGR escapes, no overstrike for bold and underline.
  auto text = sh("groff -man -Tascii -P-cbou " + page);
  for (const char* c :
       {"doctor", "verify", "plan", "explain", "deps", "which", "load", "cudnn inspect",
        "cudnn install", "cudnn uninstall", "cudnn list", "env", "completion", "help"}) {
    EXPECT_NE(text.out.find(std::string("dlenv ") + c), std::string::npos) << c;
  }
  EXPECT_NE(text.out.find("--json"), std::string::npos);
  EXPECT_NE(text.out.find("EXIT STATUS"), std::string::npos);
}

}  // namespace
}  // namespace dlenv
