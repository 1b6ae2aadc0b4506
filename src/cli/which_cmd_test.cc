// `dlenv which`: --pid and --holding over a --root tree with fixture maps,
// -- CMD with a real child that maps a fake libcublas (env LD_PRELOAD=... sleep).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_test_support.h"
#include "platform/process.h"

namespace dlenv {
namespace {

using nlohmann::json;
using testing::run_cli;

class ProcRoot : public testing::SysrootBase<ProcRoot> {
 public:
  ProcRoot() : SysrootBase("which") {}
};

constexpr const char* kMaps =
    "7f1a20000000-7f1a24000000 r-xp 00000000 fd:00 44 "
    "/usr/local/cuda-12.4/targets/x86_64-linux/lib/libcublas.so.12.4.5.8\n"
    "7f1a30000000-7f1a31000000 r-xp 00000000 fd:00 45 "
    "/venv/lib/python3.11/site-packages/nvidia/cublas/lib/libcublasLt.so.12\n"
    "7f1a36000000-7f1a37000000 r-xp 00000000 fd:00 48 /usr/lib/x86_64-linux-gnu/libc.so.6\n";

TEST(WhichCli, PidUnderRootListsLibrariesVersionsOriginsAndMixedDirectories) {
  ProcRoot r;
  r.file("/proc/4242/maps", kMaps).file("/proc/4242/comm", "python\n");
  r.file("/usr/local/cuda-12.4/version.json", R"({"cuda": {"version": "12.4.1"}})");
  r.file("/venv/lib/python3.11/site-packages/nvidia_cublas_cu12-12.1.3.1.dist-info/RECORD",
         "nvidia/cublas/lib/libcublasLt.so.12,,\n");
  auto run = run_cli({"which", "--pid", "4242", "--root", r.root().string()});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("process 4242 (python): 2 NVIDIA/CUDA libraries mapped"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("CUDA toolkit: /usr/local/cuda-12.4 (CUDA 12.4.1)"), std::string::npos);
  EXPECT_NE(run.out.find("pip wheel: nvidia-cublas-cu12 12.1.3.1"), std::string::npos);
  EXPECT_NE(run.out.find("warning: cublas libraries are mapped from 2 directories"),
            std::string::npos)
      << run.out;
  auto j = run_cli({"which", "--pid", "4242", "--root", r.root().string(), "--json"});
  const json doc = json::parse(j.out);
  EXPECT_EQ(doc["schema"], "dlenv.which/1");
  EXPECT_EQ(doc["libraries"][0]["version"], "12.4.5.8");
  EXPECT_EQ(doc["libraries"][1]["origin"], "pip wheel");
  EXPECT_EQ(run_cli({"which", "--pid", "4243", "--root", r.root().string()}).code, 2);
}

TEST(WhichCli, HoldingUnderRoot) {
  ProcRoot r;
  r.file("/proc/10/maps", kMaps).file("/proc/10/comm", "python\n");
  r.file("/proc/11/maps", "10-20 r-xp 0 08:01 1 /usr/lib/libc.so.6\n");
  auto run = run_cli({"which", "--holding", "libcublasLt", "--root", r.root().string(), "--json"});
  ASSERT_EQ(run.code, 0) << run.err;
  const json doc = json::parse(run.out);
  ASSERT_EQ(doc["processes"].size(), 1u);
  EXPECT_EQ(doc["processes"][0]["pid"], 10);
  EXPECT_EQ(doc["scanned"], 2);
  auto none = run_cli({"which", "--holding", "libcudnn", "--root", r.root().string()});
  EXPECT_NE(none.out.find("no process has a file named *libcudnn* mapped (2 processes read)"),
            std::string::npos)
      << none.out;
}

TEST(WhichCli, UsageErrors) {
  ProcRoot r;
  EXPECT_EQ(run_cli({"which"}).code, 2);
  EXPECT_EQ(run_cli({"which", "--pid", "1", "--holding", "x"}).code, 2);
  EXPECT_EQ(run_cli({"which", "--root", r.root().string(), "--", "true"}).code, 2);
  EXPECT_EQ(run_cli({"which", "--", "/nonexistent/program"}).code, 3);
}

TEST(WhichCli, CommandReportsWhatTheChildMapped) {
  ProcRoot r;
  const auto lib = r.at("/lib/libcublas.so.99.1.2").string();
  std::filesystem::create_directories(r.at("/lib"));
  const auto src = r.at("/lib/fake.c").string();
  std::ofstream(src) << "int cublasFake(void) { return 0; }\n";
  auto cc = run_process({DLENV_CXX_COMPILER, "-x", "c", "-shared", "-fPIC", "-nostdlib",
                         "-Wl,-soname,libcublas.so.99", "-o", lib, src});
  ASSERT_TRUE(cc && cc->exit_code == 0) << (cc ? cc->err : cc.error().message);
  auto run = run_cli({"which", "--json", "--", "env", "LD_PRELOAD=" + lib, "sleep", "0.3"});
  ASSERT_EQ(run.code, 0) << run.err;
  const json doc = json::parse(run.out);
  EXPECT_EQ(doc["exit_code"], 0);
  EXPECT_GT(doc["maps_reads"].get<int>(), 1);
  ASSERT_EQ(doc["libraries"].size(), 1u) << run.out;
  EXPECT_EQ(doc["libraries"][0]["library"], "cublas");
  EXPECT_EQ(doc["libraries"][0]["version"], "99.1.2");
  EXPECT_EQ(doc["libraries"][0]["soname"], "libcublas.so.99");
  // A timeout kills the command.
  auto slow = run_cli({"which", "--json", "--timeout", "1", "--", "sleep", "30"});
  ASSERT_EQ(slow.code, 0);
  EXPECT_EQ(json::parse(slow.out)["timed_out"], true);
}

}  // namespace
}  // namespace dlenv
