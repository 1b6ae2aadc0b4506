#include "binfmt/elf.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "binfmt/test_builders.h"

namespace dlenv {
namespace {

using testbuild::build_elf;
using testbuild::ElfSpec;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsSupersetOf;
using ::testing::StartsWith;

ByteView view(const std::vector<uint8_t>& v) {
  return ByteView(v.data(), v.size());
}

ElfSpec full_spec(bool is64, bool big) {
  ElfSpec s;
  s.is64 = is64;
  s.big = big;
  s.machine = is64 ? 62 : 3;
  s.needed = {"libc.so.6", "libm.so.6"};
  s.soname = "libfoo.so.1";
  s.rpath = "/opt/old";
  s.runpath = "$ORIGIN:/opt/foo/lib";
  s.rodata = std::string("junk\0libcublasLt.so.12\0", 23);
  return s;
}

void expect_full(const ElfInfo& i, bool is64, bool big) {
  EXPECT_EQ(i.is_64, is64);
  EXPECT_EQ(i.little_endian, !big);
  EXPECT_EQ(i.machine, is64 ? 62 : 3);
  EXPECT_EQ(i.type, 3);
  EXPECT_TRUE(i.has_dynamic);
  EXPECT_THAT(i.needed, ElementsAre("libc.so.6", "libm.so.6"));
  EXPECT_EQ(i.soname, "libfoo.so.1");
  EXPECT_EQ(i.rpath, "/opt/old");
  EXPECT_EQ(i.runpath, "$ORIGIN:/opt/foo/lib");
}

struct Variant {
  bool is64;
  bool big;
};

class ElfVariants : public ::testing::TestWithParam<Variant> {};

TEST_P(ElfVariants, ParsesIdentityAndDynamic) {
  const auto [is64, big] = GetParam();
  auto img = build_elf(full_spec(is64, big));
  auto r = parse_elf(view(img.bytes), "libfoo.so");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_TRUE(r->has_value());
  expect_full(**r, is64, big);
}

TEST_P(ElfVariants, FallsBackToSectionsWithoutProgramHeaders) {
  const auto [is64, big] = GetParam();
  auto spec = full_spec(is64, big);
  spec.program_headers = false;
  auto img = build_elf(spec);
  auto r = parse_elf(view(img.bytes), "libfoo.so");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_TRUE(r->has_value());
  expect_full(**r, is64, big);
}

TEST_P(ElfVariants, FallsBackToDynstrWhenStrtabUnmapped) {
  const auto [is64, big] = GetParam();
  auto spec = full_spec(is64, big);
  spec.strtab_mapped = false;
  auto img = build_elf(spec);
  auto r = parse_elf(view(img.bytes), "libfoo.so");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_TRUE(r->has_value());
  expect_full(**r, is64, big);

  spec.sections = false;  // now nothing can locate the string table
  img = build_elf(spec);
  r = parse_elf(view(img.bytes), "libfoo.so");
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, StartsWith("libfoo.so: "));
  EXPECT_THAT(r.error().message, HasSubstr("DT_STRTAB"));
}

TEST_P(ElfVariants, FindStringsInRodata) {
  const auto [is64, big] = GetParam();
  auto img = build_elf(full_spec(is64, big));
  EXPECT_THAT(elf_find_strings(view(img.bytes), "libcublasLt.so."),
              ElementsAre("libcublasLt.so.12"));
  // .dynstr is searched too, in file order (it precedes .rodata here). A prefix
  // inside a string counts from the prefix on: "/opt/foo/lib" yields "lib".
  EXPECT_THAT(elf_find_strings(view(img.bytes), "lib"),
              ElementsAre("libc.so.6", "libm.so.6", "libfoo.so.1", "lib", "libcublasLt.so.12"));
}

TEST_P(ElfVariants, EveryTruncationIsErrorOrValueNeverCrash) {
  const auto [is64, big] = GetParam();
  auto img = build_elf(full_spec(is64, big));
  for (size_t n = 0; n < img.bytes.size(); ++n) {
    std::vector<uint8_t> t(img.bytes.begin(), img.bytes.begin() + n);
    auto r = parse_elf(view(t), "t.so");
    if (n < 4) {
      ASSERT_TRUE(r.has_value()) << n;
      EXPECT_FALSE(r->has_value()) << n;
    } else if (n < img.dynoff + img.dynsize) {
      // Header, program headers or the dynamic segment are cut: always an error.
      ASSERT_FALSE(r.has_value()) << n;
      EXPECT_THAT(r.error().message, StartsWith("t.so: "));
    }
    (void)elf_find_strings(view(t), "lib");
  }
}

ElfSpec symbol_spec(bool is64, bool big) {
  ElfSpec s = full_spec(is64, big);
  s.symbols = {testbuild::elf_sym("cudnnGetVersion", true, false, true, "libcudnn.so.9"),
               testbuild::elf_sym("cudnnTable", true, false, false, "LIBFOO_OLD", true),
               testbuild::elf_sym("malloc", false, false, true, "GLIBC_2.34"),
               testbuild::elf_sym("__gmon_start__", false, true, false)};
  s.version_needs = {{"libc.so.6", {"GLIBC_2.2.5", "GLIBC_2.34"}}, {"libm.so.6", {"GLIBC_2.29"}}};
  s.version_defs = {"libfoo.so.1", "libcudnn.so.9", "LIBFOO_OLD"};
  return s;
}

void expect_symbols(const ElfInfo& i) {
  EXPECT_TRUE(i.symbols_read);
  ASSERT_EQ(i.dynamic_symbols.size(), 4u);
  const auto& d = i.dynamic_symbols;
  EXPECT_EQ(d[0].name, "cudnnGetVersion");
  EXPECT_TRUE(d[0].defined && d[0].function && !d[0].weak);
  EXPECT_EQ(d[1].name, "cudnnTable");
  EXPECT_TRUE(d[1].defined && !d[1].function);
  EXPECT_EQ(d[2].name, "malloc");
  EXPECT_FALSE(d[2].defined);
  EXPECT_EQ(d[3].name, "__gmon_start__");
  EXPECT_TRUE(!d[3].defined && d[3].weak);
  // DT_VERSYM: exports carry their definition, imports the need and its file.
  EXPECT_EQ(d[0].version, "libcudnn.so.9");
  EXPECT_EQ(d[0].version_file, "");
  EXPECT_FALSE(d[0].version_hidden);
  EXPECT_EQ(d[1].version, "LIBFOO_OLD");
  EXPECT_TRUE(d[1].version_hidden);
  EXPECT_EQ(d[2].version, "GLIBC_2.34");
  EXPECT_EQ(d[2].version_file, "libc.so.6");
  EXPECT_EQ(d[3].version, "");
  ASSERT_EQ(i.version_needs.size(), 2u);
  EXPECT_EQ(i.version_needs[0].file, "libc.so.6");
  EXPECT_THAT(i.version_needs[0].versions, ElementsAre("GLIBC_2.2.5", "GLIBC_2.34"));
  EXPECT_EQ(i.version_needs[1].file, "libm.so.6");
  EXPECT_THAT(i.version_needs[1].versions, ElementsAre("GLIBC_2.29"));
  EXPECT_THAT(i.version_defs, ElementsAre("libfoo.so.1", "libcudnn.so.9", "LIBFOO_OLD"));
}

// The symbol count from each source the reader knows: the .dynsym section,
// DT_HASH's nchain, DT_GNU_HASH's chains; in both classes and byte orders.
TEST_P(ElfVariants, SymbolsAndVersionsFromEveryCountSource) {
  const auto [is64, big] = GetParam();
  struct Source {
    const char* what;
    bool sections, sysv, gnu;
  };
  for (const Source& src :
       {Source{"section", true, true, true}, Source{"DT_HASH", false, true, false},
        Source{"DT_GNU_HASH", false, false, true}}) {
    SCOPED_TRACE(src.what);
    ElfSpec s = symbol_spec(is64, big);
    s.sections = src.sections;
    s.sysv_hash = src.sysv;
    s.gnu_hash = src.gnu;
    auto img = build_elf(s);
    auto r = parse_elf(view(img.bytes), "libfoo.so.1", ElfParseOptions{.symbols = true});
    ASSERT_TRUE(r.has_value()) << r.error().message;
    ASSERT_TRUE(r->has_value());
    expect_full(**r, is64, big);
    expect_symbols(**r);
    // Every truncation of the symbol-bearing image: a value or a named error.
    for (size_t n = 0; n < img.bytes.size(); ++n) {
      std::vector<uint8_t> t(img.bytes.begin(), img.bytes.begin() + static_cast<ptrdiff_t>(n));
      auto tr = parse_elf(view(t), "t.so", ElfParseOptions{.symbols = true});
      if (!tr) {
        EXPECT_THAT(tr.error().message, StartsWith("t.so: "));
      }
    }
  }
}

// A DT_VERSYM that does not cover every symbol, or lies outside the file, is a
// named error rather than a read past the table.
TEST_P(ElfVariants, BrokenVersymIsANamedError) {
  const auto [is64, big] = GetParam();
  const auto good = build_elf(symbol_spec(is64, big));
  const size_t ent = is64 ? 16 : 8, word = is64 ? 8 : 4;
  testbuild::Writer w(big);  // only for its byte-order-aware put_at
  auto read_word = [&](const std::vector<uint8_t>& b, size_t at) {
    uint64_t v = 0;
    for (size_t k = 0; k < word; ++k) {
      const size_t idx = big ? at + k : at + word - 1 - k;
      v = (v << 8) | b[idx];
    }
    return v;
  };
  size_t versym_val = 0;
  for (size_t at = good.dynoff; at + ent <= good.dynoff + good.dynsize; at += ent) {
    if (read_word(good.bytes, at) == 0x6ffffff0) versym_val = at + word;
  }
  ASSERT_NE(versym_val, 0u);
  struct Case {
    uint64_t addr;
    const char* what;
  };
  const uint64_t end = 0x400000 + good.bytes.size();
  for (const Case& c : {Case{end - 2, "DT_VERSYM table is shorter than the 5 dynamic symbols"},
                        Case{0x7fff0000, "DT_VERSYM table is outside the file"}}) {
    SCOPED_TRACE(c.what);
    w.bytes() = good.bytes;
    w.put_at(versym_val, c.addr, word);
    auto r = parse_elf(view(w.bytes()), "libfoo.so.1", ElfParseOptions{.symbols = true});
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().message, std::string("libfoo.so.1: ") + c.what);
  }
}

TEST_P(ElfVariants, SymbolCountUnknownIsAnError) {
  const auto [is64, big] = GetParam();
  ElfSpec s = symbol_spec(is64, big);
  s.sections = false;
  s.sysv_hash = false;
  s.gnu_hash = false;
  auto img = build_elf(s);
  auto r = parse_elf(view(img.bytes), "libfoo.so.1", ElfParseOptions{.symbols = true});
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("symbol count unknown"));
  // Without symbols the same file reads fine.
  auto plain = parse_elf(view(img.bytes), "libfoo.so.1");
  ASSERT_TRUE(plain.has_value() && plain->has_value());
}

// ElfSymbolTable finds the same exports and imports through DT_GNU_HASH, DT_HASH
// or, with neither, a linear index; every truncation is a value or a named error.
TEST_P(ElfVariants, SymbolTableLooksUpThroughEachHashTable) {
  const auto [is64, big] = GetParam();
  struct Source {
    const char* what;
    bool sections, sysv, gnu;
    const char* method;
  };
  for (const Source& src :
       {Source{"both", false, true, true, "gnu"}, Source{"DT_HASH", false, true, false, "sysv"},
        Source{"DT_GNU_HASH", false, false, true, "gnu"},
        Source{"section only", true, false, false, "none"}}) {
    SCOPED_TRACE(src.what);
    ElfSpec s = symbol_spec(is64, big);
    s.sections = src.sections;
    s.sysv_hash = src.sysv;
    s.gnu_hash = src.gnu;
    auto img = build_elf(s);
    auto t = ElfSymbolTable::read(view(img.bytes), "libfoo.so.1");
    ASSERT_TRUE(t.has_value()) << t.error().message;
    ASSERT_TRUE(t->has_value());
    const ElfSymbolTable& st = **t;
    EXPECT_EQ(st.lookup_method(), src.method);
    EXPECT_TRUE(st.defines("cudnnGetVersion"));
    EXPECT_TRUE(st.defines("cudnnTable"));  // a hidden (non-default) version still defines it
    EXPECT_FALSE(st.defines("malloc"));     // imported, not defined
    EXPECT_FALSE(st.defines("cudnnGetVersio"));
    EXPECT_FALSE(st.defines("cudnnGetVersionX"));
    EXPECT_FALSE(st.defines(""));
    // With the hash computed once by the caller, the same answers (any lookup method).
    for (const char* n : {"cudnnGetVersion", "cudnnTable", "malloc", "cudnnGetVersionX"}) {
      EXPECT_EQ(st.defines(n, ElfSymbolTable::gnu_hash(n)), st.defines(n)) << n;
    }
    ASSERT_EQ(st.imports().size(), 2u);
    EXPECT_EQ(st.imports()[0].name, "malloc");
    EXPECT_FALSE(st.imports()[0].weak);
    EXPECT_EQ(st.imports()[1].name, "__gmon_start__");
    EXPECT_TRUE(st.imports()[1].weak);
    for (size_t n = 0; n < img.bytes.size(); ++n) {
      std::vector<uint8_t> cut(img.bytes.begin(), img.bytes.begin() + static_cast<ptrdiff_t>(n));
      auto tr = ElfSymbolTable::read(view(cut), "t.so");
      if (!tr) {
        EXPECT_THAT(tr.error().message, StartsWith("t.so: "));
      } else if (*tr) {
        (void)(*tr)->defines("cudnnGetVersion");
        (void)(*tr)->defines("malloc");
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, ElfVariants,
                         ::testing::Values(Variant{true, false}, Variant{false, false},
                                           Variant{true, true}, Variant{false, true}),
                         [](const auto& p) {
                           return std::string(p.param.is64 ? "Elf64" : "Elf32") +
                                  (p.param.big ? "BigEndian" : "LittleEndian");
                         });

TEST(Elf, BigEndianHeaderFields) {
  ElfSpec s;
  s.is64 = true;
  s.big = true;
  s.machine = 22;  // s390
  s.type = 2;
  s.os_abi = 3;
  s.needed = {"libz.so.1"};
  auto img = build_elf(s);
  auto r = parse_elf(view(img.bytes), "s390");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_TRUE(r->has_value());
  EXPECT_FALSE((*r)->little_endian);
  EXPECT_EQ((*r)->machine, 22);
  EXPECT_EQ((*r)->type, 2);
  EXPECT_EQ((*r)->os_abi, 3);
  EXPECT_THAT((*r)->needed, ElementsAre("libz.so.1"));
  EXPECT_FALSE((*r)->soname.has_value());
  EXPECT_FALSE((*r)->rpath.has_value());
  EXPECT_FALSE((*r)->runpath.has_value());
}

TEST(Elf, NotElfIsNullopt) {
  for (std::string s : {std::string(), std::string("\x7f"),
                        std::string("\x7f"
                                    "EL"),
                        std::string("MZ\x90\0\x03\0\0\0", 8), std::string("#!/bin/sh\necho hi\n"),
                        std::string(100, '\0')}) {
    auto r = parse_elf(ByteView(s), "x");
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_FALSE(r->has_value());
    EXPECT_TRUE(elf_find_strings(ByteView(s), "lib").empty());
  }
}

TEST(Elf, CorruptHeadersGiveNamedErrors) {
  auto base = build_elf(full_spec(true, false));
  auto expect_error = [](const std::vector<uint8_t>& b, const std::string& what) {
    auto r = parse_elf(view(b), "libfoo.so");
    ASSERT_FALSE(r.has_value()) << what;
    EXPECT_THAT(r.error().message, StartsWith("libfoo.so: "));
    EXPECT_THAT(r.error().message, HasSubstr(what));
  };
  {
    std::vector<uint8_t> b(base.bytes.begin(), base.bytes.begin() + 10);
    expect_error(b, "e_ident");
  }
  {
    std::vector<uint8_t> b(base.bytes.begin(), base.bytes.begin() + 40);
    expect_error(b, "ELF header truncated");
  }
  {
    auto b = base.bytes;
    b[4] = 7;
    expect_error(b, "invalid ELF class 7");
  }
  {
    auto b = base.bytes;
    b[5] = 0;
    expect_error(b, "data encoding");
  }
  {
    auto b = base.bytes;
    testbuild::Writer w(false);
    w.bytes() = b;
    w.put_at(32, b.size() - 10, 8);  // e_phoff near the end
    expect_error(w.bytes(), "program header table extends past end of file");
    w.put_at(32, base.phoff, 8);
    w.put_at(56, 0xfffe, 2);  // e_phnum huge
    expect_error(w.bytes(), "program header table extends past end of file");
    w.put_at(56, 0xffff, 2);                   // PN_XNUM: count in section 0's sh_info
    w.put_at(base.shoff + 44, 0x7fffffff, 4);  // ...an absurd one
    expect_error(w.bytes(), "too many program headers");
    w.put_at(56, 2, 2);
    w.put_at(base.shoff + 44, 0, 4);
    w.put_at(54, 20, 2);  // e_phentsize too small
    expect_error(w.bytes(), "program header entry size");
  }
  {
    // PT_DYNAMIC offset past the end of the file.
    testbuild::Writer w(false);
    w.bytes() = base.bytes;
    w.put_at(base.phoff + 56 + 8, 1u << 30, 8);
    expect_error(w.bytes(), "dynamic segment (PT_DYNAMIC) extends past end of file");
  }
  {
    // DT_NEEDED pointing outside the string table.
    testbuild::Writer w(false);
    w.bytes() = base.bytes;
    w.put_at(base.dynoff + 8, 0x100000, 8);
    expect_error(w.bytes(), "DT_NEEDED string offset");
  }
  {
    // Section fallback with a broken section header table.
    auto spec = full_spec(true, false);
    spec.program_headers = false;
    auto img = build_elf(spec);
    testbuild::Writer w(false);
    w.bytes() = img.bytes;
    w.put_at(60, 0xfff0, 2);
    expect_error(w.bytes(), "section header table extends past end of file");
  }
}

TEST(Elf, DynamicLoopIsBoundedWithoutDtNull) {
  // A dynamic segment without DT_NULL that is all DT_NEEDED entries: the loop
  // stops at the end of the segment.
  auto img = build_elf(full_spec(true, false));
  testbuild::Writer w(false);
  w.bytes() = img.bytes;
  const size_t n = img.dynsize / 16;
  for (size_t i = 0; i < n; ++i) {
    w.put_at(img.dynoff + 16 * i, 1, 8);
    w.put_at(img.dynoff + 16 * i + 8, 1, 8);  // "libc.so.6"
  }
  // Without DT_STRTAB the .dynstr section fallback is used.
  auto r = parse_elf(view(w.bytes()), "x");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ((*r)->needed.size(), n);
}

// Version lists are capped in total, not only per list: 16 files x 4096 names
// read; one more file is a named error (a corrupt table can share entries to
// list millions of names from a few kilobytes).
TEST(Elf, VersionNamesAreCappedInTotal) {
  std::vector<std::string> versions;
  for (int i = 0; i < 4096; ++i) versions.push_back("V" + std::to_string(i));
  ElfSpec s;
  for (int f = 0; f < 16; ++f) s.version_needs.push_back({"lib" + std::to_string(f), versions});
  auto img = build_elf(s);
  auto r = parse_elf(view(img.bytes), "v.so", ElfParseOptions{.symbols = true});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ((*r)->version_needs.size(), 16u);
  EXPECT_EQ((*r)->version_needs[15].versions.back(), "V4095");
  s.version_defs = {"one.more"};
  img = build_elf(s);
  r = parse_elf(view(img.bytes), "v.so", ElfParseOptions{.symbols = true});
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("more than 65536 version names"));
}

// Symbol names are capped in total: 4097 symbols that all name one 65535-byte
// string would be 256 MiB of copies.
TEST(Elf, SymbolNameBytesAreCappedInTotal) {
  ElfSpec s;
  s.symbols.push_back(testbuild::elf_sym(std::string(65535, 'x')));
  for (int i = 0; i < 4096; ++i) s.symbols.push_back(testbuild::elf_sym("s"));
  auto img = build_elf(s);
  auto r = parse_elf(view(img.bytes), "s.so", ElfParseOptions{.symbols = true});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ((*r)->dynamic_symbols.size(), 4097u);
  // Point every st_name (the first word of each 24-byte entry) at the long name.
  ASSERT_GT(img.dynsymoff, 0u);
  uint32_t long_name = 0;
  std::memcpy(&long_name, &img.bytes[img.dynsymoff + 24], 4);
  for (size_t i = 2; i <= 4097; ++i) std::memcpy(&img.bytes[img.dynsymoff + 24 * i], &long_name, 4);
  r = parse_elf(view(img.bytes), "s.so", ElfParseOptions{.symbols = true});
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("dynamic symbol names exceed"));
}

// The gcc-linked seed real-libver.so.1 (tests/fuzz/README.md says how it is
// built): a default and a hidden version of one export, versioned imports from
// libc and libm; the same with the section headers cut off (symbol count from
// DT_GNU_HASH or DT_HASH).
TEST(Elf, RealVersionedLibrarySeeds) {
  const auto dir = std::filesystem::path(DLENV_SOURCE_DIR) / "tests" / "fuzz" / "corpus" / "elf";
  for (const char* name : {"real-libver.so.1", "real-libver-gnuhash-noshdr.so.1",
                           "real-libver-sysvhash-noshdr.so.1"}) {
    SCOPED_TRACE(name);
    std::ifstream in(dir / name, std::ios::binary);
    const std::vector<uint8_t> b((std::istreambuf_iterator<char>(in)),
                                 std::istreambuf_iterator<char>());
    ASSERT_FALSE(b.empty());
    auto r = parse_elf(view(b), name, ElfParseOptions{.symbols = true});
    ASSERT_TRUE(r.has_value()) << r.error().message;
    const ElfInfo& i = **r;
    EXPECT_EQ(i.soname, "libver.so.1");
    EXPECT_EQ(i.runpath, "$ORIGIN/lib");
    EXPECT_THAT(i.needed, ElementsAre("libm.so.6", "libc.so.6"));
    EXPECT_THAT(i.version_defs, ElementsAre("libver.so.1", "VER_1.0", "VER_2.0"));
    std::vector<std::string> seen;
    for (const auto& s : i.dynamic_symbols) {
      if (!s.version.empty()) {
        seen.push_back(s.name + (s.version_hidden ? "@" : "@@") + s.version +
                       (s.version_file.empty() ? "" : " from " + s.version_file));
      }
    }
    EXPECT_THAT(seen,
                ::testing::IsSupersetOf(
                    {"dlenv_ver@@VER_2.0", "dlenv_ver@VER_1.0", "dlenv_ver_name@@VER_1.0",
                     "puts@@GLIBC_2.2.5 from libc.so.6", "sqrt@@GLIBC_2.2.5 from libm.so.6"}));
  }
}

TEST(Elf, FindStringsRules) {
  // Prefix inside a longer string, a duplicate, a non-printable one, and a last
  // one whose NUL lies outside .rodata (it is only terminated by the next section).
  static const char kRodata[] =
      "libcublasLt.so.12\0xlibcublasLt.so.13\0libcublasLt.so.12\0libcublasLt.so.\x01\0"
      "libcublasLt.so.14";
  ElfSpec s;
  s.rodata = std::string(kRodata, sizeof(kRodata) - 1);
  auto img = build_elf(s);
  auto found = elf_find_strings(view(img.bytes), "libcublasLt.so.");
  EXPECT_THAT(found, ElementsAre("libcublasLt.so.12", "libcublasLt.so.13"));
  EXPECT_THAT(elf_find_strings(view(img.bytes), "libcublasLt.so.", 2),
              ElementsAre("libcublasLt.so.12", "libcublasLt.so.13"));
  EXPECT_TRUE(elf_find_strings(view(img.bytes), "").empty());
  EXPECT_TRUE(elf_find_strings(view(img.bytes), "libnotthere.so.").empty());

  // Without section headers only read-only, non-executable PT_LOADs count (here
  // one covering the whole file, so the last string is terminated).
  s.sections = false;
  img = build_elf(s);
  EXPECT_THAT(elf_find_strings(view(img.bytes), "libcublasLt.so."),
              ElementsAre("libcublasLt.so.12", "libcublasLt.so.13", "libcublasLt.so.14"));
  s.load_flags = 5;  // R+X
  img = build_elf(s);
  EXPECT_TRUE(elf_find_strings(view(img.bytes), "libcublasLt.so.").empty());
}

// The several-prefix search gives, per prefix, what the one-prefix search gives
// (strings next to each other, a too-long string with a match inside it, an
// unterminated tail, results capped per prefix); spans of it merge to the whole.
TEST(Elf, FindStringsForSeveralPrefixesAndSpans) {
  const std::string too_long = "libnvrtc.so." + std::string(5000, '9') + "libnvrtc.so.13";
  static const char kHead[] = "libcublasLt.so.12\0xlibcublasLt.so.13\0libnvrtc.so.12\0";
  static const char kTail[] = "\0libcublasLt.so.12\0libcublasLt.so.\x01\0";
  const std::string rodata = std::string(kHead, sizeof(kHead) - 1) + too_long +
                             std::string(kTail, sizeof(kTail) - 1) + "libnvrtc.so.14";
  for (bool sections : {true, false}) {
    SCOPED_TRACE(sections);
    ElfSpec s;
    s.rodata = rodata;
    s.sections = sections;
    auto img = build_elf(s);
    const ByteView file = view(img.bytes);
    const std::vector<std::string> prefixes = {"libcublasLt.so.", "libnvrtc.so."};
    for (size_t max : {size_t{1}, size_t{16}}) {
      const std::vector<std::vector<std::string>> want = {elf_find_strings(file, prefixes[0], max),
                                                          elf_find_strings(file, prefixes[1], max)};
      EXPECT_FALSE(want[1].empty());
      EXPECT_EQ(elf_find_strings(file, prefixes, max), want);
    }
    EXPECT_THAT(elf_find_strings(file, prefixes[1], 16),
                IsSupersetOf({"libnvrtc.so.12", "libnvrtc.so.13"}));
    // Spans: every split of the read-only data, searched span by span and merged
    // in offset order, finds what the whole search finds.
    const auto ranges = elf_readonly_ranges(file);
    ASSERT_FALSE(ranges.empty());
    const auto whole = elf_find_strings(file, prefixes, 16);
    for (uint64_t step : {uint64_t{1}, uint64_t{2}, uint64_t{7}, uint64_t{100}, uint64_t{4097}}) {
      SCOPED_TRACE(step);
      std::vector<std::vector<std::string>> merged(prefixes.size());
      size_t spans = 0;
      for (const auto& [offset, size] : ranges) {
        for (uint64_t at = offset; at < offset + size; at += step, ++spans) {
          const ElfSpan span{at, std::min(at + step, offset + size)};
          auto part = elf_find_strings(file, prefixes, 16, span);
          for (size_t k = 0; k < prefixes.size(); ++k) {
            for (auto& str : part[k]) {
              if (std::find(merged[k].begin(), merged[k].end(), str) == merged[k].end()) {
                merged[k].push_back(str);
              }
            }
          }
        }
      }
      EXPECT_GT(spans, step < 100 ? 100u : 1u);
      EXPECT_EQ(merged, whole);
    }
    // A span reports the strings that start in it, and only those.
    const std::string bytes(reinterpret_cast<const char*>(img.bytes.data()), img.bytes.size());
    const uint64_t head = bytes.find(std::string(kHead, sizeof(kHead) - 1));
    ASSERT_NE(head, std::string::npos);
    auto first = elf_find_strings(file, prefixes, 16, ElfSpan{head, head + 1});
    EXPECT_THAT(first[0], ElementsAre("libcublasLt.so.12"));
    EXPECT_TRUE(first[1].empty());
    auto after = elf_find_strings(file, prefixes, 16, ElfSpan{head + 1, head + 19});
    EXPECT_TRUE(after[0].empty());
    // A span outside the read-only data finds nothing.
    auto outside = elf_find_strings(file, prefixes, 16, ElfSpan{0, 1});
    EXPECT_TRUE(outside[0].empty() && outside[1].empty());
    // An empty prefix finds nothing; the others are still searched.
    auto with_empty = elf_find_strings(file, {"", prefixes[1]}, 16);
    EXPECT_TRUE(with_empty[0].empty());
    EXPECT_EQ(with_empty[1], whole[1]);
  }
}

// dl_new_hash, as ld.so computes it ("printf": the value every GNU hash write-up uses).
TEST(Elf, GnuHashOfASymbolName) {
  EXPECT_EQ(ElfSymbolTable::gnu_hash(""), 5381u);
  EXPECT_EQ(ElfSymbolTable::gnu_hash("printf"), 0x156b2bb8u);
}

TEST(Elf, MachineNames) {
  EXPECT_EQ(elf_machine_name(62), "x86-64");
  EXPECT_EQ(elf_machine_name(183), "aarch64");
  EXPECT_EQ(elf_machine_name(3), "i386");
  EXPECT_EQ(elf_machine_name(21), "ppc64");
  EXPECT_EQ(elf_machine_name(0x1234), "machine 0x1234");
  EXPECT_EQ(elf_machine_name(0xa), "machine 0x0a");
}

// --- Files on disk -------------------------------------------------------------

class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return;
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || st.st_size == 0) return;
    size_ = static_cast<size_t>(st.st_size);
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
    if (p != MAP_FAILED) data_ = static_cast<const uint8_t*>(p);
  }
  ~MappedFile() {
    if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
    if (fd_ >= 0) ::close(fd_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  bool ok() const { return data_ != nullptr; }
  ByteView view() const { return ByteView(data_, size_); }

 private:
  int fd_ = -1;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

std::filesystem::path test_tmp(const std::string& sub) {
  const char* env = std::getenv("DLENV_TEST_TMP");
  std::filesystem::path p = env ? env : std::string(DLENV_BINARY_DIR) + "/test-tmp";
  p /= "binfmt-" + sub + "-" + std::to_string(::getpid());
  std::filesystem::create_directories(p);
  return p;
}

// Compiles a tiny shared library with the project's compiler.
std::optional<std::string> build_shared_lib(const std::string& sub, const std::string& dtags) {
  if (!std::filesystem::exists(DLENV_CXX_COMPILER)) return std::nullopt;
  const auto dir = test_tmp(sub);
  const auto src = dir / "x.cc";
  const auto lib = dir / "libx.so.1";
  std::ofstream(src) << "extern \"C\" const char* dlenv_lt() { return \"libcublasLt.so.42\"; }\n";
  const std::string cmd = std::string(DLENV_CXX_COMPILER) + " -shared -fPIC -o " + lib.string() +
                          " " + src.string() + " -Wl,-soname,libx.so.1 -Wl,-rpath,/opt/x -Wl," +
                          dtags + " -Wl,--no-as-needed -lm 2>&1";
  if (std::system(cmd.c_str()) != 0) return std::string();
  return lib.string();
}

TEST(ElfOnDisk, CompiledLibraryWithRunpath) {
  auto lib = build_shared_lib("runpath", "--enable-new-dtags");
  if (!lib) GTEST_SKIP() << "compiler " << DLENV_CXX_COMPILER << " not found";
  ASSERT_FALSE(lib->empty()) << "compiling the test library failed";
  MappedFile f(*lib);
  ASSERT_TRUE(f.ok());
  auto r = parse_elf(f.view(), "libx.so.1");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_TRUE(r->has_value());
  const ElfInfo& i = **r;
  EXPECT_EQ(i.type, 3);
  EXPECT_TRUE(i.has_dynamic);
  EXPECT_EQ(i.soname, "libx.so.1");
  EXPECT_EQ(i.runpath, "/opt/x");
  EXPECT_FALSE(i.rpath.has_value());
  EXPECT_THAT(i.needed, ::testing::Contains("libm.so.6"));
  EXPECT_THAT(i.needed, ::testing::Contains("libc.so.6"));
#if defined(__x86_64__)
  EXPECT_TRUE(i.is_64);
  EXPECT_TRUE(i.little_endian);
  EXPECT_EQ(i.machine, 62);
#endif
  EXPECT_THAT(elf_find_strings(f.view(), "libcublasLt.so."), ElementsAre("libcublasLt.so.42"));
  EXPECT_THAT(elf_find_strings(f.view(), "libm.so."), ElementsAre("libm.so.6"));
  std::filesystem::remove_all(std::filesystem::path(*lib).parent_path());
}

#if defined(__x86_64__)
// Large-model data: under -mcmodel=medium the compiler puts objects over 64 KiB
// in .lrodata, and string literals (a dlopen name) stay in .rodata, which is why
// the search leaves .lrodata out (cuDNN's heuristic library: 47 MB of tables).
TEST(ElfOnDisk, StringLiteralsOfTheMediumModelStayInRodata) {
  if (!std::filesystem::exists(DLENV_CXX_COMPILER)) GTEST_SKIP() << "no compiler";
  const auto dir = test_tmp("medium");
  const auto src = dir / "m.cc";
  const auto lib = dir / "libm1.so";
  std::ofstream(src) << "extern \"C\" const char big[200000] = \"libcublasLt.so.77\";\n"
                        "extern \"C\" const char* dlenv_lt(int i) {\n"
                        "  return i ? big : \"libcublasLt.so.42\"; }\n";
  const std::string cmd = std::string(DLENV_CXX_COMPILER) + " -shared -fPIC -mcmodel=medium -o " +
                          lib.string() + " " + src.string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  MappedFile f(lib.string());
  ASSERT_TRUE(f.ok());
  const std::string bytes(reinterpret_cast<const char*>(f.view().data()), f.view().size());
  ASSERT_NE(bytes.find("libcublasLt.so.77"), std::string::npos);
  ASSERT_NE(bytes.find(".lrodata"), std::string::npos);  // the big array went there
  EXPECT_THAT(elf_find_strings(f.view(), "libcublasLt.so."), ElementsAre("libcublasLt.so.42"));
  std::filesystem::remove_all(dir);
}
#endif

TEST(ElfOnDisk, CompiledLibraryWithRpath) {
  auto lib = build_shared_lib("rpath", "--disable-new-dtags");
  if (!lib) GTEST_SKIP() << "compiler " << DLENV_CXX_COMPILER << " not found";
  ASSERT_FALSE(lib->empty()) << "compiling the test library failed";
  MappedFile f(*lib);
  ASSERT_TRUE(f.ok());
  auto r = parse_elf(f.view(), "libx.so.1");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->rpath, "/opt/x");
  EXPECT_FALSE((*r)->runpath.has_value());
  std::filesystem::remove_all(std::filesystem::path(*lib).parent_path());
}

TEST(ElfOnDisk, CudnnOpsDynamicSection) {
  const std::string path = "/usr/local/cuda/lib64/libcudnn_ops.so.9";
  MappedFile f(path);
  if (!f.ok()) GTEST_SKIP() << path << " not present";
  auto r = parse_elf(f.view(), path);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->soname, "libcudnn_ops.so.9");
  EXPECT_THAT((*r)->needed, ::testing::Contains("libcudnn_graph.so.9"));
  ASSERT_TRUE((*r)->runpath.has_value());
  EXPECT_THAT(*(*r)->runpath, StartsWith("$ORIGIN"));
}

TEST(ElfOnDisk, CudnnAdvFindsCublasLt) {
  const std::string path = "/usr/local/cuda/lib64/libcudnn_adv.so.9";
  MappedFile f(path);
  if (!f.ok()) GTEST_SKIP() << path << " not present";
  const auto t0 = std::chrono::steady_clock::now();
  auto found = elf_find_strings(f.view(), "libcublasLt.so.");
  const auto ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "[ info ] elf_find_strings on " << path << " (" << f.view().size()
            << " bytes): " << ms << " ms, found:";
  for (const auto& s : found) std::cout << ' ' << s;
  std::cout << '\n';
  RecordProperty("elf_find_strings_ms", std::to_string(ms));
  EXPECT_THAT(found, ::testing::Contains("libcublasLt.so.13"));
  // Searched for two prefixes at once, in two spans, the same names.
  const auto ranges = elf_readonly_ranges(f.view());
  ASSERT_FALSE(ranges.empty());
  const uint64_t mid = ranges.front().first + ranges.front().second / 2;
  std::vector<std::string> merged;
  for (const ElfSpan span : {ElfSpan{0, mid}, ElfSpan{mid, UINT64_MAX}}) {
    const auto part = elf_find_strings(f.view(), {"libcublasLt.so.", "libnvrtc.so."}, 16, span);
    for (const auto& s : part[0]) {
      if (std::find(merged.begin(), merged.end(), s) == merged.end()) merged.push_back(s);
    }
  }
  EXPECT_EQ(merged, found);
}

TEST(ElfOnDisk, DynamicSymbolsAndVersions) {
  if (!std::filesystem::exists(DLENV_CXX_COMPILER)) GTEST_SKIP() << "no compiler";
  const auto dir = test_tmp("syms");
  std::ofstream(dir / "s.c") << "extern int imported_thing(void);\n"
                                "extern int maybe_there(void) __attribute__((weak));\n"
                                "int exported_fn(void) { return imported_thing() + "
                                "(maybe_there ? maybe_there() : 0); }\n"
                                "int exported_var = 3;\n"
                                "static int local_fn(void) { return 1; }\n"
                                "int use_local(void) { return local_fn(); }\n";
  std::ofstream(dir / "v.map") << "VERS_1.0 { global: exported_fn; exported_var; use_local; "
                                  "local: *; };\n";
  for (const char* hash : {"gnu", "sysv"}) {
    SCOPED_TRACE(hash);
    const auto lib = dir / (std::string("libs-") + hash + ".so");
    const std::string cmd = std::string(DLENV_CXX_COMPILER) + " -x c -shared -fPIC -o " +
                            lib.string() + " " + (dir / "s.c").string() + " -Wl,--version-script," +
                            (dir / "v.map").string() + " -Wl,--hash-style=" + hash +
                            " -Wl,--allow-shlib-undefined 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    MappedFile f(lib.string());
    ASSERT_TRUE(f.ok());
    // Without the option, no symbols are read (doctor's fast path).
    auto plain = parse_elf(f.view(), lib.string());
    ASSERT_TRUE(plain && *plain);
    EXPECT_FALSE((*plain)->symbols_read);
    EXPECT_TRUE((*plain)->dynamic_symbols.empty());
    auto r = parse_elf(f.view(), lib.string(), ElfParseOptions{.symbols = true});
    ASSERT_TRUE(r.has_value()) << r.error().message;
    ASSERT_TRUE(r->has_value());
    const ElfInfo& i = **r;
    EXPECT_TRUE(i.symbols_read);
    auto find = [&](const std::string& n) -> const ElfSymbol* {
      for (const auto& s : i.dynamic_symbols) {
        if (s.name == n) return &s;
      }
      return nullptr;
    };
    ASSERT_NE(find("exported_fn"), nullptr);
    EXPECT_TRUE(find("exported_fn")->defined);
    EXPECT_TRUE(find("exported_fn")->function);
    ASSERT_NE(find("exported_var"), nullptr);
    EXPECT_FALSE(find("exported_var")->function);
    ASSERT_NE(find("imported_thing"), nullptr);
    EXPECT_FALSE(find("imported_thing")->defined);
    EXPECT_FALSE(find("imported_thing")->weak);
    ASSERT_NE(find("maybe_there"), nullptr);
    EXPECT_TRUE(find("maybe_there")->weak);
    EXPECT_EQ(find("local_fn"), nullptr);
    EXPECT_THAT(i.version_defs, ::testing::Contains("VERS_1.0"));
    // Tables read through DT_SYMTAB + DT_HASH/DT_GNU_HASH alone (no section
    // headers) give the same symbols: strip the section header table.
    std::ifstream in(lib, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
    ASSERT_GT(bytes.size(), 64u);
    std::memset(bytes.data() + 40, 0, 8);  // e_shoff
    std::memset(bytes.data() + 60, 0, 4);  // e_shnum, e_shstrndx
    auto r2 =
        parse_elf(ByteView(bytes.data(), bytes.size()), "noshdr", ElfParseOptions{.symbols = true});
    ASSERT_TRUE(r2.has_value()) << r2.error().message;
    ASSERT_TRUE(r2->has_value());
    EXPECT_EQ((*r2)->dynamic_symbols.size(), i.dynamic_symbols.size());
    // The in-place table: the same answers through the linker's hash table.
    for (const auto& bytes_view :
         {f.view(), ByteView(bytes.data(), bytes.size())}) {  // with, without section headers
      auto t = ElfSymbolTable::read(bytes_view, lib.string());
      ASSERT_TRUE(t.has_value()) << t.error().message;
      ASSERT_TRUE(t->has_value());
      EXPECT_EQ((*t)->lookup_method(), hash == std::string("gnu") ? "gnu" : "sysv");
      EXPECT_TRUE((*t)->defines("exported_fn"));
      EXPECT_TRUE((*t)->defines("exported_var"));
      EXPECT_TRUE((*t)->defines("use_local"));
      EXPECT_FALSE((*t)->defines("local_fn"));
      EXPECT_FALSE((*t)->defines("imported_thing"));
      std::vector<std::string> imports;
      for (const auto& imp : (*t)->imports()) {
        imports.push_back(std::string(imp.name) + (imp.weak ? " weak" : ""));
      }
      EXPECT_THAT(imports, ::testing::Contains("imported_thing"));
      EXPECT_THAT(imports, ::testing::Contains("maybe_there weak"));
    }
  }
  std::filesystem::remove_all(dir);
}

// On real libraries, every export that the full reader lists is found by the
// hash-table lookup, and no import is.
TEST(ElfOnDisk, SymbolTableAgreesWithTheFullReaderOnRealLibraries) {
  int checked = 0;
  for (const char* path :
       {"/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libstdc++.so.6",
        "/usr/local/cuda/lib64/libcublas.so.13", "/usr/local/cuda/lib64/libcudnn_graph.so.9"}) {
    MappedFile f(path);
    if (!f.ok()) continue;
    SCOPED_TRACE(path);
    auto full = parse_elf(f.view(), path, ElfParseOptions{.symbols = true});
    ASSERT_TRUE(full && *full) << (full ? "" : full.error().message);
    auto t = ElfSymbolTable::read(f.view(), path);
    ASSERT_TRUE(t && *t) << (t ? "" : t.error().message);
    size_t exports = 0, imports = 0;
    for (const auto& s : (*full)->dynamic_symbols) {
      if (s.defined) {
        ++exports;
        EXPECT_TRUE((*t)->defines(s.name)) << s.name;
      } else {
        ++imports;
      }
    }
    EXPECT_EQ((*t)->imports().size(), imports);
    for (const auto& imp : (*t)->imports()) EXPECT_FALSE((*t)->defines(imp.name)) << imp.name;
    std::cout << "[ info ] " << path << ": " << exports << " exports found by "
              << (*t)->lookup_method() << " hash, " << imports << " imports\n";
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no system library at the usual paths";
}

TEST(ElfOnDisk, LibcVersionNeedsOfARealLibrary) {
  const std::string path = "/usr/local/cuda/lib64/libcudnn.so.9";
  MappedFile f(path);
  if (!f.ok()) GTEST_SKIP() << path << " not present";
  auto r = parse_elf(f.view(), path, ElfParseOptions{.symbols = true});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_TRUE(r->has_value());
  bool exports_get_version = false;
  for (const auto& s : (*r)->dynamic_symbols) {
    if (s.name == "cudnnGetVersion" && s.defined) exports_get_version = true;
  }
  EXPECT_TRUE(exports_get_version);
  bool needs_glibc = false;
  for (const auto& n : (*r)->version_needs) {
    if (n.file == "libc.so.6" && !n.versions.empty()) needs_glibc = true;
  }
  EXPECT_TRUE(needs_glibc);
}

// The pre-check before a real dlopen: a real gcc-built library is loadable whole; cut
// anywhere inside what ld.so maps, it is refused with the byte counts, never read past.
TEST(Elf, LoadProblemOfTruncatedCopies) {
  const auto file = std::filesystem::path(DLENV_SOURCE_DIR) / "tests" / "fuzz" / "corpus" / "elf" /
                    "real-libver.so.1";
  std::ifstream in(file, std::ios::binary);
  const std::vector<uint8_t> b((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
  ASSERT_GT(b.size(), 4096u);
  EXPECT_EQ(elf_load_problem(view(b)), std::nullopt);
  size_t refused = 0;
  for (size_t n = 0; n < b.size(); n += 97) {
    std::vector<uint8_t> t(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n));
    auto p = elf_load_problem(view(t));
    if (n < 4) {
      EXPECT_EQ(p, std::nullopt) << n;  // not ELF: the loader refuses it by itself
      continue;
    }
    if (n < 64) {
      ASSERT_TRUE(p) << n;
      EXPECT_EQ(*p, fmt::format("the file is truncated ({} of 64 bytes of its ELF header)", n));
      continue;
    }
    if (!p) continue;  // only the section headers (never mapped) are missing
    ++refused;
    EXPECT_THAT(*p, StartsWith(fmt::format("the file is truncated ({} of ", n))) << n;
  }
  EXPECT_GT(refused, b.size() / 97 / 2);
  // Half the file: a loadable segment ends past the end.
  std::vector<uint8_t> half(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(b.size() / 2));
  auto p = elf_load_problem(view(half));
  ASSERT_TRUE(p);
  EXPECT_THAT(*p, ::testing::HasSubstr("loadable segment (program header"));
  // A program header table that points past the end.
  std::vector<uint8_t> bad = b;
  bad[32] = 0xff;  // e_phoff low byte
  bad[33] = 0xff;
  bad[34] = 0xff;
  p = elf_load_problem(view(bad));
  ASSERT_TRUE(p);
  const uint64_t phoff = uint64_t{bad[32]} | uint64_t{bad[33]} << 8 | uint64_t{bad[34]} << 16 |
                         uint64_t{bad[35]} << 24 | uint64_t{bad[36]} << 32 |
                         uint64_t{bad[37]} << 40 | uint64_t{bad[38]} << 48 |
                         uint64_t{bad[39]} << 56;
  const uint64_t phentsize = uint64_t{bad[54]} | uint64_t{bad[55]} << 8;
  const uint64_t phnum = uint64_t{bad[56]} | uint64_t{bad[57]} << 8;
  const uint64_t end = phoff + phentsize * phnum;
  EXPECT_EQ(*p, fmt::format("the file is truncated ({} of {} bytes: its program headers end at "
                            "byte {})",
                            b.size(), end, end));
}

}  // namespace
}  // namespace dlenv
