// The small text formats the probes read from files of an untrusted tree: cuDNN's version
// header, the CUDA toolkit's version.json, a Python distribution's METADATA. Parsers
// only (no file access), each with a libFuzzer target (src/probe/text_formats_fuzz.cc) and
// its corpus replayed in every test run (text_formats_fuzz_replay_test.cc).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/version.h"

namespace dlenv {

// CUDNN_MAJOR / CUDNN_MINOR / CUDNN_PATCHLEVEL of cudnn_version.h (or an old cudnn.h):
// nullopt without a major and minor.
std::optional<Version> cudnn_header_version(std::string_view text);

// version.json: {"cuda": {"name": ..., "version": "12.4.1"}, "cuda_nvcc": {"version": ...}}:
// the "version" of component `key`, by a targeted scan (the probes use no JSON library).
std::optional<std::string> version_json_component(std::string_view text, std::string_view key);

// The header block of a METADATA / PKG-INFO file (up to its first empty line).
struct DistMetadata {
  std::optional<std::string> name;         // Name:, as written
  std::optional<std::string> version;      // Version:
  std::vector<std::string> requires_dist;  // every Requires-Dist:, trimmed
};
DistMetadata parse_dist_metadata(std::string_view text);

}  // namespace dlenv
