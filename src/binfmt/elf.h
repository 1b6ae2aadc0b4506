// ELF reader: identity (class, machine, OS ABI, type) and the dynamic section
// (DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH); on request also the dynamic
// symbols with their versions (DT_VERSYM), DT_VERNEED and DT_VERDEF. Every
// read is bounds-checked.
// parse_elf returns nullopt-in-Result for "not an ELF file" and an Error for a
// corrupt one, so callers can tell "not mine" from "broken".
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "util/bytes.h"
#include "util/result.h"

namespace dlenv {

// One .dynsym entry (global or weak; locals and the null symbol are skipped).
struct ElfSymbol {
  std::string name;
  bool defined = false;   // st_shndx != SHN_UNDEF: exported; else imported
  bool weak = false;      // STB_WEAK: an undefined weak import may stay unresolved
  bool function = false;  // STT_FUNC / STT_GNU_IFUNC
  // From DT_VERSYM: the symbol's version ("GLIBC_2.34", "libcudnn.so.9"), empty
  // when unversioned or the file has no DT_VERSYM. For an import,
  // version_file is the library that must define it (DT_VERNEED's vn_file).
  // version_hidden: a non-default version of an export (name@VER, not name@@VER).
  std::string version;
  std::string version_file;
  bool version_hidden = false;
};

// One DT_VERNEED entry: the versions this object needs from `file`.
struct ElfVersionNeed {
  std::string file;                   // vn_file, e.g. "libc.so.6"
  std::vector<std::string> versions;  // vna_name, e.g. "GLIBC_2.34"
};

struct ElfInfo {
  bool is_64 = false;
  bool little_endian = true;
  uint16_t machine = 0;  // e_machine (62 = x86-64, 183 = aarch64, 3 = i386)
  uint8_t os_abi = 0;    // e_ident[EI_OSABI]
  uint16_t type = 0;     // e_type (2 = EXEC, 3 = DYN)
  std::vector<std::string> needed;
  std::optional<std::string> soname;
  std::optional<std::string> rpath;    // DT_RPATH, ':'-separated as stored
  std::optional<std::string> runpath;  // DT_RUNPATH
  bool has_dynamic = false;
  // Only filled when parse_elf is asked for symbols (ElfParseOptions::symbols).
  bool symbols_read = false;
  std::vector<ElfSymbol> dynamic_symbols;     // .dynsym in table order
  std::vector<ElfVersionNeed> version_needs;  // DT_VERNEED
  std::vector<std::string> version_defs;      // DT_VERDEF names (the first is the soname)
};

struct ElfParseOptions {
  // Also read .dynsym (exports and imports) and the DT_VERNEED/DT_VERDEF
  // tables. The symbol count comes from the SHT_DYNSYM section, else DT_HASH,
  // else DT_GNU_HASH.
  bool symbols = false;
  // Read DT_VERNEED/DT_VERDEF (version_needs, version_defs) without the symbols.
  bool versions = false;
};

// "x86-64", "aarch64", "i386", ... or "machine 0xNN".
std::string elf_machine_name(uint16_t machine);

// nullopt: not an ELF file (bad magic). Error: ELF magic but corrupt/truncated
// headers (the message says which structure). `name` is used in messages.
Result<std::optional<ElfInfo>> parse_elf(ByteView bytes, const std::string& name);
Result<std::optional<ElfInfo>> parse_elf(ByteView bytes, const std::string& name,
                                         const ElfParseOptions& options);

// The dynamic symbols of a mapped ELF file, read in place for checking many
// imports against many libraries the way ld.so does: names are views into the
// file's bytes, and a lookup goes through the file's own DT_GNU_HASH (else
// DT_HASH) table, so a library with 250,000 exports (libtorch_cpu.so) is never
// copied to be searched. `bytes` must outlive the table.
class ElfSymbolTable {
 public:
  struct Import {
    std::string_view name;
    bool weak = false;  // STB_WEAK: may stay unresolved
  };

  // nullopt: not an ELF file, or one without a dynamic symbol table. Error: the
  // tables are corrupt (the message names the structure).
  static Result<std::optional<ElfSymbolTable>> read(ByteView bytes, const std::string& name);
  // As read(); `prefetch` is first called with each table about to be scanned or
  // looked up (the symbols, their names, the hash table), so that a mapping can
  // populate them in one call instead of faulting them in page by page.
  static Result<std::optional<ElfSymbolTable>> read(ByteView bytes, const std::string& name,
                                                    const std::function<void(ByteView)>& prefetch);

  // Undefined GLOBAL/WEAK symbols, in table order.
  const std::vector<Import>& imports() const { return imports_; }
  // True when the file defines (exports) `name` in any version.
  bool defines(std::string_view name) const;
  // As defines(name), given gnu_hash(name): one hash for a lookup in many tables.
  bool defines(std::string_view name, uint32_t hash) const;
  // The DT_GNU_HASH hash of a symbol name (dl_new_hash).
  static uint32_t gnu_hash(std::string_view name);
  uint64_t symbol_count() const { return count_; }
  // "gnu", "sysv" or "none" (a linear index built when read). Lookups are
  // read-only: one table may serve several threads.
  std::string_view lookup_method() const;

 private:
  ElfSymbolTable() = default;
  bool defined_at(uint64_t index, std::string_view name) const;
  bool gnu_lookup(std::string_view name, uint32_t h) const;
  bool sysv_lookup(std::string_view name) const;

  ByteView table_, strtab_;
  uint64_t count_ = 0, entsize_ = 0;
  bool is64_ = false, big_ = false;
  // DT_GNU_HASH: the bloom words, buckets and chains, checked when read.
  ByteView gnu_bloom_, gnu_buckets_, gnu_chains_;
  uint32_t gnu_nbuckets_ = 0, gnu_symoffset_ = 0, gnu_bloom_words_ = 0, gnu_shift_ = 0;
  // DT_HASH.
  ByteView sysv_buckets_, sysv_chains_;
  uint32_t sysv_nbucket_ = 0, sysv_nchain_ = 0;
  std::vector<Import> imports_;
  std::optional<std::unordered_set<std::string_view>> linear_;
};

// The ELF header alone (class, byte order, machine, OS ABI, type): enough to
// tell whether a loader could use the file, from its first 64 bytes.
// nullopt: not an ELF file. Error: a truncated or invalid header.
Result<std::optional<ElfInfo>> parse_elf_header(ByteView bytes, const std::string& name);

// The pre-check before a real dlopen: whether ld.so can map `file` (the whole file) without
// touching bytes past its end, the usual SIGBUS of a truncated copy. nullopt when the ELF
// header, the program headers, every PT_LOAD segment's and the PT_DYNAMIC table's file bytes
// lie inside the file and the dynamic section reads; also nullopt for a file that is not ELF
// (the loader refuses it without mapping anything). Otherwise what is wrong, with the byte
// counts ("the file is truncated (4096 of 1234567 bytes: its loadable segment (program header
// 2) ends at byte 1234567)").
std::optional<std::string> elf_load_problem(ByteView file);

// Scans the read-only data of an ELF for NUL-terminated strings that start with
// `prefix` (e.g. "libcublasLt.so.") and returns the distinct ones found, in
// file order. Used for libraries loaded with dlopen by name (cuDNN 9 -> cuBLASLt).
// Read-only data = sections .rodata, .rodata.* and .dynstr (not .lrodata: see elf.cc)
// when section headers exist, else the PT_LOAD segments that are neither
// writable nor executable. A match inside a longer string yields the text from
// the prefix to the NUL; only printable-ASCII results are returned. Not-ELF or
// corrupt headers give an empty result.
std::vector<std::string> elf_find_strings(ByteView bytes, const std::string& prefix,
                                          size_t max_results = 16);

// elf_find_strings for several prefixes at once: result i is what
// elf_find_strings(bytes, prefixes[i], max_results) gives, limited to strings that
// start at file offsets in `span` [begin, end) (the text may run past `end`).
// Callers split a large file into spans searched in parallel (each span's pages
// populated first, see MappedFile::prefetch): the spans' results in offset order,
// deduplicated and cut at max_results, are the whole search's (one exception: a
// prefix that occurs twice in one string, with a span boundary between, is also
// reported from its second occurrence).
struct ElfSpan {
  uint64_t begin = 0;
  uint64_t end = UINT64_MAX;
};
std::vector<std::vector<std::string>> elf_find_strings(ByteView bytes,
                                                       const std::vector<std::string>& prefixes,
                                                       size_t max_results, ElfSpan span = {});

// The read-only data elf_find_strings searches, as (file offset, size) ranges in
// offset order; empty for a file that is not ELF or is corrupt.
std::vector<std::pair<uint64_t, uint64_t>> elf_readonly_ranges(ByteView file);

}  // namespace dlenv
