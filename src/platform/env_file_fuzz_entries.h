// Fuzz entry point of the --env-file parser (platform/env.h), shared by the libFuzzer target
// env_file_fuzz.cc and the corpus replay env_file_fuzz_replay_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "platform/env.h"
#include "util/fuzz_touch.h"

namespace dlenv::fuzz {

inline uint64_t env_file_one_input(const uint8_t* data, size_t size) {
  auto vars = parse_env_file(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  if (!vars) return touch(vars.error().message);
  uint64_t sink = vars->size();
  for (const auto& [k, v] : *vars) sink += touch(k) + touch(v);
  return sink;
}

}  // namespace dlenv::fuzz
