// What users expect of a command line: `dlenv --json` as the doctor shorthand, conflicting
// output flags refused, "did you mean" for typos, `dlenv help COMMAND`, help in 80 columns.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "cli/cli_test_support.h"
#include "cli/help_format.h"
#include "cli/suggest.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using testing::run_cli;

class EmptyRoot : public ::testing::Test {
 protected:
  testing::TempTree tree_{"dlenv-cli-conventions"};
  const std::filesystem::path& root_ = tree_.root();
};

TEST(Suggest, NearestNameWhenItIsATypo) {
  const std::vector<std::string> commands = {"doctor", "verify", "plan", "explain", "deps"};
  EXPECT_EQ(closest_name("docter", commands), "doctor");
  EXPECT_EQ(closest_name("dcotor", commands), "doctor");  // a transposition is one edit
  EXPECT_EQ(closest_name("pln", commands), "plan");
  EXPECT_EQ(closest_name("xyzzy", commands), std::nullopt);
  EXPECT_EQ(closest_name("de", commands), std::nullopt);  // too short to guess
  const std::vector<std::string> flags = {"--json", "--markdown", "--strict", "-v", "--verbose"};
  EXPECT_EQ(closest_name("--jsn", flags), "--json");
  EXPECT_EQ(closest_name("--mark", flags), "--markdown");  // the one name it starts
  EXPECT_EQ(closest_name("--zzz", flags), std::nullopt);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
}

TEST(DidYouMean, MistypedCommandAndFlag) {
  auto r = run_cli({"docter"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("unknown command 'docter'; did you mean `doctor`?"), std::string::npos)
      << r.err;
  r = run_cli({"doctor", "--jsn"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("dlenv doctor: unknown option '--jsn'; did you mean `--json`?"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("Run `dlenv doctor --help`"), std::string::npos) << r.err;
  r = run_cli({"cudnn", "instal", "x.tar.xz"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("did you mean `install`?"), std::string::npos) << r.err;
  r = run_cli({"--jsn"});  // the doctor shorthand, mistyped
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("did you mean `--json`?"), std::string::npos) << r.err;
  // A closed value set names the closest value.
  r = run_cli({"plan", "--os", "wsl3", "--no-probe"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("did you mean `wsl2`?"), std::string::npos) << r.err;
  r = run_cli({"help", "verfy"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("did you mean `verify`?"), std::string::npos) << r.err;
}

TEST_F(EmptyRoot, ConflictingOutputFlagsAreAUsageError) {
  for (auto args : std::vector<std::vector<std::string>>{{"doctor", "--json", "--markdown"},
                                                         {"--markdown", "--json"}}) {
    args.insert(args.end(), {"--root", root_.string(), "--os", "linux"});
    auto r = run_cli(args);
    EXPECT_EQ(r.code, kExitUsage) << join(args, " ");
    EXPECT_NE(r.err.find("cannot be used together"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
  auto r = run_cli({"deps", "--tree", "--flat", "libcuda.so.1"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("cannot be used together"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--flat"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--tree"), std::string::npos) << r.err;
}

TEST_F(EmptyRoot, DoctorFlagsWithoutTheWordDoctor) {
  auto json = run_cli({"--json", "--root", root_.string(), "--os", "linux"});
  EXPECT_NE(json.code, kExitUsage) << json.err;
  EXPECT_NE(json.out.find("\"schema\": \"dlenv.report/1\""), std::string::npos) << json.out;
  auto doctor = run_cli({"doctor", "--json", "--root", root_.string(), "--os", "linux"});
  auto facts = [](const std::string& report) {  // timing_ms differs from run to run
    return report.substr(0, report.find("\"timing_ms\""));
  };
  EXPECT_EQ(facts(json.out), facts(doctor.out));
  EXPECT_EQ(json.code, doctor.code);
  auto md = run_cli({"--markdown", "--root", root_.string(), "--os", "linux"});
  EXPECT_TRUE(md.out.starts_with("### dlenv")) << md.out;
  auto help = run_cli({"--help"});  // the top level's own flags stay its own
  EXPECT_EQ(help.code, kExitOk);
  EXPECT_NE(help.out.find("Subcommands:"), std::string::npos);
}

TEST_F(EmptyRoot, MarkdownRedactsByDefault) {
  std::filesystem::create_directories(root_ / "etc");
  std::ofstream(root_ / "etc/hostname") << "secret-node-3\n";
  const std::vector<std::string> base = {"--root", root_.string(), "--os", "linux"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), base.begin(), base.end());
    return run_cli(args);
  };
  auto md = with({"--markdown"});
  EXPECT_EQ(md.out.find("secret-node-3"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("Redacted: hostname, user, home, GPU UUIDs — pass --no-redact"),
            std::string::npos)
      << md.out;
  EXPECT_NE(md.out.find("<host>"), std::string::npos) << md.out;
  auto kept = with({"--markdown", "--no-redact"});
  EXPECT_NE(kept.out.find("secret-node-3"), std::string::npos);
  EXPECT_EQ(kept.out.find("Redacted:"), std::string::npos);
  auto json = with({"--json", "--redact"});
  EXPECT_NE(json.out.find("\"value\": \"<host>\""), std::string::npos) << json.out;
  EXPECT_EQ(json.out.find("secret-node-3"), std::string::npos);
  EXPECT_NE(with({"--json"}).out.find("secret-node-3"), std::string::npos);
  auto text = with({"doctor", "--redact"});
  EXPECT_EQ(text.out.find("secret-node-3"), std::string::npos);
  EXPECT_EQ(with({"--redact", "--no-redact"}).code, kExitUsage);
}

// The CPU line of a bug report: /proc/cpuinfo under --root, the Windows variables there.
TEST_F(EmptyRoot, CpuModelAndCount) {
  std::filesystem::create_directories(root_ / "proc");
  std::ofstream(root_ / "proc/cpuinfo")
      << "processor\t: 0\nmodel name\t: AMD EPYC 9654 96-Core Processor\n\n"
         "processor\t: 1\nmodel name\t: AMD EPYC 9654 96-Core Processor\n";
  auto md = run_cli({"--markdown", "--root", root_.string(), "--os", "linux"});
  EXPECT_NE(md.out.find("| CPU | AMD EPYC 9654 96-Core Processor, 2 logical CPUs |"),
            std::string::npos)
      << md.out;
  std::ofstream(root_ / "env") << "PROCESSOR_IDENTIFIER=Intel64 Family 6 Model 183 Stepping 1, "
                                  "GenuineIntel\nNUMBER_OF_PROCESSORS=32\n";
  auto win = run_cli({"--json", "--root", root_.string(), "--os", "windows", "--env-file",
                      (root_ / "env").string()});
  EXPECT_NE(win.out.find("\"value\": \"Intel64 Family 6 Model 183 Stepping 1, GenuineIntel\""),
            std::string::npos)
      << win.out;
  EXPECT_NE(win.out.find("\"value\": 32"), std::string::npos);
}

// Every command of the table, found from `dlenv help PATH`'s "Subcommands:" section.
std::vector<std::vector<std::string>> all_command_paths() {
  std::vector<std::vector<std::string>> paths = {{}}, todo = {{}};
  while (!todo.empty()) {
    auto path = todo.back();
    todo.pop_back();
    std::vector<std::string> args = {"help"};
    args.insert(args.end(), path.begin(), path.end());
    auto lines = split_lines(run_cli(args).out);
    auto it = std::find(lines.begin(), lines.end(), "Subcommands:");
    if (it == lines.end()) continue;
    for (++it; it != lines.end() && it->starts_with("  "); ++it) {
      if (it->starts_with("   ")) continue;  // a wrapped description
      auto name = split(trim(*it), ' ').front();
      auto child = path;
      child.push_back(name);
      paths.push_back(child);
      todo.push_back(child);
    }
  }
  return paths;
}

TEST(Help, EveryLineFitsIn80Columns) {
  auto paths = all_command_paths();
  EXPECT_GE(paths.size(), 15u);  // dlenv, 11 commands, cudnn's 4
  for (const auto& path : paths) {
    std::vector<std::string> args = path;
    args.push_back("--help");
    auto r = run_cli(args);
    EXPECT_EQ(r.code, kExitOk) << join(args, " ");
    for (const auto& line : split_lines(r.out)) {
      size_t cols = 0;
      for (char ch : line) cols += (static_cast<unsigned char>(ch) & 0xC0) != 0x80 ? 1 : 0;
      EXPECT_LE(cols, kHelpWidth) << "dlenv " << join(args, " ") << ":\n" << line;
    }
  }
}

TEST(Help, HelpCommandIsCommandHelp) {
  for (std::vector<std::string> path :
       {std::vector<std::string>{"doctor"}, std::vector<std::string>{"cudnn", "install"},
        std::vector<std::string>{"env"}}) {
    std::vector<std::string> help = {"help"};
    help.insert(help.end(), path.begin(), path.end());
    path.push_back("--help");
    auto a = run_cli(help);
    auto b = run_cli(path);
    EXPECT_EQ(a.code, kExitOk);
    EXPECT_EQ(a.out, b.out) << join(path, " ");
    EXPECT_NE(a.out.find("Usage: dlenv " + join(help, " ").substr(5)), std::string::npos) << a.out;
  }
  EXPECT_EQ(run_cli({"help"}).out, run_cli({"--help"}).out);
}

TEST(Help, WrapText) {
  EXPECT_EQ(wrap_text("aaa bbb ccc", 7), "aaa bbb\nccc");
  EXPECT_EQ(wrap_text("a\nbb cc", 4), "a\nbb\ncc");
  EXPECT_EQ(wrap_text("toolongword x", 4), "toolongword\nx");
}

}  // namespace
}  // namespace dlenv
