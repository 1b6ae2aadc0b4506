// Colour in every command's text output: NO_COLOR, FORCE_COLOR and CLICOLOR_FORCE as
// color_wanted() (report/report.h) orders them; nothing but plain text into a pipe.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <optional>
#include <string>
#include <vector>

#include "cli/cli_test_support.h"
#include "cli/highlight.h"

namespace dlenv {
namespace {

using testing::run_cli;

// Sets (or unsets, with nullopt) the colour variables for one test; restores them after.
class ColorEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : kVars) {
      const char* old = std::getenv(v);
      saved_.push_back(old ? std::optional<std::string>(old) : std::nullopt);
      ::unsetenv(v);
    }
  }
  void TearDown() override {
    for (size_t i = 0; i < std::size(kVars); ++i) {
      if (saved_[i]) {
        ::setenv(kVars[i], saved_[i]->c_str(), 1);
      } else {
        ::unsetenv(kVars[i]);
      }
    }
  }
  static void set(const char* name, const char* value) { ::setenv(name, value, 1); }
  static bool has_escape(const std::string& s) { return s.find('\x1b') != std::string::npos; }
  std::vector<std::string> doctor() {
    return {"doctor", "--root", root_.string(), "--os", "linux"};
  }
  static constexpr const char* kVars[] = {"NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE"};
  std::vector<std::optional<std::string>> saved_;
  testing::TempTree tree_{"dlenv-color"};
  const std::filesystem::path& root_ = tree_.root();
};

const std::vector<std::string> kPlan = {"plan", "--no-probe", "--framework", "torch"};

TEST_F(ColorEnv, NotATerminalMeansPlainText) {
  EXPECT_FALSE(has_escape(run_cli(doctor()).out));
  EXPECT_FALSE(has_escape(run_cli(kPlan).out));
  EXPECT_FALSE(has_escape(run_cli({"explain", "cudnn-header-library-mismatch"}).out));
}

TEST_F(ColorEnv, ForcedIntoAPipe) {
  set("FORCE_COLOR", "1");
  EXPECT_TRUE(has_escape(run_cli(doctor()).out));
  auto plan = run_cli(kPlan);
  EXPECT_TRUE(has_escape(plan.out)) << plan.out;
  EXPECT_NE(plan.out.find("\x1b[1mdlenv plan\x1b[0m"), std::string::npos) << plan.out;
  EXPECT_TRUE(has_escape(run_cli({"explain", "cudnn-header-library-mismatch"}).out));
  // JSON, the id list and shell code stay plain.
  auto json = run_cli({"plan", "--no-probe", "--json"});
  EXPECT_FALSE(has_escape(json.out));
  EXPECT_FALSE(has_escape(run_cli({"explain", "--all"}).out));
  ::unsetenv("FORCE_COLOR");
  set("CLICOLOR_FORCE", "yes");
  EXPECT_TRUE(has_escape(run_cli(kPlan).out));
  set("CLICOLOR_FORCE", "0");
  EXPECT_FALSE(has_escape(run_cli(kPlan).out));
}

TEST_F(ColorEnv, NoColorWinsOverForce) {
  set("FORCE_COLOR", "1");
  set("NO_COLOR", "1");
  EXPECT_FALSE(has_escape(run_cli(doctor()).out));
  EXPECT_FALSE(has_escape(run_cli(kPlan).out));
  set("NO_COLOR", "");  // empty: not set
  EXPECT_TRUE(has_escape(run_cli(kPlan).out));
  auto no_color_flag = doctor();
  no_color_flag.push_back("--no-color");
  EXPECT_FALSE(has_escape(run_cli(no_color_flag).out));
}

TEST(Highlight, OneConventionForEveryCommand) {
  EXPECT_EQ(highlight_line("Conflicts"), "\x1b[1mConflicts\x1b[0m");
  EXPECT_EQ(highlight_line("  [error] libfoo.so not found"),
            "  \x1b[31m[error]\x1b[0m libfoo.so not found");
  EXPECT_EQ(highlight_line("  error    missing import"),
            "  \x1b[31merror\x1b[0m    missing import");
  EXPECT_EQ(highlight_line("warning: two copies"), "\x1b[33mwarning\x1b[0m: two copies");
  EXPECT_EQ(highlight_line("failed to load libcudnn.so.9"),
            "\x1b[31mfailed\x1b[0m to load libcudnn.so.9");
  EXPECT_EQ(highlight_line("  ! torch 2.5 needs CUDA 12"),
            "  \x1b[33m!\x1b[0m torch 2.5 needs CUDA 12");
  EXPECT_EQ(highlight_line("  plain detail"), "  plain detail");
  EXPECT_EQ(highlight_line(""), "");
  EXPECT_EQ(highlight_line("/usr/lib/libx.so"), "/usr/lib/libx.so");
}

}  // namespace
}  // namespace dlenv
