#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "platform/filesystem.h"

namespace dlenv {
namespace {

namespace fs = std::filesystem;

// A fresh directory under $DLENV_TEST_TMP (or /tmp), removed afterwards.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("DLENV_TEST_TMP");
    fs::path dir = base != nullptr && *base != '\0' ? fs::path(base) : fs::path("/tmp");
    fs::create_directories(dir);
    std::string tmpl = (dir / "platform-fs-XXXXXX").string();
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

void write_file(const fs::path& p, std::string_view content) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
}

// root/
//   etc/passwd                          "rooted passwd"
//   usr/lib/libreal.so.1                "real library"
//   usr/lib/libreal.so   -> libreal.so.1               (relative)
//   usr/lib/abs.so       -> /usr/lib/libreal.so.1      (absolute: re-rooted)
//   usr/lib/up.so        -> ../../etc/passwd
//   usr/lib/escape       -> ../../../../../../etc/passwd  (clamped at the root)
//   usr/lib/escape_dir   -> ../../../../..                (the root itself)
//   usr/lib/outside      -> <host path of a file outside the root>
//   usr/lib/loop1 -> loop2, usr/lib/loop2 -> loop1
//   usr/lib/self -> self
//   libdir -> /usr/lib                  (absolute link to a directory)
//   a/b/c -> ../../usr/lib              (".." after it is physical)
//   empty                               ""
class RootedFs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = tmp_.path() / "root";
    outside_ = tmp_.path() / "outside_secret";
    write_file(outside_, "host secret");
    write_file(root_ / "etc/passwd", "rooted passwd");
    write_file(root_ / "usr/lib/libreal.so.1", "real library");
    write_file(root_ / "empty", "");
    fs::create_directories(root_ / "a/b");
    fs::create_symlink("libreal.so.1", root_ / "usr/lib/libreal.so");
    fs::create_symlink("/usr/lib/libreal.so.1", root_ / "usr/lib/abs.so");
    fs::create_symlink("../../etc/passwd", root_ / "usr/lib/up.so");
    fs::create_symlink("../../../../../../etc/passwd", root_ / "usr/lib/escape");
    fs::create_symlink("../../../../..", root_ / "usr/lib/escape_dir");
    fs::create_symlink(outside_, root_ / "usr/lib/outside");
    fs::create_symlink("loop2", root_ / "usr/lib/loop1");
    fs::create_symlink("loop1", root_ / "usr/lib/loop2");
    fs::create_symlink("self", root_ / "usr/lib/self");
    fs::create_symlink("/usr/lib", root_ / "libdir");
    fs::create_symlink("../../usr/lib", root_ / "a/b/c");
    fsys_ = make_rooted_filesystem(root_.string() + "/");
  }

  TempDir tmp_;
  fs::path root_, outside_;
  std::unique_ptr<FileSystem> fsys_;
};

TEST_F(RootedFs, ReadsFilesUnderTheRoot) {
  EXPECT_TRUE(fsys_->is_rooted());
  auto text = fsys_->read_file("/etc/passwd");
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(*text, "rooted passwd");
  EXPECT_EQ(*fsys_->read_file("etc/passwd"), "rooted passwd");  // relative = from the root
  EXPECT_EQ(*fsys_->read_file("/usr/./lib/../../etc//passwd"), "rooted passwd");
}

TEST_F(RootedFs, FollowsRelativeAndAbsoluteSymlinksInsideTheRoot) {
  EXPECT_EQ(*fsys_->read_file("/usr/lib/libreal.so"), "real library");
  EXPECT_EQ(*fsys_->read_file("/usr/lib/abs.so"), "real library");
  EXPECT_EQ(*fsys_->read_file("/usr/lib/up.so"), "rooted passwd");
  EXPECT_EQ(*fsys_->read_file("/libdir/libreal.so"), "real library");
  EXPECT_EQ(*fsys_->real_path("/usr/lib/libreal.so"), "/usr/lib/libreal.so.1");
  EXPECT_EQ(*fsys_->real_path("/usr/lib/abs.so"), "/usr/lib/libreal.so.1");
  EXPECT_EQ(*fsys_->real_path("/libdir/abs.so"), "/usr/lib/libreal.so.1");
  EXPECT_EQ(*fsys_->real_path("/usr/lib/up.so"), "/etc/passwd");
  // ".." after a symlinked directory goes up from the link's target.
  EXPECT_EQ(*fsys_->real_path("/a/b/c/../lib/libreal.so"), "/usr/lib/libreal.so.1");
  EXPECT_EQ(*fsys_->real_path("/a/b/c"), "/usr/lib");
  EXPECT_EQ(*fsys_->real_path("/"), "/");
}

TEST_F(RootedFs, DotDotEscapesAreClampedAtTheRoot) {
  auto text = fsys_->read_file("/usr/lib/escape");
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(*text, "rooted passwd");
  EXPECT_EQ(*fsys_->real_path("/usr/lib/escape"), "/etc/passwd");
  EXPECT_EQ(*fsys_->real_path("/usr/lib/escape_dir"), "/");
  EXPECT_EQ(*fsys_->read_file("/usr/lib/escape_dir/etc/passwd"), "rooted passwd");
  EXPECT_EQ(*fsys_->read_file("/../../../../etc/passwd"), "rooted passwd");
  EXPECT_EQ(fsys_->host_path("/usr/lib/escape"), (root_ / "etc/passwd").string());
  EXPECT_EQ(fsys_->host_path("/../.."), root_.string());
}

TEST_F(RootedFs, AbsoluteLinkToAHostFileDoesNotLeaveTheRoot) {
  auto text = fsys_->read_file("/usr/lib/outside");
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().message.find("host secret"), std::string::npos);
  EXPECT_NE(text.error().message.find("/usr/lib/outside"), std::string::npos);
  EXPECT_FALSE(fsys_->stat("/usr/lib/outside"));
  ASSERT_TRUE(fsys_->lstat("/usr/lib/outside"));
  EXPECT_EQ(fsys_->lstat("/usr/lib/outside")->type, FileType::symlink);
  EXPECT_FALSE(fsys_->real_path("/usr/lib/outside"));
  EXPECT_FALSE(fsys_->can_read("/usr/lib/outside"));
  // The host path is the re-rooted target, not the host file.
  EXPECT_EQ(fsys_->host_path("/usr/lib/outside"), root_.string() + outside_.string());
}

TEST_F(RootedFs, SymlinkLoopIsAnError) {
  auto text = fsys_->read_file("/usr/lib/loop1");
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message.find("/usr/lib/loop1"), std::string::npos) << text.error().message;
  EXPECT_NE(text.error().message.find(std::strerror(ELOOP)), std::string::npos)
      << text.error().message;
  auto self = fsys_->real_path("/usr/lib/self");
  ASSERT_FALSE(self);
  EXPECT_NE(self.error().message.find(std::strerror(ELOOP)), std::string::npos);
  EXPECT_FALSE(fsys_->stat("/usr/lib/loop1"));
  ASSERT_TRUE(fsys_->lstat("/usr/lib/loop1"));
  EXPECT_EQ(fsys_->lstat("/usr/lib/loop1")->type, FileType::symlink);
  EXPECT_FALSE(fsys_->map_file("/usr/lib/loop2"));
  EXPECT_FALSE(fsys_->list_dir("/usr/lib/loop2"));
}

TEST_F(RootedFs, ChainOfFortySymlinksResolvesButFortyOneDoesNot) {
  // link0 -> link1 -> ... -> linkN -> target
  auto make_chain = [&](const std::string& prefix, int n) {
    write_file(root_ / (prefix + "_target"), "end");
    for (int i = 0; i < n; ++i) {
      std::string next = i + 1 < n ? prefix + std::to_string(i + 1) : prefix + "_target";
      fs::create_symlink(next, root_ / (prefix + std::to_string(i)));
    }
  };
  make_chain("ok", 40);
  make_chain("bad", 41);
  EXPECT_EQ(*fsys_->read_file("/ok0"), "end");
  EXPECT_FALSE(fsys_->read_file("/bad0"));
}

TEST_F(RootedFs, ReadLinkStatAndLstat) {
  EXPECT_EQ(*fsys_->read_link("/usr/lib/abs.so"), "/usr/lib/libreal.so.1");
  EXPECT_EQ(*fsys_->read_link("/usr/lib/libreal.so"), "libreal.so.1");
  // read_link follows links in the directory part only.
  EXPECT_EQ(*fsys_->read_link("/libdir/libreal.so"), "libreal.so.1");
  auto not_link = fsys_->read_link("/etc/passwd");
  ASSERT_FALSE(not_link);
  EXPECT_NE(not_link.error().message.find("/etc/passwd"), std::string::npos);
  EXPECT_NE(not_link.error().message.find(std::strerror(EINVAL)), std::string::npos);

  auto st = fsys_->stat("/usr/lib/abs.so");
  ASSERT_TRUE(st);
  EXPECT_EQ(st->type, FileType::regular);
  EXPECT_EQ(st->size, 12u);
  auto lst = fsys_->lstat("/usr/lib/abs.so");
  ASSERT_TRUE(lst);
  EXPECT_EQ(lst->type, FileType::symlink);
  EXPECT_TRUE(fsys_->is_dir("/libdir"));
  EXPECT_TRUE(fsys_->is_file("/libdir/abs.so"));
  EXPECT_TRUE(fsys_->exists("/usr/lib/loop1"));
  EXPECT_FALSE(fsys_->exists("/nope"));
  EXPECT_FALSE(fsys_->stat("/nope/deeper"));
  EXPECT_FALSE(fsys_->stat("/etc/passwd/child"));
}

TEST_F(RootedFs, ListDirIsSortedWithLstatTypes) {
  auto entries = fsys_->list_dir("/libdir");  // through an absolute dir link
  ASSERT_TRUE(entries) << entries.error().message;
  std::vector<std::string> names;
  for (const auto& e : *entries) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"abs.so", "escape", "escape_dir", "libreal.so",
                                             "libreal.so.1", "loop1", "loop2", "outside", "self",
                                             "up.so"}));
  EXPECT_EQ((*entries)[0].type, FileType::symlink);
  EXPECT_EQ((*entries)[4].type, FileType::regular);

  auto top = fsys_->list_dir("/");
  ASSERT_TRUE(top);
  ASSERT_EQ(top->size(), 5u);
  EXPECT_EQ((*top)[0].name, "a");
  EXPECT_EQ((*top)[0].type, FileType::directory);
  EXPECT_EQ((*top)[3].name, "libdir");
  EXPECT_EQ((*top)[3].type, FileType::symlink);

  auto missing = fsys_->list_dir("/no/such/dir");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("/no/such/dir"), std::string::npos);
  EXPECT_NE(missing.error().message.find(std::strerror(ENOENT)), std::string::npos);
}

TEST_F(RootedFs, ReadFileSizeLimitNamesPathAndSize) {
  auto small = fsys_->read_file("/usr/lib/abs.so", 5);
  ASSERT_FALSE(small);
  EXPECT_NE(small.error().message.find("/usr/lib/abs.so"), std::string::npos);
  EXPECT_NE(small.error().message.find("12 bytes"), std::string::npos) << small.error().message;
  EXPECT_TRUE(fsys_->read_file("/usr/lib/abs.so", 12));
}

// A FIFO (or socket, or device) where a file is expected is named and never read: a
// blocking open or read would hang the probe, /dev/zero would never end.
TEST_F(RootedFs, FifoAndDeviceAreNamedNotRead) {
  ASSERT_EQ(::mkfifo((root_ / "usr/lib/libfifo.so.1").c_str(), 0644), 0);
  for (const char* path : {"/usr/lib/libfifo.so.1"}) {
    auto r = fsys_->read_file(path);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("it is a FIFO, not a regular file"), std::string::npos)
        << r.error().message;
    auto m = fsys_->map_file(path);
    ASSERT_FALSE(m);
    EXPECT_NE(m.error().message.find("FIFO"), std::string::npos) << m.error().message;
    char buf[16];
    EXPECT_FALSE(fsys_->read_at(path, 0, std::span<char>(buf, sizeof buf)));
  }
  auto real = make_real_filesystem();
  auto zero = real->read_file("/dev/zero");
  ASSERT_FALSE(zero);
  EXPECT_NE(zero.error().message.find("it is a character device, not a regular file"),
            std::string::npos)
      << zero.error().message;
  EXPECT_FALSE(real->map_file("/dev/zero"));
  auto dir = real->read_file("/");
  ASSERT_FALSE(dir);
  EXPECT_NE(dir.error().message.find("a directory"), std::string::npos) << dir.error().message;
}

TEST_F(RootedFs, MissingFileErrorHasPathAndStrerror) {
  auto r = fsys_->read_file("/etc/shadow");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("/etc/shadow"), std::string::npos);
  EXPECT_NE(r.error().message.find(std::strerror(ENOENT)), std::string::npos) << r.error().message;
  auto d = fsys_->read_file("/etc");
  ASSERT_FALSE(d);
  EXPECT_NE(d.error().message.find("it is a directory, not a regular file"), std::string::npos)
      << d.error().message;
}

TEST_F(RootedFs, MapFileGivesBytesAndEmptyView) {
  auto m = fsys_->map_file("/usr/lib/libreal.so");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ((*m)->bytes().as_string_view(), "real library");
  auto e = fsys_->map_file("/empty");
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ((*e)->bytes().size(), 0u);
  auto missing = fsys_->map_file("/nope");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("/nope"), std::string::npos);
  EXPECT_FALSE(fsys_->map_file("/etc"));
}

TEST_F(RootedFs, ReadAtReadsRangesInsideTheRoot) {
  char buf[8];
  auto n = fsys_->read_at("/usr/lib/libreal.so", 5, std::span<char>(buf, 4));  // "real library"
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(std::string(buf, *n), "libr");
  n = fsys_->read_at("/usr/lib/libreal.so", 8, std::span<char>(buf, 8));  // short at the end
  ASSERT_TRUE(n);
  EXPECT_EQ(std::string(buf, *n), "rary");
  n = fsys_->read_at("/usr/lib/libreal.so", 100, std::span<char>(buf, 8));  // past the end
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 0u);
  auto head = fsys_->read_head("/usr/lib/libreal.so", 4);
  ASSERT_TRUE(head);
  EXPECT_EQ(*head, "real");
  auto missing = fsys_->read_at("/nope", 0, std::span<char>(buf, 8));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("/nope"), std::string::npos);
}

TEST_F(RootedFs, AccessChecksUseTheFileInsideTheRoot) {
  EXPECT_TRUE(fsys_->can_read("/usr/lib/abs.so"));
  EXPECT_TRUE(fsys_->can_write("/etc/passwd"));
  EXPECT_FALSE(fsys_->can_read("/nope"));
  if (::geteuid() != 0) {  // root bypasses permission bits
    fs::permissions(root_ / "etc/passwd", fs::perms::owner_read);
    EXPECT_TRUE(fsys_->can_read("/usr/lib/up.so"));
    EXPECT_FALSE(fsys_->can_write("/usr/lib/up.so"));
    fs::permissions(root_ / "etc/passwd", fs::perms::none);
    EXPECT_FALSE(fsys_->can_read("/etc/passwd"));
    fs::permissions(root_ / "etc/passwd", fs::perms::owner_all);
  }
  EXPECT_EQ(fsys_->host_path("/usr/lib/abs.so"), (root_ / "usr/lib/libreal.so.1").string());
  EXPECT_EQ(fsys_->host_path("/not/there"), (root_ / "not/there").string());
  // Links after a missing directory are still resolved inside the root.
  EXPECT_EQ(fsys_->host_path("/missing/../usr/lib/abs.so"),
            (root_ / "usr/lib/libreal.so.1").string());
  EXPECT_FALSE(fsys_->read_file("/missing/../etc/passwd"));  // like the kernel: ENOENT
}

TEST(RealFs, ReadsHostFiles) {
  TempDir tmp;
  write_file(tmp.path() / "f.txt", "hello");
  fs::create_symlink("f.txt", tmp.path() / "link");
  fs::create_symlink("/", tmp.path() / "slash");
  auto fsys = make_real_filesystem();
  EXPECT_FALSE(fsys->is_rooted());
  const std::string f = (tmp.path() / "f.txt").string();
  EXPECT_EQ(*fsys->read_file(f), "hello");
  EXPECT_EQ(*fsys->read_file((tmp.path() / "link").string()), "hello");
  EXPECT_EQ(*fsys->real_path((tmp.path() / "link").string()), f);
  EXPECT_EQ(*fsys->read_link((tmp.path() / "link").string()), "f.txt");
  EXPECT_EQ(fsys->host_path(f), f);
  EXPECT_EQ(fsys->stat((tmp.path() / "link").string())->type, FileType::regular);
  EXPECT_EQ(fsys->lstat((tmp.path() / "link").string())->type, FileType::symlink);
  EXPECT_TRUE(fsys->is_dir((tmp.path() / "slash").string()));
  EXPECT_TRUE(fsys->can_read(f));
  auto m = fsys->map_file(f);
  ASSERT_TRUE(m);
  EXPECT_EQ((*m)->bytes().as_string_view(), "hello");
  auto big = fsys->read_file(f, 4);
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().message.find(f), std::string::npos);
  EXPECT_NE(big.error().message.find("5 bytes"), std::string::npos);
  auto missing = fsys->read_file((tmp.path() / "missing").string());
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find(std::strerror(ENOENT)), std::string::npos);
  EXPECT_FALSE(fsys->real_path((tmp.path() / "missing").string()));
  auto entries = fsys->list_dir(tmp.path().string());
  ASSERT_TRUE(entries);
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[0].name, "f.txt");
  EXPECT_EQ((*entries)[1].name, "link");
  EXPECT_EQ((*entries)[1].type, FileType::symlink);
}

TEST(RealFs, UnsizedProcFilesAreReadCompletely) {
  auto fsys = make_real_filesystem();
  if (!fsys->exists("/proc/self/status")) GTEST_SKIP() << "no /proc";
  auto text = fsys->read_file("/proc/self/status");
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_NE(text->find("Pid:"), std::string::npos);
  auto m = fsys->map_file("/proc/self/status");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_NE((*m)->bytes().as_string_view().find("Pid:"), std::string::npos);
  auto limited = fsys->read_file("/proc/self/status", 10);
  ASSERT_FALSE(limited);
  EXPECT_NE(limited.error().message.find("/proc/self/status"), std::string::npos);
}

TEST(RootedFsSlash, RootOfSlashBehavesLikeTheHost) {
  TempDir tmp;
  write_file(tmp.path() / "f.txt", "hi");
  auto fsys = make_rooted_filesystem("/");
  const std::string f = (tmp.path() / "f.txt").string();
  EXPECT_EQ(*fsys->read_file(f), "hi");
  EXPECT_EQ(fsys->host_path(f), f);
  EXPECT_EQ(fsys->host_path("/"), "/");
}

}  // namespace
}  // namespace dlenv
