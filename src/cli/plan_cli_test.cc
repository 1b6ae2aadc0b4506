// `dlenv plan` through the CLI: options, exit codes, usage errors. Every input is given
// (or --no-probe), so nothing depends on this machine.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/cli_test_support.h"

namespace dlenv {
namespace {

testing::CliRun run(std::vector<std::string> args) {
  return testing::run_cli(std::move(args));
}

TEST(PlanCli, GpuByNameAndConflictExitOne) {
  auto r = run({"plan", "--framework", "torch==1.13.1", "--gpu", "NVIDIA GeForce RTX 4090",
                "--driver", "535.104.05", "--os", "linux", "--python", "3.10"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("compute capability 8.9 (gpus.json: GeForce RTX 4090)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("-> torch >= 2.0 with cu118"), std::string::npos) << r.out;
}

TEST(PlanCli, FitsAsAskedExitZeroAndJson) {
  auto r = run({"plan", "--framework", "tensorflow==2.10", "--cc", "8.6", "--driver", "531.14",
                "--os", "windows", "--python", "3.10", "--json"});
  EXPECT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "dlenv.plan/1");
  EXPECT_EQ(j["best"]["toolkit"], "11.2");
  EXPECT_EQ(j["best"]["cudnn"], "8.1");
  EXPECT_EQ(j["inputs"]["os"], "windows");
}

TEST(PlanCli, NoProbeLeavesInputsUnknown) {
  auto r = run({"plan", "--framework", "cupy", "--no-probe", "--os", "linux"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("gpu: unknown"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("driver: unknown"), std::string::npos) << r.out;
}

TEST(PlanCli, UsageErrorsNameTheFix) {
  auto r = run({"plan", "--framework", "mxnet", "--no-probe"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown framework"), std::string::npos) << r.err;
  r = run({"plan", "--gpu", "NVIDIA Imaginary 9000", "--no-probe"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("gpus.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--cc"), std::string::npos) << r.err;
  r = run({"plan", "--os", "macos", "--no-probe"});
  EXPECT_EQ(r.code, 2);
  r = run({"plan", "--gpu", "NVIDIA H200", "--cc", "9.0", "--no-probe"});
  EXPECT_EQ(r.code, 2);
}

}  // namespace
}  // namespace dlenv
