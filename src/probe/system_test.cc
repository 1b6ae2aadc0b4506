// Parsers of the system probe: tmpfs sizes, host_config.h GCC limits, compiler
// names, the efivars Secure Boot byte.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "probe/system_probe.h"

namespace dlenv {
namespace {

TEST(SystemProbe, TmpfsSizes) {
  EXPECT_EQ(parse_tmpfs_size("65536k"), 64ull << 20);
  EXPECT_EQ(parse_tmpfs_size("8g"), 8ull << 30);
  EXPECT_EQ(parse_tmpfs_size("8G"), 8ull << 30);
  EXPECT_EQ(parse_tmpfs_size("1048576"), 1ull << 20);
  EXPECT_EQ(parse_tmpfs_size("50%"), std::nullopt);
  EXPECT_EQ(parse_tmpfs_size(""), std::nullopt);
  EXPECT_EQ(parse_tmpfs_size("k"), std::nullopt);
  EXPECT_EQ(parse_tmpfs_size("12x"), std::nullopt);
  EXPECT_EQ(parse_tmpfs_size("99999999999999999999g"), std::nullopt);
}

TEST(SystemProbe, HostConfigGccLimit) {
  EXPECT_EQ(host_config_max_gcc("#if defined(__GNUC__)\n\n#if __GNUC__ > 15\n\n#error -- "
                                "unsupported GNU version! gcc versions later than 15\n#endif\n"),
            15);
  // CUDA 12.0-style check with a minor clause.
  EXPECT_EQ(host_config_max_gcc("#if __GNUC__ > 12 || (__GNUC__ == 12 && __GNUC_MINOR__ > 2)\n"
                                "#error -- unsupported GNU version! gcc versions later than 12\n"),
            12);
  EXPECT_EQ(host_config_max_gcc("#if __GNUC__ >= 4\n#error -- unsupported GNU version!\n"),
            std::nullopt);
  EXPECT_EQ(host_config_max_gcc("#error -- unsupported GNU version!\n"), std::nullopt);
  EXPECT_EQ(host_config_max_gcc(""), std::nullopt);
}

TEST(SystemProbe, RealToolkitHostConfigHasALimit) {
  std::ifstream in("/usr/local/cuda/include/crt/host_config.h");
  if (!in) GTEST_SKIP() << "no CUDA toolkit at /usr/local/cuda";
  std::stringstream ss;
  ss << in.rdbuf();
  auto n = host_config_max_gcc(ss.str());
  ASSERT_TRUE(n.has_value());
  EXPECT_GE(*n, 9);
  EXPECT_LE(*n, 30);
}

TEST(SystemProbe, GccMajorFromName) {
  EXPECT_EQ(gcc_major_from_name("gcc-13"), 13);
  EXPECT_EQ(gcc_major_from_name("/usr/bin/g++-12"), 12);
  EXPECT_EQ(gcc_major_from_name("x86_64-linux-gnu-gcc-11"), 11);
  EXPECT_EQ(gcc_major_from_name("gcc"), std::nullopt);
  EXPECT_EQ(gcc_major_from_name("gcc-ar-12"), std::nullopt);
  EXPECT_EQ(gcc_major_from_name("clang-17"), std::nullopt);
  EXPECT_EQ(gcc_major_from_name("gcc-"), std::nullopt);
}

TEST(SystemProbe, SecureBootByte) {
  EXPECT_EQ(secure_boot_from_efivar(std::string("\x06\x00\x00\x00\x01", 5)), true);
  EXPECT_EQ(secure_boot_from_efivar(std::string("\x06\x00\x00\x00\x00", 5)), false);
  EXPECT_EQ(secure_boot_from_efivar(std::string("\x01", 1)), true);
  EXPECT_EQ(secure_boot_from_efivar(""), std::nullopt);
  EXPECT_EQ(secure_boot_from_efivar("garbage bytes"), std::nullopt);
}

}  // namespace
}  // namespace dlenv
