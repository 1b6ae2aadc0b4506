// Replays tests/fuzz/corpus/env_file through the libFuzzer target's entry function with
// mutations (util/fuzz_replay_test_support.h); the well-formed seeds (not fuzz-*, bad-*)
// must parse.
#include <gtest/gtest.h>

#include "platform/env_file_fuzz_entries.h"
#include "util/fuzz_replay_test_support.h"

namespace dlenv {
namespace {

TEST(FuzzReplay, EnvFileCorpus) {
  testing::replay_corpus("env_file", fuzz::env_file_one_input);
  for (const auto& f : testing::fuzz_seeds("env_file")) {
    const std::string name = f.filename().string();
    if (name.starts_with("fuzz-") || name.starts_with("bad-")) continue;
    auto b = testing::read_seed(f);
    auto vars =
        parse_env_file(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()), name);
    EXPECT_TRUE(vars.has_value()) << name << ": " << vars.error().message;
  }
}

}  // namespace
}  // namespace dlenv
