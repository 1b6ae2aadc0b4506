#include "util/strings.h"

#include <gtest/gtest.h>

namespace dlenv {
namespace {

TEST(ParseByteSize, NumbersAndBinaryUnits) {
  EXPECT_EQ(parse_byte_size("0"), 0ull);
  EXPECT_EQ(parse_byte_size("1048576"), 1048576ull);
  EXPECT_EQ(parse_byte_size("512K"), 512ull << 10);
  EXPECT_EQ(parse_byte_size("64m"), 64ull << 20);
  EXPECT_EQ(parse_byte_size("2G"), 2ull << 30);
  EXPECT_EQ(parse_byte_size("2GiB"), 2ull << 30);
  EXPECT_EQ(parse_byte_size("3GB"), 3ull << 30);
  EXPECT_EQ(parse_byte_size("1T"), 1ull << 40);
  EXPECT_EQ(parse_byte_size("7B"), 7ull);
}

TEST(ParseByteSize, RefusesWhatIsNotASize) {
  for (const char* bad :
       {"", "G", "-1", "1.5G", "12X", "1 G", "99999999999999999999", "17179869184T"}) {
    EXPECT_FALSE(parse_byte_size(bad)) << bad;
  }
}

TEST(FileNameOf, EitherSeparatorAsGiven) {
  EXPECT_EQ(file_name_of("C:\\Tools\\dlenv\\dlenv.exe"), "dlenv.exe");
  EXPECT_EQ(file_name_of("/usr/local/bin/dlenv"), "dlenv");
  EXPECT_EQ(file_name_of("C:\\CUDA\\v11.7\\bin/cudnn64_8.dll"), "cudnn64_8.dll");
  EXPECT_EQ(file_name_of("cudnn64_8.dll"), "cudnn64_8.dll");
  EXPECT_EQ(file_name_of("dir/"), "");
}

}  // namespace
}  // namespace dlenv
