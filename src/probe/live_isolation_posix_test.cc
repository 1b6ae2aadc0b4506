// The live probes' child process (probe/live_isolation.h) against the built dlenv and the
// fake libraries of tests/fixtures: crashes, hangs, early exits and garbage become failures
// naming the library, the steps after them still run, and a truncated copy is refused by the
// pre-check without being loaded.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "probe/fake_library_test_support.h"
#include "probe/live_isolation.h"
#include "util/sanitizer_build.h"

namespace dlenv {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

[[maybe_unused]] const auto* const kCleanup =
    ::testing::AddGlobalTestEnvironment(new testing::RemoveFakesAtExit("live"));

std::vector<std::string> dlenv_argv() {
  return {std::string(DLENV_BINARY_DIR) + "/dlenv", kLiveProbeCommand};
}

std::string fake_nvml() {
  return testing::build_fake_library("live", "fake_nvml.c", "nvml", "libnvidia-ml.so.1");
}
std::string fake_cudnn() {
  return testing::build_fake_library("live", "fake_cudnn.c", "cudnn", "libcudnn.so.9");
}

LiveLimits quick_limits() {
  LiveLimits l;
  l.step_timeout = std::chrono::milliseconds(1500);
  l.total = std::chrono::milliseconds(6000);
  return l;
}

LiveAnswers nvml_then_cudnn(const char* mode) {
  testing::EnvGuard guard("FAKE_NVML_MODE", mode);
  LiveProbeSession s(dlenv_argv(), quick_limits());
  s.request({LiveRequest::Kind::nvml, {fake_nvml()}, {}});
  s.request({LiveRequest::Kind::cudnn, {}, fake_cudnn()});
  return s.finish();
}

void expect_cudnn_answered(const LiveAnswers& a) {
  ASSERT_EQ(a.cudnn.size(), 1u);
  ASSERT_TRUE(a.cudnn[0]);
  ASSERT_TRUE(a.cudnn[0]->version.ok()) << a.cudnn[0]->version.reason;
  EXPECT_EQ(a.cudnn[0]->version->str(), "9.19.0");
}

TEST(LiveIsolation, AnswersInOneChild) {
  LiveAnswers a = nvml_then_cudnn("ok");
  EXPECT_TRUE(a.failures.empty());
  EXPECT_EQ(a.children, 1);
  ASSERT_TRUE(a.nvml);
  ASSERT_TRUE(a.nvml->driver_version.ok()) << a.nvml->driver_version.reason;
  EXPECT_EQ(*a.nvml->driver_version, "580.95.05");
  ASSERT_EQ(a.nvml->gpus.size(), 2u);
  EXPECT_TRUE(a.nvml->gpus[0].name.ok());
  expect_cudnn_answered(a);
}

TEST(LiveIsolation, CrashIsAFailureAndTheNextStepStillRuns) {
  LiveAnswers a = nvml_then_cudnn("segv");
  EXPECT_FALSE(a.nvml);
  ASSERT_EQ(a.failures.size(), 1u);
  EXPECT_EQ(a.failures[0].probe, "NVML");
  EXPECT_EQ(a.failures[0].library, fake_nvml());
  EXPECT_EQ(a.failures[0].failure, "crashed the loader with SIGSEGV");
  EXPECT_EQ(a.children, 2);
  expect_cudnn_answered(a);
}

TEST(LiveIsolation, HangIsStoppedByTheChildsWatchdog) {
  const auto t0 = std::chrono::steady_clock::now();
  LiveAnswers a = nvml_then_cudnn("hang");
  const auto took = std::chrono::steady_clock::now() - t0;
  // A 1.5 s step timeout and two child starts; an ASan child takes about a second to start,
  // more with the suite running beside it.
  EXPECT_LT(took, std::chrono::milliseconds(kSanitizerBuild ? 10000 : 5000));
  ASSERT_EQ(a.failures.size(), 1u);
  EXPECT_EQ(a.failures[0].failure, "did not answer within 1.5 s (the probe process was stopped)");
  expect_cudnn_answered(a);
}

TEST(LiveIsolation, ExitAndGarbageAreFailures) {
  LiveAnswers a = nvml_then_cudnn("exit");
  ASSERT_EQ(a.failures.size(), 1u);
  EXPECT_EQ(a.failures[0].failure, "ended the process with exit status 7");
  expect_cudnn_answered(a);

  a = nvml_then_cudnn("garbage");
  ASSERT_EQ(a.failures.size(), 1u);
  EXPECT_THAT(a.failures[0].failure, StartsWith("answered garbage (not JSON: \\x1b[2J"));
  expect_cudnn_answered(a);
}

TEST(LiveIsolation, MemoryIsCappedInTheChild) {
  if (kSanitizerBuild) GTEST_SKIP() << "no cap under the sanitizers (limit_own_memory)";
  // The fake tries to take 1 TiB: the child's RLIMIT_DATA (LiveLimits, 4 GiB) stops it, and
  // the library sees a failed allocation, as a runaway one would.
  LiveAnswers a = nvml_then_cudnn("hog");
  EXPECT_TRUE(a.failures.empty());
  ASSERT_TRUE(a.nvml);
  EXPECT_FALSE(a.nvml->driver_version.ok());
  EXPECT_THAT(a.nvml->driver_version.reason, HasSubstr("Insufficient Memory"));
  expect_cudnn_answered(a);
}

TEST(LiveIsolation, TruncatedCopyIsRefusedBeforeLoading) {
  const std::string good = fake_cudnn();
  const std::string cut = testing::fake_root("live") + "/cut/libcudnn.so.9";
  std::filesystem::create_directories(std::filesystem::path(cut).parent_path());
  const auto size = std::filesystem::file_size(good);
  {
    std::ifstream in(good, std::ios::binary);
    std::string bytes(size / 2, '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    std::ofstream(cut, std::ios::binary) << bytes;
  }
  LiveProbeSession s(dlenv_argv(), quick_limits());
  s.request({LiveRequest::Kind::cudnn, {}, cut});
  LiveAnswers a = s.finish();
  ASSERT_EQ(a.cudnn.size(), 1u);
  ASSERT_TRUE(a.cudnn[0]);
  EXPECT_FALSE(a.cudnn[0]->version.ok());
  EXPECT_THAT(a.cudnn[0]->version.reason,
              StartsWith(fmt::format("not loaded: the file is truncated ({} of ", size / 2)));
  ASSERT_EQ(a.failures.size(), 1u);
  EXPECT_EQ(a.failures[0].failure, "");
  EXPECT_EQ(a.failures[0].problem_path, cut);
  EXPECT_THAT(describe_live_failure(a.failures[0]),
              StartsWith(cut + " was not loaded: the file is truncated"));
}

TEST(LiveIsolation, LoadAnswersWithTheVersionCall) {
  LiveProbeSession s(dlenv_argv(), quick_limits());
  s.request({LiveRequest::Kind::load, {}, fake_cudnn()});
  LiveAnswers a = s.finish();
  ASSERT_TRUE(a.load);
  EXPECT_TRUE(a.load->loaded) << a.load->error;
  EXPECT_EQ(a.load->version, "9.19.0");
  EXPECT_EQ(a.load->version_call, "cudnnGetVersion() = 91900");
}

TEST(LiveIsolation, ProgramThatCannotStartFailsEveryStep) {
  LiveProbeSession s({"/nonexistent/dlenv", kLiveProbeCommand}, quick_limits());
  s.request({LiveRequest::Kind::nvml, {"libnvidia-ml.so.1"}, {}});
  s.request({LiveRequest::Kind::cuda_driver, {"libcuda.so.1"}, {}});
  LiveAnswers a = s.finish();
  EXPECT_FALSE(a.nvml);
  EXPECT_FALSE(a.cuda);
  ASSERT_FALSE(a.failures.empty());
  EXPECT_THAT(a.failures[0].failure, StartsWith("could not start the probe process"));
}

// The parent's reading of the child's output, without a child.
TEST(LiveIsolation, ReadsProtocolLinesAndNamesTheStepInFlight) {
  std::vector<LiveRequest> reqs = {{LiveRequest::Kind::cudnn, {}, "/a/libcudnn.so.9"},
                                   {LiveRequest::Kind::cudnn, {}, "/b/libcudnn.so.8"}};
  const std::string answered =
      R"({"v":1,"step":0,"begin":"cudnn"})"
      "\n"
      R"({"v":1,"step":0,"cudnn":{"version":{"status":0,"source":"s","value":"9.1.0"},)"
      R"("cuda_major":{"status":1,"source":""}}})"
      "\n";
  LiveAnswers a;
  // Step 1 began and the process died: step 1 is the culprit.
  size_t k = read_live_output(answered + R"({"v":1,"step":1,"begin":"cudnn"})" + "\n", reqs, 0,
                              "crashed the loader with SIGBUS", a);
  EXPECT_EQ(k, 1u);
  ASSERT_EQ(a.cudnn.size(), 1u);
  EXPECT_EQ(a.cudnn[0]->version->str(), "9.1.0");
  ASSERT_EQ(a.failures.size(), 1u);
  EXPECT_EQ(describe_live_failure(a.failures[0]),
            "/b/libcudnn.so.8 crashed the loader with SIGBUS");

  // A newer protocol, or a fact without a status, is garbage, never a value.
  LiveAnswers b;
  k = read_live_output(R"({"v":2,"step":0,"cudnn":{}})"
                       "\n"
                       R"({"v":1,"step":0,"cudnn":{"version":{"source":""}}})"
                       "\n",
                       reqs, 0, "ended the process without answering", b);
  EXPECT_EQ(k, 0u);
  EXPECT_TRUE(b.cudnn.empty() || !b.cudnn[0]);
  ASSERT_EQ(b.failures.size(), 1u);
  EXPECT_EQ(b.failures[0].failure, "answered garbage (protocol version 2, expected 1)");
}

}  // namespace
}  // namespace dlenv
