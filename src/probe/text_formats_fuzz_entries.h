// Fuzz entry points of the probes' text formats (probe/text_formats.h), shared by the
// libFuzzer targets (cudnn_header_fuzz.cc, version_json_fuzz.cc, dist_metadata_fuzz.cc) and
// the corpus replay (text_formats_fuzz_replay_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "probe/text_formats.h"
#include "util/fuzz_touch.h"

namespace dlenv::fuzz {

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

inline uint64_t cudnn_header_one_input(const uint8_t* data, size_t size) {
  auto v = cudnn_header_version(as_text(data, size));
  return v ? touch(v->str()) : 0;
}

inline uint64_t version_json_one_input(const uint8_t* data, size_t size) {
  uint64_t sink = 0;
  for (const char* key : {"cuda", "cuda_nvcc", "cuda_cudart", ""}) {
    if (auto v = version_json_component(as_text(data, size), key)) sink += touch(*v);
  }
  return sink;
}

inline uint64_t dist_metadata_one_input(const uint8_t* data, size_t size) {
  DistMetadata m = parse_dist_metadata(as_text(data, size));
  uint64_t sink = m.requires_dist.size();
  if (m.name) sink += touch(*m.name);
  if (m.version) sink += touch(*m.version);
  for (const auto& r : m.requires_dist) sink += touch(r);
  return sink;
}

}  // namespace dlenv::fuzz
