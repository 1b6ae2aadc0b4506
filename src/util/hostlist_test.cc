#include "util/hostlist.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

namespace dlenv {
namespace {

std::vector<std::string> numbered(const std::string& prefix, int first, int last, int width) {
  std::vector<std::string> out;
  for (int i = first; i <= last; ++i) {
    std::string n = std::to_string(i);
    if (static_cast<int>(n.size()) < width) n.insert(0, width - n.size(), '0');
    out.push_back(prefix + n);
  }
  return out;
}

TEST(Hostlist, CompressesRangesOfZeroPaddedNames) {
  auto names = numbered("gpu", 1, 17, 3);
  names.push_back("gpu020");
  EXPECT_EQ(compress_hostlist(names), "gpu[001-017,020]");
}

TEST(Hostlist, SingleNamesAndOrderDoNotMatter) {
  EXPECT_EQ(compress_hostlist({"gpu007"}), "gpu007");
  EXPECT_EQ(compress_hostlist({"gpu003", "gpu001", "gpu002", "gpu001"}), "gpu[001-003]");
  EXPECT_EQ(compress_hostlist({}), "");
}

TEST(Hostlist, KeepsPrefixesSuffixesAndPlainNamesApart) {
  EXPECT_EQ(compress_hostlist({"login", "gpu2", "cpu1", "gpu1", "cpu2", "gpu4"}),
            "cpu[1-2],gpu[1-2,4],login");
  EXPECT_EQ(compress_hostlist({"rack1-n01.ib", "rack1-n02.ib", "rack1-n02"}),
            "rack1-n02,rack1-n[01-02].ib");
}

TEST(Hostlist, PaddingDecidesWhichNumbersJoin) {
  EXPECT_EQ(compress_hostlist({"n9", "n10", "n11"}), "n[9-11]");
  EXPECT_EQ(compress_hostlist({"n09", "n10", "n11"}), "n[09-11]");
  // "n1" and "n01" are different nodes: both stay.
  EXPECT_EQ(compress_hostlist({"n01", "n1", "n02"}), "n1,n[01-02]");
  EXPECT_EQ(compress_hostlist({"gpu099", "gpu100", "gpu101"}), "gpu[099-101]");
}

TEST(Hostlist, HugeNumbersStayLiteral) {
  std::string big = "n1234567890123456789012";
  EXPECT_EQ(compress_hostlist({big}), big);
}

TEST(Hostlist, ExpandsWhatSlurmWrites) {
  auto names = expand_hostlist("gpu[001-003,020],login1");
  ASSERT_TRUE(names);
  EXPECT_EQ(*names, (std::vector<std::string>{"gpu001", "gpu002", "gpu003", "gpu020", "login1"}));
  EXPECT_EQ(*expand_hostlist("n[9-10].ib"), (std::vector<std::string>{"n9.ib", "n10.ib"}));
  EXPECT_FALSE(expand_hostlist("gpu[3-1]"));
  EXPECT_FALSE(expand_hostlist("gpu[1-3"));
  EXPECT_FALSE(expand_hostlist("gpu1-3]"));
  EXPECT_FALSE(expand_hostlist("gpu[a-b]"));
  EXPECT_FALSE(expand_hostlist("gpu[1-1000000]", 1000));
}

// Compressing then expanding gives back the set of names, for random fleets.
TEST(Hostlist, RoundTripsRandomFleets) {
  std::mt19937 rng(7);
  const std::vector<std::string> prefixes{"gpu", "node-", "a100-", "x"};
  for (int round = 0; round < 200; ++round) {
    std::set<std::string> want;
    int count = 1 + static_cast<int>(rng() % 60);
    for (int i = 0; i < count; ++i) {
      const std::string& p = prefixes[rng() % prefixes.size()];
      int width = 1 + static_cast<int>(rng() % 4);
      std::string n = std::to_string(rng() % 1200);
      if (static_cast<int>(n.size()) < width) n.insert(0, width - n.size(), '0');
      want.insert(p + n + ((rng() % 5) == 0 ? ".ib" : ""));
    }
    std::vector<std::string> in(want.begin(), want.end());
    std::shuffle(in.begin(), in.end(), rng);
    std::string expr = compress_hostlist(in);
    auto back = expand_hostlist(expr);
    ASSERT_TRUE(back) << expr;
    EXPECT_EQ(std::set<std::string>(back->begin(), back->end()), want) << expr;
    EXPECT_EQ(back->size(), want.size()) << expr;
  }
}

}  // namespace
}  // namespace dlenv
