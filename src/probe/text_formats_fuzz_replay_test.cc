// Replays tests/fuzz/corpus/{cudnn_header,version_json,dist_metadata} through the libFuzzer
// targets' entry functions with mutations (util/fuzz_replay_test_support.h), and checks
// that the well-formed seeds (those not named fuzz-*) parse to a value.
#include <gtest/gtest.h>

#include "probe/text_formats_fuzz_entries.h"
#include "util/fuzz_replay_test_support.h"

namespace dlenv {
namespace {

using testing::fuzz_seeds;
using testing::read_seed;

std::string text_of(const std::filesystem::path& p) {
  auto b = read_seed(p);
  return std::string(b.begin(), b.end());
}

bool well_formed(const std::filesystem::path& p) {
  return !p.filename().string().starts_with("fuzz-");
}

TEST(FuzzReplay, CudnnHeaderCorpus) {
  testing::replay_corpus("cudnn_header", fuzz::cudnn_header_one_input);
  for (const auto& f : fuzz_seeds("cudnn_header")) {
    if (well_formed(f)) {
      EXPECT_TRUE(cudnn_header_version(text_of(f))) << f;
    }
  }
}

TEST(FuzzReplay, VersionJsonCorpus) {
  testing::replay_corpus("version_json", fuzz::version_json_one_input);
  for (const auto& f : fuzz_seeds("version_json")) {
    if (well_formed(f)) {
      EXPECT_TRUE(version_json_component(text_of(f), "cuda")) << f;
    }
  }
}

TEST(FuzzReplay, DistMetadataCorpus) {
  testing::replay_corpus("dist_metadata", fuzz::dist_metadata_one_input);
  for (const auto& f : fuzz_seeds("dist_metadata")) {
    if (well_formed(f)) {
      EXPECT_TRUE(parse_dist_metadata(text_of(f)).version) << f;
    }
  }
}

TEST(TextFormats, CudnnHeaderAndVersionJson) {
  EXPECT_EQ(cudnn_header_version("#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 19\n"
                                 "#define CUDNN_PATCHLEVEL 1\n")
                ->str(),
            "9.19.1");
  EXPECT_FALSE(cudnn_header_version("#define CUDNN_MAJOR 9\n"));
  EXPECT_FALSE(cudnn_header_version("// CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n"));
  EXPECT_EQ(version_json_component(R"({"cuda": {"version": "13.0.2"}})", "cuda"), "13.0.2");
  EXPECT_FALSE(version_json_component(R"({"cuda": {"name": "x"}, "y": {"version": "1"}})", "cuda"));
  EXPECT_FALSE(version_json_component(R"({"cuda": {"version")", "cuda"));
  auto m = parse_dist_metadata(
      "Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0\nRequires-Dist: nvidia-cudnn-cu13 "
      "==9.13.0.50\n\nRequires-Dist: not-a-header\n");
  EXPECT_EQ(m.name, "torch");
  EXPECT_EQ(m.version, "2.11.0");
  ASSERT_EQ(m.requires_dist.size(), 1u);
  EXPECT_EQ(m.requires_dist[0], "nvidia-cudnn-cu13 ==9.13.0.50");
}

}  // namespace
}  // namespace dlenv
