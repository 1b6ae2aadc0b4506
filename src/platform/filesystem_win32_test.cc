// FileSystem on Windows: UTF-8 names, both separators, drive letters, the rooted view
// of drive C:, errors that name the path.
#include <gtest/gtest.h>
#include <windows.h>

#include <filesystem>
#include <fstream>

#include "platform/filesystem.h"

namespace dlenv {
namespace {

namespace fs = std::filesystem;

class FileSystemWin32 : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* base = std::getenv("DLENV_TEST_TMP");
    fs::path dir = base && *base ? fs::path(base) : fs::temp_directory_path();
    dir_ = dir / ("fs-win32-" + std::to_string(::GetCurrentProcessId()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "Program Files" / "NVIDIA" / u8"d\u00e9j\u00e0");
    write("Program Files/NVIDIA/version.txt", "12.4\n");
    write(std::string("Program Files/NVIDIA/") + "d\xc3\xa9j\xc3\xa0" + "/\xe6\xb7\xb1.txt",
          "deep");
    write("empty.bin", "");
    // The root as a UTF-8 string with '/' separators, e.g. "Z:/work/.../fs-win32-42".
    root_ = utf8(fs::absolute(dir_).generic_u8string());
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  static std::string utf8(const std::u8string& s) { return std::string(s.begin(), s.end()); }
  fs::path host(const std::string& rel) const {
    return dir_ / fs::path(std::u8string(rel.begin(), rel.end()));
  }
  void write(const std::string& rel, const std::string& content) {
    std::ofstream(host(rel), std::ios::binary) << content;
  }

  fs::path dir_;
  std::string root_;
};

TEST_F(FileSystemWin32, ReadsWithEitherSeparator) {
  auto real = make_real_filesystem();
  EXPECT_FALSE(real->is_rooted());
  EXPECT_EQ(real->read_file(root_ + "/Program Files/NVIDIA/version.txt"), "12.4\n");
  std::string back = root_ + "\\Program Files\\NVIDIA\\version.txt";
  EXPECT_EQ(real->read_file(back), "12.4\n");
  EXPECT_TRUE(real->is_file(back));
  EXPECT_TRUE(real->is_dir(root_ + "/Program Files"));
  EXPECT_EQ(real->stat(back)->size, 5u);
  EXPECT_GT(real->stat(back)->mtime, 1600000000);
  EXPECT_TRUE(real->can_read(back));
  EXPECT_TRUE(real->can_write(back));
  EXPECT_EQ(real->host_path(back), back);
}

TEST_F(FileSystemWin32, Utf8NamesRoundTrip) {
  auto real = make_real_filesystem();
  const std::string dir = root_ + "/Program Files/NVIDIA/d\xc3\xa9j\xc3\xa0";
  auto entries = real->list_dir(dir);
  ASSERT_TRUE(entries) << entries.error().message;
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].name, "\xe6\xb7\xb1.txt");
  EXPECT_EQ((*entries)[0].type, FileType::regular);
  EXPECT_EQ(real->read_file(dir + "/\xe6\xb7\xb1.txt"), "deep");
  auto rp = real->real_path(dir + "/../d\xc3\xa9j\xc3\xa0/\xe6\xb7\xb1.txt");
  ASSERT_TRUE(rp) << rp.error().message;
  EXPECT_NE(rp->find("\xe6\xb7\xb1.txt"), std::string::npos) << *rp;
  EXPECT_EQ((*rp)[1], ':') << *rp;
}

TEST_F(FileSystemWin32, ListsSortedWithTypes) {
  auto real = make_real_filesystem();
  auto entries = real->list_dir(root_);
  ASSERT_TRUE(entries) << entries.error().message;
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].name, "Program Files");
  EXPECT_EQ((*entries)[0].type, FileType::directory);
  EXPECT_EQ((*entries)[1].name, "empty.bin");
  EXPECT_EQ((*entries)[1].type, FileType::regular);
}

TEST_F(FileSystemWin32, MapsFilesIncludingEmptyOnes) {
  auto real = make_real_filesystem();
  auto m = real->map_file(root_ + "/Program Files/NVIDIA/version.txt");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ((*m)->bytes().size(), 5u);
  EXPECT_EQ((*m)->bytes().data()[0], '1');
  auto e = real->map_file(root_ + "/empty.bin");
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ((*e)->bytes().size(), 0u);
  EXPECT_FALSE(real->map_file(root_ + "/Program Files"));
}

TEST_F(FileSystemWin32, ErrorsNameThePath) {
  auto real = make_real_filesystem();
  auto missing = real->read_file(root_ + "/nope.txt");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("nope.txt"), std::string::npos);
  EXPECT_NE(missing.error().message.find("error 2"), std::string::npos) << missing.error().message;
  auto big = real->read_file(root_ + "/Program Files/NVIDIA/version.txt", 3);
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().message.find("limit 3 bytes"), std::string::npos);
  EXPECT_FALSE(real->list_dir(root_ + "/nope"));
  EXPECT_FALSE(real->stat(root_ + "/nope"));
  EXPECT_FALSE(real->read_link(root_ + "/empty.bin"));
  EXPECT_FALSE(real->read_file(root_ + "/Program Files"));
}

TEST_F(FileSystemWin32, RootedIsDriveC) {
  auto rooted = make_rooted_filesystem(root_);
  EXPECT_TRUE(rooted->is_rooted());
  for (const char* p :
       {"/Program Files/NVIDIA/version.txt", "C:\\Program Files\\NVIDIA\\version.txt",
        "c:/Program Files/NVIDIA/version.txt", "\\Program Files\\NVIDIA\\version.txt",
        "/Program Files/../Program Files/./NVIDIA/version.txt"}) {
    EXPECT_EQ(rooted->read_file(p), "12.4\n") << p;
  }
  // ".." stops at the root; other drives do not exist under it.
  EXPECT_EQ(rooted->read_file("/../../../Program Files/NVIDIA/version.txt"), "12.4\n");
  EXPECT_FALSE(rooted->exists("D:\\Program Files\\NVIDIA\\version.txt"));
  auto missing = rooted->read_file("C:\\Windows\\System32\\nvcuda.dll");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("C:\\Windows\\System32\\nvcuda.dll (under root "),
            std::string::npos)
      << missing.error().message;
  auto rp = rooted->real_path("C:\\Program Files\\NVIDIA\\..\\NVIDIA\\version.txt");
  ASSERT_TRUE(rp) << rp.error().message;
  EXPECT_EQ(*rp, "/Program Files/NVIDIA/version.txt");
  auto entries = rooted->list_dir("C:\\");
  ASSERT_TRUE(entries) << entries.error().message;
  EXPECT_EQ(entries->size(), 2u);
  EXPECT_NE(rooted->host_path("/Program Files").find("Program Files"), std::string::npos);
}

}  // namespace
}  // namespace dlenv
