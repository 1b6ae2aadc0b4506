// Replays the fuzz seed corpus (tests/fuzz/corpus/{elf,ldcache,pe}) through the
// same entry functions as the libFuzzer targets, plus deterministic mutations
// (util/fuzz_replay_test_support.h). Must never crash or hang; CI runs it under
// ASan+UBSan.
//
// DISABLED_WriteSyntheticSeeds regenerates the synthetic seeds:
//   binfmt_test --gtest_also_run_disabled_tests --gtest_filter='*WriteSyntheticSeeds'
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "binfmt/fuzz_entries.h"
#include "binfmt/pe_test_builder.h"
#include "binfmt/test_builders.h"
#include "util/fuzz_replay_test_support.h"

namespace dlenv {
namespace {

namespace fs = std::filesystem;

using Entry = testing::FuzzEntry;

fs::path corpus_dir(const std::string& kind) {
  return testing::fuzz_corpus_dir(kind);
}

std::vector<uint8_t> read_file(const fs::path& p) {
  return testing::read_seed(p);
}

std::vector<fs::path> seeds(const std::string& kind) {
  return testing::fuzz_seeds(kind);
}

size_t replay(Entry entry, const std::vector<uint8_t>& input) {
  return testing::replay_with_mutations(entry, input);
}

// Seeds that must parse to a value: not the corrupted copies (bad-*, trunc-*)
// nor the inputs a libFuzzer run grew (fuzz-*: kept for the paths they reach).
bool must_parse(const std::string& name) {
  return !name.starts_with("bad-") && !name.starts_with("trunc-") && !name.starts_with("fuzz-");
}

void replay_kind(const std::string& kind, Entry own, Entry other) {
  const auto files = seeds(kind);
  ASSERT_GE(files.size(), 3u) << "seed corpus missing in " << corpus_dir(kind);
  size_t runs = 0;
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    const auto input = read_file(f);
    runs += replay(own, input);
    runs += replay(other, input);  // cross-feeding costs little and finds more
  }
  ::testing::Test::RecordProperty("inputs", std::to_string(runs));
}

TEST(FuzzReplay, ElfCorpus) {
  replay_kind("elf", fuzz::elf_one_input, fuzz::ldcache_one_input);
}

TEST(FuzzReplay, LdCacheCorpus) {
  replay_kind("ldcache", fuzz::ldcache_one_input, fuzz::elf_one_input);
}

TEST(FuzzReplay, PeCorpus) {
  replay_kind("pe", fuzz::pe_one_input, fuzz::elf_one_input);
}

TEST(FuzzReplay, PeCorpusSeedsParse) {
  for (const auto& f : seeds("pe")) {
    const std::string name = f.filename().string();
    if (!must_parse(name)) continue;
    const auto b = read_file(f);
    auto r = parse_pe(ByteView(b.data(), b.size()), name);
    ASSERT_TRUE(r.has_value()) << name << ": " << r.error().message;
    EXPECT_TRUE(r->has_value()) << name;
  }
}

TEST(FuzzReplay, CorpusSeedsParse) {
  // The well-formed seeds (see must_parse) must parse to a value.
  for (const auto& f : seeds("elf")) {
    const std::string name = f.filename().string();
    if (!must_parse(name)) continue;
    const auto b = read_file(f);
    auto r = parse_elf(ByteView(b.data(), b.size()), name);
    ASSERT_TRUE(r.has_value()) << name << ": " << r.error().message;
    EXPECT_TRUE(r->has_value()) << name;
  }
  for (const auto& f : seeds("ldcache")) {
    const std::string name = f.filename().string();
    if (!must_parse(name)) continue;
    const auto b = read_file(f);
    auto r = parse_ld_cache(ByteView(b.data(), b.size()), name);
    ASSERT_TRUE(r.has_value()) << name << ": " << r.error().message;
    ASSERT_TRUE(r->has_value()) << name;
    EXPECT_FALSE((*r)->entries.empty()) << name;
  }
}

void write(const fs::path& p, const std::vector<uint8_t>& b) {
  std::ofstream(p, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

TEST(FuzzReplay, DISABLED_WriteSyntheticSeeds) {
  using namespace testbuild;
  const fs::path elf = corpus_dir("elf"), cache = corpus_dir("ldcache");
  fs::create_directories(elf);
  fs::create_directories(cache);
  for (bool is64 : {true, false}) {
    for (bool big : {false, true}) {
      ElfSpec s;
      s.is64 = is64;
      s.big = big;
      s.machine = is64 ? (big ? 22 : 62) : (big ? 20 : 3);
      s.needed = {"libc.so.6", "libcudnn_graph.so.9"};
      s.soname = "libsyn.so.1";
      s.rpath = "/opt/r";
      s.runpath = "$ORIGIN:/opt/syn";
      s.rodata = std::string("x\0libcublasLt.so.13\0", 20);
      s.symbols = {testbuild::elf_sym("cudnnGetVersion", true, false, true, "libsyn.so.1"),
                   testbuild::elf_sym("cudnnOld", true, false, true, "SYN_1", true),
                   testbuild::elf_sym("malloc", false, false, true, "GLIBC_2.2.5"),
                   testbuild::elf_sym("__gmon_start__", false, true, false)};
      s.version_needs = {{"libc.so.6", {"GLIBC_2.2.5", "GLIBC_2.34"}}};
      s.version_defs = {"libsyn.so.1", "SYN_1"};
      const std::string n = std::string("syn-") + (is64 ? "64" : "32") + (big ? "be" : "le");
      auto img = build_elf(s);
      write(elf / (n + ".so"), img.bytes);
      if (is64 && !big) {
        write(elf / "trunc-syn-64le-phdrs.so",
              std::vector<uint8_t>(img.bytes.begin(), img.bytes.begin() + 100));
        write(elf / "trunc-syn-64le-dynamic.so",
              std::vector<uint8_t>(img.bytes.begin(),
                                   img.bytes.begin() + static_cast<ptrdiff_t>(img.dynoff + 20)));
        auto bad = img.bytes;
        bad[56] = 0xff;  // e_phnum = 0x00ff
        write(elf / "bad-phnum.so", bad);
      }
    }
  }
  {
    ElfSpec s;
    s.program_headers = false;
    s.needed = {"libz.so.1"};
    write(elf / "syn-64le-sections-only.so", build_elf(s).bytes);
    s.program_headers = true;
    s.strtab_mapped = false;
    write(elf / "syn-64le-strtab-unmapped.so", build_elf(s).bytes);
  }
  {
    const fs::path pe = corpus_dir("pe");
    fs::create_directories(pe);
    for (bool is64 : {true, false}) {
      PeSpec s;
      s.is64 = is64;
      s.machine = is64 ? 0x8664 : 0x14c;
      s.imports = {{"KERNEL32.dll", {"LoadLibraryExW", "#12"}},
                   {"cublasLt64_12.dll", {"cublasLtCreate"}}};
      s.delay_imports = {{"nvcuda.dll", {"cuInit"}}};
      s.export_name = "cudnn64_9.dll";
      s.exports = {{"cudnnGetVersion", ""}, {"cudnnFwd", "cudnn_ops64_9.Fwd"}};
      s.version_resource = true;
      s.file_version[0] = 9;
      s.file_version[3] = 70;
      const auto img = build_pe(s).bytes;
      const std::string n = is64 ? "syn-pe32plus.dll" : "syn-pe32.dll";
      write(pe / n, img);
      if (is64) {
        write(pe / "trunc-syn-pe32plus.dll",
              std::vector<uint8_t>(img.begin(), img.begin() + 0x300));
        auto bad = img;
        bad[0x86] = 0xff;  // NumberOfSections
        write(pe / "bad-nsections.dll", bad);
      }
    }
  }
  const std::vector<CacheEntrySpec> entries = {
      {0x0303, "libcudnn.so.9", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9", 0},
      {0x0003, "libc.so.6", "/lib32/libc.so.6", 0},
      {0x0303, "libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6", (uint64_t{1} << 62)},
  };
  const auto nw = build_ld_cache(entries, CacheFormat::kNew);
  write(cache / "new.cache", nw);
  write(cache / "new-be.cache", build_ld_cache(entries, CacheFormat::kNew, true));
  write(cache / "old.cache", build_ld_cache(entries, CacheFormat::kOld));
  const auto comb = build_ld_cache(entries, CacheFormat::kCombined);
  write(cache / "old+new.cache", comb);
  write(cache / "trunc-new.cache", std::vector<uint8_t>(nw.begin(), nw.begin() + 60));
  write(cache / "trunc-combined.cache", std::vector<uint8_t>(comb.begin(), comb.end() - 40));
  auto bad = nw;
  bad[20] = 0xff, bad[21] = 0xff;  // nlibs
  write(cache / "bad-nlibs.cache", bad);
}

}  // namespace
}  // namespace dlenv
