// The fuzz corpus replay shared by every layer's replay test (binfmt/fuzz_replay_test.cc,
// probe/text_formats_fuzz_replay_test.cc, platform/env_file_fuzz_replay_test.cc,
// actions/tar_listing_fuzz_replay_test.cc): each seed of tests/fuzz/corpus/<kind>/ through
// the libFuzzer target's own entry function, plus deterministic mutations: every truncation
// up to 512 bytes and single-byte flips at 256 pseudo-random positions (fixed seed). Must
// never crash or hang; CI runs it under ASan+UBSan.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace dlenv::testing {

using FuzzEntry = uint64_t (*)(const uint8_t*, size_t);

inline std::filesystem::path fuzz_corpus_dir(const std::string& kind) {
  return std::filesystem::path(DLENV_SOURCE_DIR) / "tests" / "fuzz" / "corpus" / kind;
}

inline std::vector<uint8_t> read_seed(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

inline std::vector<std::filesystem::path> fuzz_seeds(const std::string& kind) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(fuzz_corpus_dir(kind), ec)) {
    if (e.is_regular_file()) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Runs `entry` on the input and on its mutations; returns how many inputs ran.
inline size_t replay_with_mutations(FuzzEntry entry, const std::vector<uint8_t>& input) {
  size_t runs = 0;
  volatile uint64_t sink = 0;
  auto run = [&](const std::vector<uint8_t>& v) {
    // An exactly sized heap copy, so ASan catches any read past the end.
    std::unique_ptr<uint8_t[]> copy(new uint8_t[v.size()]);
    std::copy(v.begin(), v.end(), copy.get());
    sink = sink + entry(copy.get(), v.size());
    ++runs;
  };
  run(input);
  const size_t max_len = std::min<size_t>(input.size(), 512);
  for (size_t n = 0; n <= max_len; ++n) {
    run(std::vector<uint8_t>(input.begin(), input.begin() + static_cast<ptrdiff_t>(n)));
  }
  if (!input.empty()) {
    std::mt19937 rng(0x5eed1234u);
    std::vector<uint8_t> flipped = input;
    for (int i = 0; i < 256; ++i) {
      const size_t pos = rng() % input.size();
      const auto mask = static_cast<uint8_t>(1u << (rng() % 8));
      std::vector<uint8_t> one = input;
      one[pos] ^= mask;
      run(one);
      flipped[pos] = static_cast<uint8_t>(rng());  // accumulating mutation
      if (i % 32 == 31) run(flipped);
    }
  }
  return runs;
}

// Replays every seed of `kind` through `entry`; fails when the corpus has fewer than
// `min_seeds` files (a missing corpus must not pass silently).
inline void replay_corpus(const std::string& kind, FuzzEntry entry, size_t min_seeds = 3) {
  const auto files = fuzz_seeds(kind);
  ASSERT_GE(files.size(), min_seeds) << "seed corpus missing in " << fuzz_corpus_dir(kind);
  size_t runs = 0;
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    runs += replay_with_mutations(entry, read_seed(f));
  }
  ::testing::Test::RecordProperty("inputs", std::to_string(runs));
}

}  // namespace dlenv::testing
