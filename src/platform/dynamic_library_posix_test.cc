#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "platform/dynamic_library.h"
#include "platform/process.h"

namespace dlenv {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

ProcessOptions with_timeout(std::chrono::milliseconds timeout) {
  ProcessOptions opts;
  opts.timeout = timeout;
  return opts;
}

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("DLENV_TEST_TMP");
    fs::path dir = base != nullptr && *base != '\0' ? fs::path(base) : fs::path("/tmp");
    fs::create_directories(dir);
    std::string tmpl = (dir / "platform-dl-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = fs::canonical(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

constexpr const char* kFakeSource = R"(
extern "C" {
int fooInit(void) { return 1; }
int fooInit_v2(int flags) { return 200 + flags; }
int fooGetVersion(int* out) { *out = 12040; return 0; }
}
)";

// Compiles a fake vendor library into a unique temp dir at test time.
class FakeLibrary : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path src = tmp_.path() / "foo.cc";
    std::ofstream(src) << kFakeSource;
    lib_path_ = (tmp_.path() / "libfoo.so").string();
    auto r = run_process({DLENV_CXX_COMPILER, "-shared", "-fPIC", "-o", lib_path_, src.string()},
                         with_timeout(120s));
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(r->exit_code, 0) << r->err;
    ASSERT_TRUE(fs::exists(lib_path_));
  }

  TempDir tmp_;
  std::string lib_path_;
};

using InitV2 = int (*)(int);
using InitV1 = int (*)();
using GetVersion = int (*)(int*);

TEST_F(FakeLibrary, OpensAndReportsLoadedPath) {
  auto lib = DynamicLibrary::open(lib_path_);
  ASSERT_TRUE(lib) << lib.error().message;
  EXPECT_TRUE(lib->is_open());
  EXPECT_EQ(lib->requested_name(), lib_path_);
  EXPECT_EQ(lib->loaded_path(), lib_path_);
  EXPECT_EQ(fs::canonical(lib->loaded_path()), fs::canonical(lib_path_));
  EXPECT_NE(lib->symbol("fooGetVersion"), nullptr);
  EXPECT_EQ(lib->symbol("fooNothing"), nullptr);
}

TEST_F(FakeLibrary, LoadedPathOfARelativeOpenIsAbsolute) {
  const fs::path old_cwd = fs::current_path();
  fs::current_path(tmp_.path());
  auto lib = DynamicLibrary::open("./libfoo.so");
  fs::current_path(old_cwd);
  ASSERT_TRUE(lib) << lib.error().message;
  EXPECT_EQ(lib->loaded_path(), lib_path_);
}

TEST_F(FakeLibrary, BindPrefersTheNewestVersionAndCallsWork) {
  auto lib = DynamicLibrary::open(lib_path_);
  ASSERT_TRUE(lib) << lib.error().message;
  void* init = nullptr;
  void* get_version = nullptr;
  void* optional_missing = reinterpret_cast<void*>(0x1);  // must be reset to nullptr
  SymbolSpec specs[] = {
      {"fooInit", &init, true, 3},  // fooInit_v3 absent, fooInit_v2 present
      {"fooGetVersion", &get_version, true, 0},
      {"fooShutdown", &optional_missing, false, 2},
  };
  auto bound = bind_symbols(*lib, specs);
  ASSERT_TRUE(bound) << bound.error().message;
  EXPECT_EQ(bound->bound_names, (std::vector<std::string>{"fooInit_v2", "fooGetVersion"}));
  EXPECT_EQ(bound->missing_optional, (std::vector<std::string>{"fooShutdown"}));
  EXPECT_EQ(optional_missing, nullptr);
  ASSERT_NE(init, nullptr);
  EXPECT_EQ(init, lib->symbol("fooInit_v2"));
  EXPECT_EQ(reinterpret_cast<InitV2>(init)(5), 205);
  ASSERT_NE(get_version, nullptr);
  int version = 0;
  EXPECT_EQ(reinterpret_cast<GetVersion>(get_version)(&version), 0);
  EXPECT_EQ(version, 12040);
}

TEST_F(FakeLibrary, VersionZeroOrOneBindsOnlyTheBaseName) {
  auto lib = DynamicLibrary::open(lib_path_);
  ASSERT_TRUE(lib) << lib.error().message;
  void* init0 = nullptr;
  void* init1 = nullptr;
  SymbolSpec specs[] = {{"fooInit", &init0, true, 0}, {"fooInit", &init1, true, 1}};
  auto bound = bind_symbols(*lib, specs);
  ASSERT_TRUE(bound) << bound.error().message;
  EXPECT_EQ(bound->bound_names, (std::vector<std::string>{"fooInit", "fooInit"}));
  EXPECT_EQ(init0, lib->symbol("fooInit"));
  EXPECT_EQ(init1, init0);
  EXPECT_EQ(reinterpret_cast<InitV1>(init0)(), 1);
}

TEST_F(FakeLibrary, MissingRequiredSymbolsAreAllListedWithThePath) {
  auto lib = DynamicLibrary::open(lib_path_);
  ASSERT_TRUE(lib) << lib.error().message;
  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  void* d = nullptr;
  SymbolSpec specs[] = {
      {"fooInit", &a, true, 2},
      {"fooMissingOne", &b, true, 0},
      {"fooOptional", &c, false, 0},
      {"fooMissingTwo", &d, true, 4},
  };
  auto bound = bind_symbols(*lib, specs);
  ASSERT_FALSE(bound);
  const std::string& msg = bound.error().message;
  EXPECT_NE(msg.find("fooMissingOne"), std::string::npos) << msg;
  EXPECT_NE(msg.find("fooMissingTwo"), std::string::npos) << msg;
  EXPECT_NE(msg.find(lib_path_), std::string::npos) << msg;
  EXPECT_EQ(msg.find("fooOptional"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("fooInit"), std::string::npos) << msg;
}

TEST_F(FakeLibrary, MoveTransfersOwnership) {
  auto lib = DynamicLibrary::open(lib_path_);
  ASSERT_TRUE(lib) << lib.error().message;
  DynamicLibrary moved(std::move(*lib));
  EXPECT_FALSE(lib->is_open());
  EXPECT_TRUE(moved.is_open());
  EXPECT_EQ(moved.requested_name(), lib_path_);
  DynamicLibrary assigned;
  assigned = std::move(moved);
  EXPECT_FALSE(moved.is_open());
  ASSERT_TRUE(assigned.is_open());
  auto fn = reinterpret_cast<InitV1>(assigned.symbol("fooInit"));
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(fn(), 1);
  EXPECT_EQ(moved.symbol("fooInit"), nullptr);
}

TEST(DynamicLibrary, MissingLibraryReportsDlerrorText) {
  auto lib = DynamicLibrary::open("libdlenv-does-not-exist.so.9");
  ASSERT_FALSE(lib);
  const std::string& msg = lib.error().message;
  EXPECT_EQ(msg.rfind("cannot load libdlenv-does-not-exist.so.9: ", 0), 0u) << msg;
  // glibc's dlerror text names the file and the reason.
  EXPECT_NE(msg.find("libdlenv-does-not-exist.so.9: cannot open shared object file"),
            std::string::npos)
      << msg;
}

TEST(DynamicLibrary, BareNameOpenResolvesToAnAbsolutePath) {
  auto lib = DynamicLibrary::open("libm.so.6");
  ASSERT_TRUE(lib) << lib.error().message;
  const std::string path = lib->loaded_path();
  ASSERT_FALSE(path.empty());
  EXPECT_EQ(path.front(), '/') << path;
  EXPECT_TRUE(fs::exists(path)) << path;
  EXPECT_NE(path.find("libm"), std::string::npos);
}

TEST(DynamicLibrary, BindOnAClosedLibraryFails) {
  DynamicLibrary lib;
  EXPECT_FALSE(lib.is_open());
  EXPECT_EQ(lib.symbol("x"), nullptr);
  EXPECT_EQ(lib.loaded_path(), "");
  void* slot = nullptr;
  SymbolSpec specs[] = {{"x", &slot, false, 0}};
  EXPECT_FALSE(bind_symbols(lib, specs));
}

}  // namespace
}  // namespace dlenv

namespace dlenv {
namespace {

// Two copies of one soname in two directories (like a system cuDNN and a pip
// wheel cuDNN): open_isolated must load the second file, not hand back the first.
TEST(DynamicLibraryIsolated, SecondCopyWithTheSameSonameIsReallyLoaded) {
  TempDir tmp;
  std::string paths[2];
  for (int i = 0; i < 2; ++i) {
    fs::path dir = tmp.path() / ("copy" + std::to_string(i));
    fs::create_directories(dir);
    fs::path src = dir / "same.cc";
    std::ofstream(src) << "extern \"C\" int sameVersion(void) { return " << (i + 1) << "; }\n";
    paths[i] = (dir / "libsame.so.1").string();
    auto r = run_process({DLENV_CXX_COMPILER, "-shared", "-fPIC", "-Wl,-soname,libsame.so.1", "-o",
                          paths[i], src.string()},
                         with_timeout(120s));
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(r->exit_code, 0) << r->err;
  }
  using Fn = int (*)();
  auto first = DynamicLibrary::open(paths[0]);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(reinterpret_cast<Fn>(first->symbol("sameVersion"))(), 1);
  auto second = DynamicLibrary::open_isolated(paths[1]);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(second->loaded_path(), paths[1]);
  EXPECT_EQ(reinterpret_cast<Fn>(second->symbol("sameVersion"))(), 2);
}

TEST(DynamicLibraryIsolated, MissingFileReportsTheLoaderError) {
  auto lib = DynamicLibrary::open_isolated("/nonexistent/dir/libnothing.so.7");
  ASSERT_FALSE(lib);
  EXPECT_NE(lib.error().message.find("/nonexistent/dir/libnothing.so.7"), std::string::npos);
}

}  // namespace
}  // namespace dlenv
