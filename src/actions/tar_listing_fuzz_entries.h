// Fuzz entry point of the cuDNN archive listing parser (`tar -tvf` output, GNU and bsdtar:
// actions/cudnn_source.h), shared by the libFuzzer target tar_listing_fuzz.cc and the corpus
// replay tar_listing_fuzz_replay_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "actions/cudnn_source.h"
#include "util/fuzz_touch.h"

namespace dlenv::fuzz {

inline uint64_t tar_listing_one_input(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  uint64_t sink = 0;
  for (TarFlavor flavor : {TarFlavor::gnu, TarFlavor::bsd}) {
    auto entries = parse_tar_listing(text, flavor);
    if (!entries) {
      sink += touch(entries.error().message);
      continue;
    }
    for (const auto& e : *entries) {
      sink += touch(e.path) + touch(e.raw_path) + touch(e.link_target) + e.size + e.mode +
              static_cast<uint64_t>(e.type);
    }
  }
  return sink;
}

}  // namespace dlenv::fuzz
