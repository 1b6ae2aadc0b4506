#include <gtest/gtest.h>

#include "actions/cudnn_source.h"

namespace dlenv {
namespace {

TEST(TarListing, GnuVerboseListingGivesTypesModesSizesAndLinks) {
  const char* text =
      "drwxr-xr-x root/root         0 2024-01-01 12:00 top/\n"
      "-rw-r--r-- root/root      1234 2024-01-01 12:00 top/include/cudnn version.h\n"
      "-rwxr-xr-x 1000/1000   5000000 2024-01-01 12:00 top/lib/libcudnn.so.9.1.0\n"
      "lrwxrwxrwx root/root         0 2024-01-01 12:00 top/lib/libcudnn.so.9 -> "
      "libcudnn.so.9.1.0\n"
      "hrwxr-xr-x root/root         0 2024-01-01 12:00 top/lib/copy link to "
      "top/lib/libcudnn.so.9.1.0\n"
      "crw-r--r-- root/root       1,3 2024-01-01 12:00 top/null\n";
  auto r = parse_tar_listing(text, TarFlavor::gnu);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 6u);
  EXPECT_EQ((*r)[0].type, SourceEntryType::directory);
  EXPECT_EQ((*r)[0].raw_path, "top");
  EXPECT_EQ((*r)[1].raw_path, "top/include/cudnn version.h");
  EXPECT_EQ((*r)[1].size, 1234u);
  EXPECT_EQ((*r)[1].mode, 0644u);
  EXPECT_EQ((*r)[2].size, 5000000u);
  EXPECT_EQ((*r)[2].mode, 0755u);
  EXPECT_EQ((*r)[3].type, SourceEntryType::symlink);
  EXPECT_EQ((*r)[3].raw_path, "top/lib/libcudnn.so.9");
  EXPECT_EQ((*r)[3].link_target, "libcudnn.so.9.1.0");
  EXPECT_EQ((*r)[4].type, SourceEntryType::hardlink);
  EXPECT_EQ((*r)[4].link_target, "top/lib/libcudnn.so.9.1.0");
  EXPECT_EQ((*r)[5].type, SourceEntryType::device);
}

TEST(TarListing, BsdtarListingWithWindowsLineEnds) {
  // Windows' tar.exe (bsdtar 3.x) writes \r\n.
  const char* text =
      "drwxr-xr-x  0 0      0           0 Aug  2  2022 cudnn-windows-x86_64-8.5.0.96_cuda11/\r\n"
      "-rw-r--r--  0 0      0       29135 Aug  2 12:00 "
      "cudnn-windows-x86_64-8.5.0.96_cuda11/bin/cudnn64_8.dll\r\n"
      "lrwxrwxrwx  0 user   group       0 Aug  2 12:00 top/x -> ../../etc\r\n";
  auto r = parse_tar_listing(text, TarFlavor::bsd);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[1].raw_path, "cudnn-windows-x86_64-8.5.0.96_cuda11/bin/cudnn64_8.dll");
  EXPECT_EQ((*r)[1].size, 29135u);
  EXPECT_EQ((*r)[2].link_target, "../../etc");
  // The listing is checked like any source: the escaping link is refused.
  auto checked = check_source_entries(std::move(*r), "archive a.zip");
  ASSERT_FALSE(checked);
  EXPECT_NE(checked.error().message.find("leaves the distribution"), std::string::npos);
}

TEST(TarListing, MalformedLinesAreErrorsNamingTheLine) {
  auto r = parse_tar_listing("-rw-r--r-- root/root 12x 2024-01-01 12:00 a\n", TarFlavor::gnu);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("line 1"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("size"), std::string::npos);
  r = parse_tar_listing("ok\n", TarFlavor::bsd);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("too few fields"), std::string::npos);
  r = parse_tar_listing("lrwxrwxrwx root/root 0 2024-01-01 12:00 a-without-target\n",
                        TarFlavor::gnu);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("-> TARGET"), std::string::npos);
}

TEST(TarProgram, MissingProgramIsNotAReaderAndTheErrorSaysWhatToDo) {
  EXPECT_FALSE(probe_tar_program("dlenv-no-such-tar-program"));
  ArchiveReaders none{{"libdlenv-no-such-libarchive.so.13"}, {"dlenv-no-such-tar-program"}};
  auto src = open_archive_source("cudnn.tar.xz", {}, none);
  ASSERT_FALSE(src);
  const std::string& m = src.error().message;
  EXPECT_NE(m.find("cudnn.tar.xz"), std::string::npos) << m;
  EXPECT_NE(m.find("extract"), std::string::npos) << m;
}

}  // namespace
}  // namespace dlenv
