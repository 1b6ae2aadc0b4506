// What every fuzz entry function (binfmt/fuzz_entries.h, probe/text_formats_fuzz_entries.h,
// platform/env_file_fuzz_entries.h, actions/tar_listing_fuzz_entries.h) does with a parse
// result: reads every byte of it, so that the sanitizers see every read.
#pragma once

#include <cstdint>
#include <string>

namespace dlenv::fuzz {

inline uint64_t touch(const std::string& s) {
  uint64_t h = s.size();
  for (char c : s) h = h * 131 + static_cast<unsigned char>(c);
  return h;
}

}  // namespace dlenv::fuzz
