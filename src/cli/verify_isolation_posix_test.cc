// `dlenv verify` runs its GPU work in a child (cli/verify_cmd.cc): the real binary, with a
// host-side fake libcuda (tests/fixtures/fake_cuda_compute.c) that crashes, hangs or exits
// when the context is made, must report it as `verify-crashed` naming the step, and pass a
// finished child's report and exit status through unchanged.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "platform/process.h"

namespace dlenv {
namespace {

namespace fs = std::filesystem;

class VerifyIsolation : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* base = std::getenv("DLENV_TEST_TMP");
    dir_ =
        (fs::path(base && *base ? base : "/tmp") / ("verify-isolation-" + std::to_string(getpid())))
            .string();
    fs::create_directories(dir_);
    const std::string src = std::string(DLENV_SOURCE_DIR) + "/tests/fixtures/fake_cuda_compute.c";
    for (const auto& [def, name] : std::vector<std::pair<std::string, std::string>>{
             {"-DFAKE_CUDA", "libcuda.so.1"},
             {"-DFAKE_CUBLAS", "libcublas.so.13"},
             {"-DFAKE_CUBLASLT", "libcublasLt.so.13"}}) {
      auto r = run_process({DLENV_C_COMPILER, "-x", "c", "-shared", "-fPIC", "-O1", def,
                            "-Wl,-soname," + name, "-o", dir_ + "/" + name, src, "-lm"});
      ASSERT_TRUE(r) << r.error().message;
      ASSERT_EQ(r->exit_code, 0) << r->err;
    }
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // `dlenv verify --libs DIR --no-cudnn ARGS` with the fakes first on the loader's path.
  static ProcessResult verify(const std::string& mode, std::vector<std::string> args) {
    std::vector<std::string> argv{std::string(DLENV_BINARY_DIR) + "/dlenv", "verify", "--libs",
                                  dir_, "--no-cudnn"};
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessOptions po;
    po.timeout = std::chrono::seconds(60);
    po.env = std::map<std::string, std::string>{{"PATH", "/usr/bin:/bin"},
                                                {"LD_LIBRARY_PATH", dir_},
                                                {"FAKE_MODE", mode},
                                                {"LANG", "C.UTF-8"}};
    auto r = run_process(argv, po);
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : ProcessResult{};
  }
  static std::string dir_;
};
std::string VerifyIsolation::dir_;

TEST_F(VerifyIsolation, CrashInTheDriverIsAFindingNamingTheStepAndSignal) {
  ProcessResult r = verify("crash", {});
  EXPECT_EQ(r.term_signal, 0) << "dlenv itself died: " << r.err;
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[error] verify-crashed — the GPU work crashed with SIGSEGV during "
                       "\"GPU 0: context\""),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("its last message: fake libcuda: about to crash"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("stopped during \"GPU 0: context\""), std::string::npos) << r.out;
  // What the child printed reaches dlenv's stderr as it would have in one process.
  EXPECT_NE(r.err.find("fake libcuda: about to crash"), std::string::npos) << r.err;

  ProcessResult j = verify("crash", {"--json"});
  EXPECT_EQ(j.exit_code, 1) << j.err;
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["schema"], "dlenv.verify/1");
  EXPECT_EQ(doc["stopped_during"], "GPU 0: context");
  ASSERT_EQ(doc["problems"].size(), 1u) << j.out;
  EXPECT_EQ(doc["problems"][0]["id"], "verify-crashed");
  EXPECT_EQ(doc["problems"][0]["severity"], "error");
  ASSERT_GE(doc["step_ms"].size(), 2u) << j.out;  // loading cuBLAS, ..., GPU 0: context
  EXPECT_EQ(doc["step_ms"].front()["step"], "loading cuBLAS");
  EXPECT_EQ(doc["step_ms"].back()["step"], "GPU 0: context");
}

TEST_F(VerifyIsolation, HangIsStoppedAtTheTimeout) {
  const auto start = std::chrono::steady_clock::now();
  ProcessResult r = verify("hang", {"--timeout", "2"});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_LT(s, 20.0);
  EXPECT_NE(r.out.find("verify-crashed — the GPU work did not finish within 2 s during "
                       "\"GPU 0: context\" (the process was stopped)"),
            std::string::npos)
      << r.out;
}

TEST_F(VerifyIsolation, ExitWithoutAReportIsAFinding) {
  ProcessResult r = verify("exit", {});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("the GPU work ended with exit status 7 without a report during "
                       "\"GPU 0: context\""),
            std::string::npos)
      << r.out;
}

TEST_F(VerifyIsolation, AFinishedChildsReportAndStatusPassThrough) {
  // No device: the child finishes with its own report (exit 1), as --in-process does.
  ProcessResult isolated = verify("nodevice", {"--json"});
  ProcessResult in_process = verify("nodevice", {"--json", "--in-process"});
  EXPECT_EQ(isolated.exit_code, 1) << isolated.err;
  EXPECT_EQ(in_process.exit_code, 1) << in_process.err;
  auto a = nlohmann::json::parse(isolated.out);
  auto b = nlohmann::json::parse(in_process.out);
  EXPECT_EQ(a["stopped_during"], "");
  EXPECT_EQ(a["problems"], b["problems"]) << isolated.out;
  EXPECT_EQ(a["libraries"], b["libraries"]);
  // A usage error in the child is the child's: exit 2 and its message.
  ProcessResult usage = verify("ok", {"--device", "x"});
  EXPECT_EQ(usage.exit_code, 2) << usage.out << usage.err;
  EXPECT_NE(usage.err.find("--device must be a GPU index"), std::string::npos) << usage.err;
  EXPECT_EQ(usage.out, "");
}

}  // namespace
}  // namespace dlenv
