#include "probe/cuda_driver.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "platform/dynamic_library.h"
#include "probe/fake_library_test_support.h"

namespace dlenv {
namespace {

namespace fs = std::filesystem;

std::string fake_root() {
  return testing::fake_root("cuda");
}

[[maybe_unused]] const auto* const kCleanup =
    ::testing::AddGlobalTestEnvironment(new testing::RemoveFakesAtExit("cuda"));

std::string build_fake_cuda(const std::string& subdir, const std::string& file_name,
                            const std::string& define = "") {
  return testing::build_fake_library("cuda", "fake_libcuda.c", subdir, file_name, define);
}

// Sets FAKE_CUDA_MODE for one test.
class ModeGuard : public testing::EnvGuard {
 public:
  explicit ModeGuard(const char* mode) : EnvGuard("FAKE_CUDA_MODE", mode) {}
};

std::string canonical(const std::string& p) {
  return testing::canonical_or_same(p);
}

int init_calls(const DynamicLibrary& lib) {
  void* p = lib.symbol("fake_cuda_init_calls");
  if (!p) return -1;
  return reinterpret_cast<int (*)()>(p)();
}

TEST(CudaDriverProbe, DefaultCandidates) {
  EXPECT_EQ(default_cuda_driver_candidates(),
            (std::vector<std::string>{"libcuda.so.1", "libcuda.so"}));
}

TEST(CudaDriverProbe, ReadsTheVersionWithoutCuInit) {
  const std::string path = build_fake_cuda("ok", "libcuda.so.580.95.05");
  ASSERT_FALSE(path.empty());
  ModeGuard mode("ok");
  auto hold = DynamicLibrary::open(path);
  ASSERT_TRUE(hold.has_value()) << hold.error().message;

  CudaDriverSnapshot s = probe_cuda_driver({path});

  ASSERT_TRUE(s.library.ok()) << s.library.reason;
  EXPECT_EQ(canonical(*s.library), canonical(path));
  ASSERT_TRUE(s.version.ok()) << s.version.reason;
  EXPECT_EQ(*s.version, 13000);
  EXPECT_EQ(Version::from_cuda_int(*s.version), (Version{13, 0}));
  EXPECT_EQ(s.version.source, "CUDA driver API cuDriverGetVersion (" + *s.library + ")");
  EXPECT_FALSE(s.stub);
  EXPECT_FALSE(s.error.ok());
  EXPECT_EQ(s.result, 0);
  EXPECT_EQ(init_calls(*hold), 0);
}

TEST(CudaDriverProbe, StubLibraryByReturnCode) {
  const std::string path = build_fake_cuda("stubmode", "libcuda.so");
  ASSERT_FALSE(path.empty());
  ModeGuard mode("stub");
  CudaDriverSnapshot s = probe_cuda_driver({path});
  ASSERT_TRUE(s.library.ok()) << s.library.reason;
  EXPECT_EQ(canonical(*s.library), canonical(path));
  EXPECT_TRUE(s.stub);
  EXPECT_EQ(s.result, 34);
  EXPECT_FALSE(s.version.ok());
  EXPECT_EQ(s.version.status, FactStatus::error);
  EXPECT_NE(s.version.reason.find("CUDA_ERROR_STUB_LIBRARY (34)"), std::string::npos)
      << s.version.reason;
  ASSERT_TRUE(s.error.ok());
  EXPECT_NE(s.error->find("stub"), std::string::npos) << *s.error;
  EXPECT_NE(s.error->find("CUDA_ERROR_STUB_LIBRARY (34)"), std::string::npos) << *s.error;
  EXPECT_NE(s.error->find(*s.library), std::string::npos) << *s.error;
}

TEST(CudaDriverProbe, StubLibraryByDirectory) {
  const std::string path = build_fake_cuda("cuda-13.0/lib64/stubs", "libcuda.so");
  ASSERT_FALSE(path.empty());
  ModeGuard mode("ok");
  CudaDriverSnapshot s = probe_cuda_driver({path});
  ASSERT_TRUE(s.library.ok()) << s.library.reason;
  EXPECT_TRUE(s.stub);
  EXPECT_EQ(s.version.value, 13000);
  ASSERT_TRUE(s.error.ok());
  EXPECT_NE(s.error->find("'stubs' directory"), std::string::npos) << *s.error;
}

TEST(CudaDriverProbe, DriverErrorIsRecorded) {
  const std::string path = build_fake_cuda("errmode", "libcuda.so.1");
  ASSERT_FALSE(path.empty());
  ModeGuard mode("error");
  CudaDriverSnapshot s = probe_cuda_driver({path});
  ASSERT_TRUE(s.library.ok());
  EXPECT_FALSE(s.stub);
  EXPECT_EQ(s.result, 999);
  EXPECT_EQ(s.version.status, FactStatus::error);
  ASSERT_TRUE(s.error.ok());
  EXPECT_EQ(*s.error, "cuDriverGetVersion failed: CUDA_ERROR_UNKNOWN (999)");
}

TEST(CudaDriverProbe, MissingLibraryIsNotFoundWithTheLoaderText) {
  const std::string missing = fake_root() + "/absent/libcuda.so.1";
  void* h = ::dlopen(missing.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_EQ(h, nullptr);
  const std::string dl_text = ::dlerror();

  CudaDriverSnapshot s = probe_cuda_driver({missing});
  EXPECT_FALSE(s.library.ok());
  EXPECT_EQ(s.library.status, FactStatus::not_found);
  EXPECT_NE(s.library.reason.find(dl_text), std::string::npos)
      << "reason: " << s.library.reason << "\ndlerror: " << dl_text;
  EXPECT_EQ(s.version.status, FactStatus::not_found);
  EXPECT_FALSE(s.error.ok());
  EXPECT_EQ(s.error.status, FactStatus::skipped);
  EXPECT_FALSE(s.stub);
}

TEST(CudaDriverProbe, MissingSymbolIsAnErrorNamingIt) {
  const std::string path = build_fake_cuda("noversion", "libcuda.so.1", "-DFAKE_CUDA_OMIT_VERSION");
  ASSERT_FALSE(path.empty());
  CudaDriverSnapshot s = probe_cuda_driver({path});
  EXPECT_FALSE(s.library.ok());
  EXPECT_EQ(s.library.status, FactStatus::error);
  EXPECT_NE(s.library.reason.find("cuDriverGetVersion"), std::string::npos) << s.library.reason;
  EXPECT_EQ(s.version.status, FactStatus::error);
}

TEST(CudaDriverProbe, FallsBackToTheNextCandidate) {
  const std::string good = build_fake_cuda("fallback", "libcuda.so.1");
  ASSERT_FALSE(good.empty());
  ModeGuard mode("ok");
  CudaDriverSnapshot s = probe_cuda_driver({fake_root() + "/absent/libcuda.so.1", good});
  ASSERT_TRUE(s.library.ok()) << s.library.reason;
  EXPECT_EQ(canonical(*s.library), canonical(good));
  EXPECT_EQ(s.version.value, 13000);
}

// Runs against whatever this machine has (usually no driver on build machines).
TEST(CudaDriverProbe, DefaultCandidatesAreConsistentOnThisMachine) {
  CudaDriverSnapshot s = probe_cuda_driver(default_cuda_driver_candidates());
  if (!s.library.ok()) {
    EXPECT_NE(s.library.status, FactStatus::ok);
    EXPECT_FALSE(s.library.reason.empty());
    EXPECT_FALSE(s.version.ok());
    EXPECT_FALSE(s.version.reason.empty());
    EXPECT_FALSE(s.error.ok());
  } else if (s.version.ok()) {
    EXPECT_GT(*s.version, 0);
  } else {
    ASSERT_TRUE(s.error.ok());
    EXPECT_FALSE(s.error->empty());
  }
}

}  // namespace
}  // namespace dlenv
