// Against the real CUDA toolkit of the build machine (/usr/local/cuda), when one
// is installed; skips cleanly otherwise. The scenario tests cover the same logic
// with generated sysroots.
#include <gtest/gtest.h>

#include <regex>

#include "platform/env.h"
#include "platform/filesystem.h"
#include "platform/process.h"
#include "probe/probe.h"

namespace dlenv {
namespace {

class RealToolkit : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = make_real_filesystem();
    if (!fs_->exists("/usr/local/cuda/bin/nvcc"))
      GTEST_SKIP() << "no CUDA toolkit at /usr/local/cuda";
    auto kb = Kb::load_embedded();
    ASSERT_TRUE(kb) << kb.error().message;
    kb_ = *kb;
    env_ = make_map_env({{"PATH", "/usr/bin:/bin"}});
  }
  std::unique_ptr<FileSystem> fs_;
  std::unique_ptr<Env> env_;
  std::shared_ptr<const Kb> kb_;
};

TEST_F(RealToolkit, VersionMatchesWhatNvccPrints) {
  auto r = run_process({"/usr/local/cuda/bin/nvcc", "--version"});
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->exit_code, 0) << r->err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r->out, m, std::regex(R"(release (\d+)\.(\d+), V([\d.]+))")))
      << r->out;
  ProbeContext ctx{*fs_, *env_, *kb_, Os::linux, true, "test"};
  LoaderConfig loader = read_loader_config(ctx);
  auto toolkits = probe_toolkits(ctx, loader);
  std::string real = fs_->real_path("/usr/local/cuda").value_or("");
  const ToolkitFacts* t = nullptr;
  for (const auto& k : toolkits) {
    if (k.real_root == real) t = &k;
  }
  ASSERT_NE(t, nullptr) << "the /usr/local/cuda toolkit was not found";
  ASSERT_TRUE(t->version) << t->version.reason;
  EXPECT_EQ(t->version->major(), std::stoi(m[1].str()));
  EXPECT_EQ(t->version->minor(), std::stoi(m[2].str()));
  ASSERT_TRUE(t->nvcc_version) << t->nvcc_version.reason;
  EXPECT_EQ(t->nvcc_version->str(), m[3].str());
  EXPECT_TRUE(t->is_default_link);
}

TEST_F(RealToolkit, CudnnHeaderVersionEqualsTheLibrarysOwn) {
  ProbeContext ctx{*fs_, *env_, *kb_, Os::linux, true, "test"};
  LoaderConfig loader = read_loader_config(ctx);
  auto toolkits = probe_toolkits(ctx, loader);
  ProbeOptions options;
  auto copies = probe_cudnn(ctx, loader, toolkits, options);
  int checked = 0;
  for (const auto& c : copies) {
    if (!c.header_version || !fs_->exists(c.library)) continue;
    ASSERT_TRUE(c.live_version) << c.library << ": " << c.live_version.reason;
    EXPECT_EQ(c.header_version->truncated(3), c.live_version->truncated(3)) << c.library;
    EXPECT_TRUE(c.cuda_major) << c.library << ": " << c.cuda_major.reason;
    EXPECT_TRUE(c.sublibraries_missing.empty()) << c.library;
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no cuDNN copy with a header next to it";
}

}  // namespace
}  // namespace dlenv
