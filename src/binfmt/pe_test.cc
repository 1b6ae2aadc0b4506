#include "binfmt/pe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "binfmt/pe_test_builder.h"

namespace dlenv {
namespace {

using testbuild::build_pe;
using testbuild::PeSpec;
using ::testing::ElementsAre;

PeSpec cudnn_like(bool is64) {
  PeSpec s;
  s.is64 = is64;
  s.machine = is64 ? 0x8664 : 0x14c;
  s.imports = {{"KERNEL32.dll", {"LoadLibraryExW", "GetProcAddress"}},
               {"cublasLt64_12.dll", {"cublasLtCreate", "#7"}}};
  s.delay_imports = {{"nvcuda.dll", {"cuInit"}}};
  s.export_name = "cudnn64_9.dll";
  s.exports = {{"cudnnGetVersion", ""}, {"cudnnCreate", ""}, {"cudnnFwd", "cudnn_ops64_9.Fwd"}};
  s.version_resource = true;
  s.file_version[0] = 9;
  s.file_version[1] = 1;
  s.file_version[2] = 0;
  s.file_version[3] = 70;
  return s;
}

Result<std::optional<PeInfo>> parse(const std::vector<uint8_t>& b) {
  return parse_pe(ByteView(b.data(), b.size()), "cudnn64_9.dll");
}

class PeBitness : public ::testing::TestWithParam<bool> {};

TEST_P(PeBitness, ReadsEverything) {
  const auto img = build_pe(cudnn_like(GetParam()));
  auto r = parse(img.bytes);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_TRUE(r->has_value());
  const PeInfo& i = **r;
  EXPECT_EQ(i.is_64, GetParam());
  EXPECT_EQ(pe_machine_name(i.machine), GetParam() ? "x64" : "x86");
  EXPECT_TRUE(i.is_dll);
  ASSERT_EQ(i.imports.size(), 2u);
  EXPECT_EQ(i.imports[0].dll, "KERNEL32.dll");
  EXPECT_THAT(i.imports[0].functions, ElementsAre("LoadLibraryExW", "GetProcAddress"));
  EXPECT_EQ(i.imports[1].dll, "cublasLt64_12.dll");
  EXPECT_THAT(i.imports[1].functions, ElementsAre("cublasLtCreate", "#7"));
  ASSERT_EQ(i.delay_imports.size(), 1u);
  EXPECT_EQ(i.delay_imports[0].dll, "nvcuda.dll");
  EXPECT_THAT(i.delay_imports[0].functions, ElementsAre("cuInit"));
  EXPECT_EQ(i.export_name, "cudnn64_9.dll");
  ASSERT_EQ(i.exports.size(), 3u);
  EXPECT_EQ(i.exports[0].name, "cudnnGetVersion");
  EXPECT_EQ(i.exports[0].ordinal, 1u);
  EXPECT_FALSE(i.exports[0].forwarder.has_value());
  EXPECT_EQ(i.exports[2].forwarder, "cudnn_ops64_9.Fwd");
  EXPECT_EQ(i.file_version, "9.1.0.70");
  EXPECT_EQ(i.product_version, "9.1.0.70");
}

TEST_P(PeBitness, EveryTruncationIsErrorOrValueNeverCrash) {
  const auto img = build_pe(cudnn_like(GetParam()));
  size_t errors = 0;
  for (size_t n = 0; n < img.bytes.size(); ++n) {
    std::vector<uint8_t> cut(img.bytes.begin(), img.bytes.begin() + static_cast<ptrdiff_t>(n));
    auto r = parse(cut);
    if (!r) {
      ++errors;
      EXPECT_THAT(r.error().message, ::testing::StartsWith("cudnn64_9.dll: "));
    }
  }
  // Past the DOS header every cut that loses a table is reported as corrupt.
  EXPECT_GT(errors, img.bytes.size() / 2);
}

INSTANTIATE_TEST_SUITE_P(All, PeBitness, ::testing::Values(true, false),
                         [](const auto& p) { return p.param ? "PE32plus" : "PE32"; });

TEST(Pe, NotPeIsNullopt) {
  for (std::string s : {std::string(), std::string("M"),
                        std::string("\x7f"
                                    "ELF....",
                                    8),
                        std::string("hello world, not a dll")}) {
    auto r = parse_pe(ByteView(s), "x");
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_FALSE(r->has_value());
  }
  // An MZ program whose e_lfanew leads to "NE" is a 16-bit program: not PE.
  auto img = build_pe(PeSpec{});
  img.bytes[0x81] = 'E';
  img.bytes[0x80] = 'N';
  auto r = parse(img.bytes);
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->has_value());
}

TEST(Pe, CorruptStructuresGiveNamedErrors) {
  const auto good = build_pe(cudnn_like(true)).bytes;
  struct Case {
    const char* what;
    size_t offset;
    std::vector<uint8_t> bytes;
  };
  const size_t coff = 0x84, opt = coff + 20;
  const std::vector<Case> cases = {
      {"optional header magic", opt, {0x99, 0x01}},
      {"too many sections", coff + 2, {0xff, 0x00}},
      {"import directory", opt + 108 + 4 + 8, {0x00, 0x00, 0x7f, 0x00}},  // import RVA far away
      {"export directory claims", 0, {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    auto b = good;
    if (c.bytes.empty()) {
      // Export NumberOfFunctions = 0x7fffffff.
      auto ok = parse(b);
      ASSERT_TRUE(ok && *ok);
      // Locate the export directory RVA in the data directory table.
      uint32_t rva;
      std::memcpy(&rva, &b[opt + 112], 4);
      const size_t off = rva - 0x1000 + 0x200;
      const uint32_t big = 0x7fffffff;
      std::memcpy(&b[off + 20], &big, 4);
    } else {
      std::copy(c.bytes.begin(), c.bytes.end(), b.begin() + static_cast<ptrdiff_t>(c.offset));
    }
    auto r = parse(b);
    ASSERT_FALSE(r.has_value()) << c.what;
    EXPECT_THAT(r.error().message, ::testing::HasSubstr(c.what));
    EXPECT_THAT(r.error().message, ::testing::StartsWith("cudnn64_9.dll: "));
  }
}

// Names are capped in total (2^20), not only per table: 41 import descriptors
// that all share one 32767-entry name table list 1.3 million names.
TEST(Pe, ImportNamesAreCappedInTotal) {
  PeSpec s;
  s.imports.push_back({"big.dll", std::vector<std::string>(32767, "f")});
  for (int i = 0; i < 40; ++i) s.imports.push_back({"d" + std::to_string(i) + ".dll", {"g"}});
  auto b = build_pe(s).bytes;
  auto ok = parse(b);
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  ASSERT_EQ((*ok)->imports.size(), 41u);
  EXPECT_EQ((*ok)->imports[0].functions.size(), 32767u);
  // Point every descriptor's OriginalFirstThunk at big.dll's name table.
  const size_t opt = 0x84 + 20;
  uint32_t rva;
  std::memcpy(&rva, &b[opt + 120], 4);  // data directory 1: imports
  const size_t dir = rva - 0x1000 + 0x200;
  uint32_t big_int;
  std::memcpy(&big_int, &b[dir], 4);
  for (size_t i = 1; i <= 40; ++i) std::memcpy(&b[dir + 20 * i], &big_int, 4);
  auto r = parse(b);
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, ::testing::HasSubstr("imports and exports hold more than"));
}

// The mingw-built seeds real-mingw{64,32}.dll (tests/fuzz/README.md says how):
// a forwarded export, an ordinal-only export, imports and a VERSIONINFO.
TEST(Pe, RealMingwSeeds) {
  const auto dir = std::filesystem::path(DLENV_SOURCE_DIR) / "tests" / "fuzz" / "corpus" / "pe";
  for (const char* name : {"real-mingw64.dll", "real-mingw32.dll"}) {
    SCOPED_TRACE(name);
    std::ifstream in(dir / name, std::ios::binary);
    const std::vector<uint8_t> b((std::istreambuf_iterator<char>(in)),
                                 std::istreambuf_iterator<char>());
    ASSERT_FALSE(b.empty());
    auto r = parse(b);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    const PeInfo& i = **r;
    const bool is64 = std::string(name) == "real-mingw64.dll";
    EXPECT_EQ(i.is_64, is64);
    EXPECT_EQ(pe_machine_name(i.machine), is64 ? "x64" : "x86");
    EXPECT_TRUE(i.is_dll);
    EXPECT_EQ(i.export_name, "realpe.dll");
    EXPECT_EQ(i.file_version, "9.1.0.70");
    EXPECT_EQ(i.product_version, "9.1.0.0");
    bool kernel32 = false;
    for (const auto& imp : i.imports) {
      if (imp.dll == "KERNEL32.dll") {
        kernel32 = true;
        EXPECT_THAT(imp.functions, ::testing::Contains("GetTickCount"));
      }
    }
    EXPECT_TRUE(kernel32);
    bool fwd = false, ordinal_only = false, add = false;
    for (const auto& e : i.exports) {
      if (e.name == "dlenv_fwd") fwd = e.forwarder == "KERNEL32.GetTickCount";
      if (e.name.empty() && e.ordinal == 7) ordinal_only = !e.forwarder.has_value();
      if (e.name == "dlenv_add") add = !e.forwarder.has_value();
    }
    EXPECT_TRUE(fwd);
    EXPECT_TRUE(ordinal_only);
    EXPECT_TRUE(add);
  }
}

TEST(Pe, NoVersionResourceNoVersion) {
  PeSpec s = cudnn_like(true);
  s.version_resource = false;
  auto r = parse(build_pe(s).bytes);
  ASSERT_TRUE(r && *r);
  EXPECT_FALSE((*r)->file_version.has_value());
}

// Real DLLs from mingw, when the cross compiler is installed.
TEST(PeOnDisk, MingwBuiltDlls) {
  if (std::system("x86_64-w64-mingw32-gcc --version >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "x86_64-w64-mingw32-gcc not installed";
  }
  const char* env = std::getenv("DLENV_TEST_TMP");
  const auto dir = std::filesystem::path(env ? env : "/tmp") / "pe-mingw";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "a.c") << "__declspec(dllexport) int a_fn(void) { return 1; }\n";
  std::ofstream(dir / "b.c") << "__declspec(dllimport) int a_fn(void);\n"
                                "__declspec(dllexport) int b_fn(void) { return a_fn(); }\n";
  const std::string d = dir.string();
  ASSERT_EQ(
      std::system(("x86_64-w64-mingw32-gcc -shared -o " + d + "/a.dll " + d + "/a.c").c_str()), 0);
  ASSERT_EQ(std::system(
                ("x86_64-w64-mingw32-gcc -shared -o " + d + "/b.dll " + d + "/b.c " + d + "/a.dll")
                    .c_str()),
            0);
  std::ifstream in(dir / "b.dll", std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  auto r = parse_pe(ByteView(bytes.data(), bytes.size()), "b.dll");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_TRUE(r->has_value());
  EXPECT_TRUE((*r)->is_64);
  bool imports_a = false;
  for (const auto& i : (*r)->imports) imports_a |= i.dll == "a.dll";
  EXPECT_TRUE(imports_a);
  bool exports_b = false;
  for (const auto& e : (*r)->exports) exports_b |= e.name == "b_fn";
  EXPECT_TRUE(exports_b);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace dlenv
