#include "actions/cudnn_verify.h"

#include <gtest/gtest.h>

#include "actions/cudnn_test_support.h"
#include "platform/env.h"
#include "platform/filesystem.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using testing::TempDir;
namespace sfs = std::filesystem;

std::shared_ptr<const Kb> kb() {
  static auto k = Kb::load_embedded();
  return *k;
}

std::string joined(const std::vector<std::string>& v) {
  return join(v, "\n");
}

// A cuDNN 9.1.0 just installed into a toolkit on this machine (host paths): the
// header in include/, the eight libraries with their links in lib64/.
struct InstalledToolkit {
  TempDir dir{"verify"};
  std::string include_dir = dir.at("include");
  std::string lib_dir = dir.at("lib64");
  InstalledToolkit() {
    for (const auto& e : testing::fake_cudnn9_linux("top", 1, 0, 12)) {
      const std::string base = path_basename(e.path);
      if (e.path.find("/include/") != std::string::npos) {
        testing::write_file(path_join(include_dir, base), e.content);
      } else if (e.path.find("/lib/") != std::string::npos) {
        if (e.kind == testing::ArchiveEntry::symlink) {
          sfs::create_symlink(e.link, path_join(lib_dir, base));
        } else {
          testing::write_file(path_join(lib_dir, base), e.content, 0755);
        }
      }
    }
  }
  CudnnVerifyRequest request(LoadChecker check) const {
    CudnnVerifyRequest req;
    req.version = Version{9, 1, 0, 70};
    req.toolkit = dir.path();
    req.include_dir = include_dir;
    req.lib_dir = lib_dir;
    req.load_check = std::move(check);
    return req;
  }
};

// The live system (no --root): the only case where the real load runs.
struct Live {
  std::unique_ptr<FileSystem> fs = make_real_filesystem();
  std::unique_ptr<Env> env = make_map_env({});
  ProbeContext ctx() const { return ProbeContext{*fs, *env, *kb(), Os::linux, true, "test"}; }
};

TEST(CudnnVerify, RealLoadGetsEveryLibraryMainFirstWithTheToolkitLibDirFirst) {
  InstalledToolkit tk;
  Live live;
  std::vector<std::string> asked;
  std::string first;
  auto r = verify_cudnn_install(live.ctx(),
                                tk.request([&](const std::vector<std::string>& files,
                                               const std::string& dir) -> Result<LoadCheckResult> {
                                  asked = files;
                                  first = dir;
                                  return LoadCheckResult{files, "", "", Version{9, 1, 0}};
                                }));
  EXPECT_TRUE(r.errors.empty()) << joined(r.errors);
  ASSERT_EQ(asked.size(), 8u);
  EXPECT_EQ(asked.front(), tk.lib_dir + "/libcudnn.so.9");
  EXPECT_EQ(first, tk.lib_dir);
  EXPECT_NE(joined(r.verified)
                .find("loaded for real (8 files, " + tk.lib_dir +
                      " first on the search path): cudnnGetVersion() = 9.1.0"),
            std::string::npos)
      << joined(r.verified);
}

TEST(CudnnVerify, RealLoadFailuresAreErrorsNamingTheMissingFile) {
  InstalledToolkit tk;
  Live live;
  // A dependency the loader could not open: named, with where to get it.
  auto r = verify_cudnn_install(
      live.ctx(), tk.request([&](const std::vector<std::string>& files,
                                 const std::string&) -> Result<LoadCheckResult> {
        return LoadCheckResult{{files[0]},
                               files[1],
                               "libcublasLt.so.12: cannot open shared object file: No such file "
                               "or directory",
                               std::nullopt};
      }));
  ASSERT_EQ(r.errors.size(), 1u) << joined(r.errors);
  EXPECT_NE(r.errors[0].find("loading " + tk.lib_dir + "/libcudnn_graph.so.9 failed"),
            std::string::npos)
      << r.errors[0];
  EXPECT_NE(r.errors[0].find("(libcublasLt.so.12 is missing: it is CUDA 12's cublasLt library"),
            std::string::npos)
      << r.errors[0];
  // Another version than the one installed.
  r = verify_cudnn_install(live.ctx(),
                           tk.request([&](const std::vector<std::string>& files,
                                          const std::string&) -> Result<LoadCheckResult> {
                             return LoadCheckResult{files, "", "", Version{9, 0, 0}};
                           }));
  EXPECT_EQ(joined(r.errors),
            "cudnnGetVersion() of " + tk.lib_dir + "/libcudnn.so.9 says 9.0.0, expected 9.1.0");
  // The child could not run at all.
  r = verify_cudnn_install(live.ctx(),
                           tk.request([&](const std::vector<std::string>&,
                                          const std::string&) -> Result<LoadCheckResult> {
                             return fail("the child crashed (exit 0, signal 11)");
                           }));
  EXPECT_EQ(joined(r.errors), "the real load could not run: the child crashed (exit 0, signal 11)");
}

TEST(CudnnVerify, NoCheckerOrARootMeansNoRealLoad) {
  InstalledToolkit tk;
  Live live;
  auto r = verify_cudnn_install(live.ctx(), tk.request({}));
  EXPECT_TRUE(r.errors.empty()) << joined(r.errors);
  EXPECT_NE(joined(r.notes).find("not loaded for real (no load-check program)"), std::string::npos);
  // Under --root the host's loader has nothing to say about the root's system.
  auto rooted = make_rooted_filesystem("/");
  ProbeContext ctx{*rooted, *live.env, *kb(), Os::linux, false, "test"};
  bool called = false;
  r = verify_cudnn_install(ctx, tk.request([&](const std::vector<std::string>&,
                                               const std::string&) -> Result<LoadCheckResult> {
    called = true;
    return fail("not expected");
  }));
  EXPECT_FALSE(called);
  EXPECT_NE(joined(r.verified).find("not loaded for real (under --root)"), std::string::npos);
}

// dlenv's own `cudnn load-check` in a child process, as `dlenv cudnn install` runs it.
TEST(CudnnVerify, TheChildLoadCheckOfDlenvLoadsTheInstalledLibraries) {
  const std::string dlenv = DLENV_EXECUTABLE;
  if (!sfs::exists(dlenv)) GTEST_SKIP() << dlenv << " is not built";
  InstalledToolkit tk;
  Live live;
  auto r = verify_cudnn_install(
      live.ctx(), tk.request(child_load_checker({dlenv, "cudnn", "load-check"}, Os::linux)));
  EXPECT_TRUE(r.errors.empty()) << joined(r.errors);
  EXPECT_NE(joined(r.verified)
                .find("loaded for real (8 files, " + tk.lib_dir +
                      " first on the search path): cudnnGetVersion() = 9.1.0"),
            std::string::npos)
      << joined(r.verified);
  // A sub-library that is not a library: the child names it and the loader's reason.
  testing::write_file(tk.lib_dir + "/libcudnn_adv.so.9.1.0", "not an ELF file\n", 0755);
  auto got = child_load_checker({dlenv, "cudnn", "load-check"}, Os::linux)(
      {tk.lib_dir + "/libcudnn.so.9", tk.lib_dir + "/libcudnn_adv.so.9"}, tk.lib_dir);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->loaded, std::vector<std::string>{tk.lib_dir + "/libcudnn.so.9"});
  EXPECT_EQ(got->failed, tk.lib_dir + "/libcudnn_adv.so.9");
  EXPECT_NE(got->error.find("libcudnn_adv.so.9"), std::string::npos) << got->error;
  EXPECT_EQ(got->version, (Version{9, 1, 0}));
}

}  // namespace
}  // namespace dlenv
