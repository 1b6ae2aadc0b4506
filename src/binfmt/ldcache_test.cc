#include "binfmt/ldcache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "binfmt/test_builders.h"

namespace dlenv {
namespace {

using testbuild::build_ld_cache;
using testbuild::CacheEntrySpec;
using testbuild::CacheFormat;
using ::testing::HasSubstr;
using ::testing::StartsWith;

ByteView view(const std::vector<uint8_t>& v) {
  return ByteView(v.data(), v.size());
}

std::vector<CacheEntrySpec> sample_entries() {
  return {
      {0x0303, "libcudnn.so.9", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9", 0},
      {0x0003, "libcudnn.so.9", "/usr/lib32/libcudnn.so.9", 0},
      {0x0303, "libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6", 0},
      {0x0303, "libfoo.so.1", "/usr/lib/glibc-hwcaps/x86-64-v3/libfoo.so.1",
       (uint64_t{1} << 62) | 1},
      {0x0003, "libbar.so.2", "/usr/lib32/libbar.so.2", 0},
  };
}

void expect_entries(const LdCache& c, bool has_hwcap) {
  const auto want = sample_entries();
  ASSERT_EQ(c.entries.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(c.entries[i].soname, want[i].soname) << i;
    EXPECT_EQ(c.entries[i].path, want[i].path) << i;
    EXPECT_EQ(c.entries[i].flags, want[i].flags) << i;
    EXPECT_EQ(c.entries[i].hwcap, has_hwcap ? want[i].hwcap : 0) << i;
  }
}

TEST(LdCache, NewFormat) {
  auto b = build_ld_cache(sample_entries(), CacheFormat::kNew);
  auto r = parse_ld_cache(view(b));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->format, "new");
  expect_entries(**r, true);
}

TEST(LdCache, NewFormatBigEndian) {
  auto b = build_ld_cache(sample_entries(), CacheFormat::kNew, /*big=*/true);
  auto r = parse_ld_cache(view(b));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_TRUE(r->has_value());
  expect_entries(**r, true);
}

TEST(LdCache, OldFormat) {
  auto b = build_ld_cache(sample_entries(), CacheFormat::kOld);
  auto r = parse_ld_cache(view(b));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->format, "old");
  expect_entries(**r, false);
}

TEST(LdCache, CombinedFormatUsesNewTable) {
  auto b = build_ld_cache(sample_entries(), CacheFormat::kCombined);
  auto r = parse_ld_cache(view(b));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->format, "old+new");
  expect_entries(**r, true);  // hwcap only exists in the new table

  // An odd number of old entries makes the alignment padding non-zero.
  auto odd = sample_entries();
  odd.pop_back();
  b = build_ld_cache(odd, CacheFormat::kCombined);
  r = parse_ld_cache(view(b));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ((*r)->format, "old+new");
  EXPECT_EQ((*r)->entries.size(), odd.size());
}

TEST(LdCache, EmptyCaches) {
  for (auto fmt : {CacheFormat::kOld, CacheFormat::kNew, CacheFormat::kCombined}) {
    auto b = build_ld_cache({}, fmt);
    auto r = parse_ld_cache(view(b));
    ASSERT_TRUE(r.has_value()) << r.error().message;
    ASSERT_TRUE(r->has_value());
    EXPECT_TRUE((*r)->entries.empty());
  }
}

TEST(LdCache, FindPrefersX8664) {
  auto entries = sample_entries();
  std::swap(entries[0], entries[1]);  // the 32-bit libcudnn first
  auto b = build_ld_cache(entries, CacheFormat::kNew);
  auto r = parse_ld_cache(view(b));
  ASSERT_TRUE(r.has_value() && r->has_value());
  const LdCache& c = **r;
  ASSERT_NE(c.find("libcudnn.so.9"), nullptr);
  EXPECT_EQ(c.find("libcudnn.so.9")->path, "/usr/lib/x86_64-linux-gnu/libcudnn.so.9");
  EXPECT_TRUE(c.find("libcudnn.so.9")->is_64bit_x86());
  ASSERT_NE(c.find("libbar.so.2"), nullptr);  // only a 32-bit one: still found
  EXPECT_EQ(c.find("libbar.so.2")->path, "/usr/lib32/libbar.so.2");
  EXPECT_FALSE(c.find("libbar.so.2")->is_64bit_x86());
  EXPECT_EQ(c.find("libnope.so.1"), nullptr);
}

TEST(LdCache, NotACache) {
  for (std::string s : {std::string(), std::string("ld.so-1.7"), std::string("glibc-ld.so.cach"),
                        std::string("\x7f"
                                    "ELF\x02\x01\x01",
                                    7),
                        std::string(64, 'x')}) {
    auto r = parse_ld_cache(ByteView(s));
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_FALSE(r->has_value());
  }
}

TEST(LdCache, CorruptGivesErrors) {
  auto expect_error = [](const std::vector<uint8_t>& b, const std::string& what) {
    auto r = parse_ld_cache(view(b));
    ASSERT_FALSE(r.has_value()) << what;
    EXPECT_THAT(r.error().message, StartsWith("ld.so.cache: "));
    EXPECT_THAT(r.error().message, HasSubstr(what));
  };
  const auto nb = build_ld_cache(sample_entries(), CacheFormat::kNew);
  {
    std::vector<uint8_t> b(nb.begin(), nb.begin() + 30);
    expect_error(b, "new-format header truncated");
  }
  {
    auto b = nb;
    testbuild::Writer w(false);
    w.bytes() = b;
    w.put_at(20, 0xffffffff, 4);  // nlibs
    expect_error(w.bytes(), "new-format entry table (4294967295 entries) extends past end of file");
  }
  {
    testbuild::Writer w(false);
    w.bytes() = nb;
    w.put_at(48 + 4, 0x7ffffff0, 4);  // key of entry 0
    expect_error(w.bytes(), "entry 0 key string offset");
  }
  {
    auto b = nb;
    b[17] = '2';  // version "2.1"
    expect_error(b, "unsupported new-format version '2.1'");
  }
  {
    auto b = nb;
    b[28] = 1;
    expect_error(b, "endianness invalid");
  }
  {
    auto b = nb;
    b.resize(b.size() - 1);  // the last path loses its NUL
    expect_error(b, "entry 4 value string offset");
  }
  const auto ob = build_ld_cache(sample_entries(), CacheFormat::kOld);
  {
    std::vector<uint8_t> b(ob.begin(), ob.begin() + 14);
    expect_error(b, "old-format header truncated");
  }
  {
    testbuild::Writer w(false);
    w.bytes() = ob;
    w.put_at(12, 0x40000000, 4);
    expect_error(w.bytes(), "old-format entry table");
  }
  {
    testbuild::Writer w(false);
    w.bytes() = ob;
    w.put_at(16 + 12 + 8, 0xfffffff0, 4);
    expect_error(w.bytes(), "entry 1 value string offset");
  }
  {
    auto r = parse_ld_cache(view(ob), "/sysroot/etc/ld.so.cache");
    ASSERT_TRUE(r.has_value());
    std::vector<uint8_t> b(ob.begin(), ob.begin() + 14);
    r = parse_ld_cache(view(b), "/sysroot/etc/ld.so.cache");
    ASSERT_FALSE(r.has_value());
    EXPECT_THAT(r.error().message, StartsWith("/sysroot/etc/ld.so.cache: "));
  }
}

TEST(LdCache, SharedLongStringsCannotBlowUpMemory) {
  // 20000 entries that all point at the same 4000-byte key and value would
  // expand to 160 MB of strings from a 0.5 MB file: rejected.
  constexpr uint32_t kEntries = 20000;
  testbuild::Writer w(false);
  w.str("glibc-ld.so.cache1.1");
  w.u32(kEntries);
  w.u32(4001);
  w.u8(2), w.u8(0), w.u8(0), w.u8(0);
  w.u32(0), w.u32(0), w.u32(0), w.u32(0);
  const uint32_t str = 48 + 24 * kEntries;
  for (uint32_t i = 0; i < kEntries; ++i) {
    w.u32(0x0303), w.u32(str), w.u32(str), w.u32(0), w.u64(0);
  }
  w.str(std::string(4000, 'a'));
  w.u8(0);
  auto r = parse_ld_cache(view(w.bytes()));
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("entry strings exceed"));
}

TEST(LdCache, EveryTruncationNeverCrashes) {
  for (auto fmt : {CacheFormat::kOld, CacheFormat::kNew, CacheFormat::kCombined}) {
    const auto b = build_ld_cache(sample_entries(), fmt);
    for (size_t n = 0; n < b.size(); ++n) {
      std::vector<uint8_t> t(b.begin(), b.begin() + n);
      auto r = parse_ld_cache(view(t));
      // A cut file is never silently accepted with all entries.
      if (r && *r) {
        EXPECT_LT((*r)->entries.size(), 5u) << n;
      }
    }
  }
}

// The real system cache versus ldconfig -p: ldcache_posix_test.cc.

}  // namespace
}  // namespace dlenv
