// Replays tests/fuzz/corpus/tar_listing (GNU tar and bsdtar `-tvf` listings of cuDNN-like
// archives) through the libFuzzer target's entry function with mutations
// (util/fuzz_replay_test_support.h); each well-formed seed (gnu-* / bsd-*) parses in its
// flavour.
#include <gtest/gtest.h>

#include "actions/tar_listing_fuzz_entries.h"
#include "util/fuzz_replay_test_support.h"

namespace dlenv {
namespace {

TEST(FuzzReplay, TarListingCorpus) {
  testing::replay_corpus("tar_listing", fuzz::tar_listing_one_input);
  for (const auto& f : testing::fuzz_seeds("tar_listing")) {
    const std::string name = f.filename().string();
    if (!name.starts_with("gnu-") && !name.starts_with("bsd-")) continue;
    auto b = testing::read_seed(f);
    auto entries =
        parse_tar_listing(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()),
                          name.starts_with("gnu-") ? TarFlavor::gnu : TarFlavor::bsd);
    ASSERT_TRUE(entries.has_value()) << name << ": " << entries.error().message;
    EXPECT_FALSE(entries->empty()) << name;
  }
}

}  // namespace
}  // namespace dlenv
