// The real FileWriter on this platform (POSIX here, Windows under Wine in the mingw build):
// the toolkit lock is exclusive, waits and is freed; a new file is complete only when
// finished and never goes over anything; a rename never replaces.
#include "actions/file_writer.h"

#include <gtest/gtest.h>
#ifdef _WIN32
#include <windows.h>
#endif

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

namespace dlenv {
namespace {

namespace sfs = std::filesystem;

struct Scratch {
  sfs::path dir;
  Scratch() {
    std::random_device rd;
    dir = sfs::temp_directory_path() / ("dlenv-fw-" + std::to_string(rd()));
    sfs::create_directories(dir / "tk");
  }
  ~Scratch() {
    std::error_code ec;
    sfs::remove_all(dir, ec);
  }
  // The writer's paths are rooted at `dir` ("/tk/x"), as under --root.
  std::string host(const std::string& logical) const { return (dir / logical.substr(1)).string(); }
};

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(FileWriter, TheToolkitLockIsExclusiveWaitsAndIsFreed) {
  Scratch s;
  auto a = make_file_writer(s.dir.string());
  auto b = make_file_writer(s.dir.string());
  auto held = a->lock_dir("/tk", false);
  ASSERT_TRUE(held) << held.error().message;
  ASSERT_TRUE(*held);
  auto busy = b->lock_dir("/tk", false);
  ASSERT_TRUE(busy) << busy.error().message;
  EXPECT_FALSE(*busy) << "a second lock of the same toolkit was granted";

  // A waiting writer gets it only once the holder lets go.
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    auto w = b->lock_dir("/tk", true);
    got = w && *w;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(got.load());
  held->reset();
  waiter.join();
  EXPECT_TRUE(got.load());
  // Freed again when the waiter's lock ended with its thread's scope.
  auto again = a->lock_dir("/tk", false);
  ASSERT_TRUE(again);
  EXPECT_TRUE(*again);
}

TEST(FileWriter, ANewFileIsCompleteOnlyWhenFinished) {
  Scratch s;
  auto w = make_file_writer(s.dir.string());
  {
    auto f = w->create_new_file("/tk/done.h", 0644, 5);
    ASSERT_TRUE(f) << f.error().message;
    ASSERT_TRUE((*f)->write("hel"));
    ASSERT_TRUE((*f)->write("lo"));
    EXPECT_FALSE((*f)->write("!")) << "past the declared size";
    auto fin = (*f)->finish();
    EXPECT_TRUE(fin) << (fin ? "" : fin.error().message);
  }
  EXPECT_EQ(read(s.host("/tk/done.h")), "hello");
  {
    auto f = w->create_new_file("/tk/short.h", 0644, 10);
    ASSERT_TRUE(f);
    ASSERT_TRUE((*f)->write("abc"));
    auto fin = (*f)->finish();
    ASSERT_FALSE(fin);
    EXPECT_NE(fin.error().message.find("3 bytes were written, 10 were declared"), std::string::npos)
        << fin.error().message;
  }
  EXPECT_FALSE(sfs::exists(s.host("/tk/short.h"))) << "an unfinished file is removed";
  auto over = w->create_new_file("/tk/done.h", 0644, 1);
  ASSERT_FALSE(over);
  EXPECT_NE(over.error().message.find("something is already there"), std::string::npos)
      << over.error().message;
  EXPECT_EQ(read(s.host("/tk/done.h")), "hello");
}

TEST(FileWriter, ARenameNeverReplacesAndAnAppendIsDurable) {
  Scratch s;
  auto w = make_file_writer(s.dir.string());
  for (const char* name : {"/tk/a", "/tk/b"}) {
    auto f = w->create_new_file(name, 0644, 1);
    ASSERT_TRUE(f);
    ASSERT_TRUE((*f)->write(name + 4));
    ASSERT_TRUE((*f)->finish());
  }
  auto r = w->rename("/tk/a", "/tk/b");
  ASSERT_FALSE(r);
  EXPECT_EQ(read(s.host("/tk/a")), "a");
  EXPECT_EQ(read(s.host("/tk/b")), "b");
  ASSERT_TRUE(w->rename("/tk/a", "/tk/c"));
  EXPECT_FALSE(sfs::exists(s.host("/tk/a")));
  EXPECT_EQ(read(s.host("/tk/c")), "a");
  ASSERT_TRUE(w->append_durably("/tk/journal", "one\n"));
  ASSERT_TRUE(w->append_durably("/tk/journal", "two\n"));
  EXPECT_EQ(read(s.host("/tk/journal")), "one\ntwo\n");
}

// A directory on the way that is a link (POSIX symlink; Windows symbolic link or junction) is
// never written through: creating, renaming into or removing under it is refused, naming it.
TEST(FileWriter, NeverWritesThroughALinkOnTheWay) {
  Scratch s;
  Scratch outside;
  std::error_code ec;
#ifdef _WIN32
  // libstdc++ has no symbolic links on Windows: the API itself (Wine implements it).
  if (!::CreateSymbolicLinkW(
          (s.dir / "tk" / "lib64").wstring().c_str(), (outside.dir / "tk").wstring().c_str(),
          SYMBOLIC_LINK_FLAG_DIRECTORY | SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE) ||
      ::GetFileAttributesW((s.dir / "tk" / "lib64").wstring().c_str()) == INVALID_FILE_ATTRIBUTES) {
    // Wine answers TRUE and makes nothing: this case runs on real Windows only.
    GTEST_SKIP() << "cannot make a directory link here";
  }
#else
  sfs::create_directory_symlink(outside.dir / "tk", s.dir / "tk" / "lib64", ec);
  if (ec) GTEST_SKIP() << "cannot make a directory link here: " << ec.message();
#endif
  auto w = make_file_writer(s.dir.string());
  auto f = w->create_new_file("/tk/lib64/libx.so", 0644, 1);
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().message.find("never writes through one"), std::string::npos)
      << f.error().message;
  auto d = w->make_dir("/tk/lib64/sub", 0755);
  ASSERT_FALSE(d);
  {
    auto g = w->create_new_file("/tk/a", 0644, 1);
    ASSERT_TRUE(g);
    ASSERT_TRUE((*g)->write("a"));
    ASSERT_TRUE((*g)->finish());
  }
  EXPECT_FALSE(w->rename("/tk/a", "/tk/lib64/a"));
  EXPECT_FALSE(w->append_durably("/tk/lib64/journal", "x\n"));
  EXPECT_TRUE(sfs::is_empty(outside.dir / "tk")) << "something was written through the link";
  EXPECT_TRUE(sfs::exists(s.dir / "tk" / "a"));
}

}  // namespace
}  // namespace dlenv
