#include "util/version.h"

#include <gtest/gtest.h>

namespace dlenv {
namespace {

TEST(Version, ParsesDottedNumbers) {
  auto v = Version::parse("525.60.13");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->str(), "525.60.13");
  EXPECT_EQ(v->major(), 525);
  EXPECT_EQ(v->minor(), 60);
  EXPECT_EQ(Version::parse("v11.8")->str(), "11.8");
  EXPECT_EQ(Version::parse(" 13.0 (GA)")->str(), "13.0");
  EXPECT_EQ(Version::parse("12.")->str(), "12");
  EXPECT_FALSE(Version::parse("abc"));
  EXPECT_FALSE(Version::parse(""));
  EXPECT_FALSE(Version::parse("99999999999999999999"));
}

TEST(Version, ComparesComponentWiseWithImplicitZeros) {
  EXPECT_LT(*Version::parse("9.2"), *Version::parse("9.10"));
  EXPECT_EQ(*Version::parse("12.0"), *Version::parse("12"));
  EXPECT_GT(*Version::parse("580.65.06"), *Version::parse("580.65"));
  EXPECT_LT(*Version::parse("525.60.13"), *Version::parse("525.85"));
}

TEST(Version, DecodesCudaAndCudnnIntegers) {
  EXPECT_EQ(Version::from_cuda_int(13000).str(), "13.0");
  EXPECT_EQ(Version::from_cuda_int(12040).str(), "12.4");
  EXPECT_EQ(Version::from_cuda_int(11080).str(), "11.8");
  EXPECT_EQ(Version::from_cudnn_int(8907).str(), "8.9.7");
  EXPECT_EQ(Version::from_cudnn_int(91900).str(), "9.19.0");
  EXPECT_EQ(Version::from_cudnn_int(90100).str(), "9.1.0");
  EXPECT_EQ(Version::from_cudnn_int(7605).str(), "7.6.5");
}

TEST(Version, KeepsLeadingZerosForDisplay) {
  EXPECT_EQ(Version::parse("580.65.06")->str(), "580.65.06");
  EXPECT_EQ(*Version::parse("580.65.06"), *Version::parse("580.65.6"));
  EXPECT_EQ(Version::parse("580.65.06")->truncated(2).str(), "580.65");
}

TEST(Version, Truncates) {
  EXPECT_EQ(Version::parse("12.4.131")->truncated(2).str(), "12.4");
}

}  // namespace
}  // namespace dlenv
