// ELF reader. Every read goes through ByteView (bounds-checked); every table
// is validated against the file size before it is walked, and every count is
// capped, so a corrupt file yields an Error (or, for elf_find_strings, fewer
// results) and never a crash, a hang or an absurd allocation.
#include "binfmt/elf.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace dlenv {

namespace {

constexpr uint32_t kPtLoad = 1;
constexpr uint32_t kPtDynamic = 2;
constexpr uint32_t kPfX = 1;
constexpr uint32_t kPfW = 2;
constexpr uint32_t kShtStrtab = 3;
constexpr uint32_t kShtDynamic = 6;
constexpr uint32_t kShtNobits = 8;
constexpr int64_t kDtNull = 0;
constexpr int64_t kDtNeeded = 1;
constexpr int64_t kDtStrtab = 5;
constexpr int64_t kDtStrsz = 10;
constexpr int64_t kDtSoname = 14;
constexpr int64_t kDtRpath = 15;
constexpr int64_t kDtRunpath = 29;
constexpr int64_t kDtHash = 4;
constexpr int64_t kDtSymtab = 6;
constexpr int64_t kDtSyment = 11;
constexpr int64_t kDtGnuHash = 0x6ffffef5;
constexpr int64_t kDtVerdef = 0x6ffffffc;
constexpr int64_t kDtVerdefnum = 0x6ffffffd;
constexpr int64_t kDtVerneed = 0x6ffffffe;
constexpr int64_t kDtVerneednum = 0x6fffffff;
constexpr int64_t kDtVersym = 0x6ffffff0;
constexpr uint32_t kShtDynsym = 11;
constexpr uint64_t kMaxSymbols = 4u << 20;  // cuBLASLt has ~100k; 4M is absurd
constexpr uint64_t kMaxVersionEntries = 4096;
// All DT_VERNEED/DT_VERDEF names together: each list is capped above, but
// entries may share bytes (vn_next/vna_next of 1), so 4096 x 4096 names would
// fit in a 4 KiB file. Real libraries list a few dozen.
constexpr uint64_t kMaxVersionNamesTotal = 65536;
// All .dynsym names together (a generous bound for real libraries); names may
// share bytes, so without a cap a small file could ask for gigabytes.
constexpr uint64_t kMaxSymbolBytesTotal = 256ull << 20;
constexpr uint16_t kPnXnum = 0xffff;
constexpr uint16_t kShnXindex = 0xffff;

constexpr uint64_t kMaxProgramHeaders = 65536;
constexpr uint64_t kMaxSections = 65536;
constexpr uint64_t kMaxDynamicEntries = 65536;
constexpr size_t kMaxDynString = 65536;          // longest DT_RUNPATH etc. we accept
constexpr size_t kMaxDynStringTotal = 16 << 20;  // all DT_NEEDED/... strings together
constexpr size_t kMaxFoundString = 4096;         // elf_find_strings result length

struct Phdr {
  uint32_t type = 0;
  uint32_t flags = 0;
  uint64_t offset = 0;
  uint64_t vaddr = 0;
  uint64_t filesz = 0;
};

struct Shdr {
  uint32_t name = 0;
  uint32_t type = 0;
  uint64_t flags = 0;
  uint64_t addr = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t link = 0;
  uint32_t info = 0;
};

struct Header {
  bool is64 = false;
  bool big = false;
  uint8_t os_abi = 0;
  uint16_t type = 0;
  uint16_t machine = 0;
  uint64_t phoff = 0;
  uint64_t shoff = 0;
  uint16_t phentsize = 0;
  uint16_t phnum = 0;
  uint16_t shentsize = 0;
  uint16_t shnum = 0;
  uint16_t shstrndx = 0;
};

// Checked reader bound to one file's class and byte order. Callers validate
// table bounds first; the value_or(0) fallbacks are then never taken but keep
// every access checked anyway.
class Reader {
 public:
  Reader(ByteView bytes, bool is64, bool big) : b_(bytes), is64_(is64), big_(big) {}
  uint8_t u8(uint64_t off) const { return b_.read<uint8_t>(off).value_or(0); }
  uint16_t u16(uint64_t off) const { return b_.read<uint16_t>(off, big_).value_or(0); }
  uint32_t u32(uint64_t off) const { return b_.read<uint32_t>(off, big_).value_or(0); }
  uint64_t u64(uint64_t off) const { return b_.read<uint64_t>(off, big_).value_or(0); }
  // Address/offset-sized word: 4 bytes in ELF32, 8 in ELF64.
  uint64_t word(uint64_t off) const { return is64_ ? u64(off) : u32(off); }
  int64_t sword(uint64_t off) const {
    return is64_ ? static_cast<int64_t>(u64(off)) : static_cast<int32_t>(u32(off));
  }

 private:
  ByteView b_;
  bool is64_;
  bool big_;
};

// Offset + size inside the file, overflow-safe.
bool range_ok(ByteView b, uint64_t off, uint64_t size) {
  return b.in_bounds(off, size);
}

class ElfFile {
 public:
  ElfFile(ByteView bytes, std::string name, Header h)
      : b_(bytes), name_(std::move(name)), h_(h), r_(bytes, h.is64, h.big) {}

  const Header& header() const { return h_; }
  const std::string& name() const { return name_; }
  const Reader& reader() const { return r_; }
  ByteView bytes() const { return b_; }

  std::unexpected<Error> err(std::string_view what) const {
    return fail(fmt::format("{}: {}", name_, what));
  }

  // Section header count and table, validated. Empty when the file has none.
  Result<std::vector<Shdr>> sections() const {
    std::vector<Shdr> out;
    if (h_.shoff == 0) return out;
    const uint64_t entsize = h_.is64 ? 64 : 40;
    if (h_.shentsize < entsize) {
      return err(
          fmt::format("section header entry size {} is smaller than {}", h_.shentsize, entsize));
    }
    uint64_t count = h_.shnum;
    if (count == 0) {
      // Extended numbering: the real count lives in section 0's sh_size.
      if (!range_ok(b_, h_.shoff, entsize)) {
        return err("section header table extends past end of file");
      }
      count = read_shdr(h_.shoff).size;
      if (count == 0) return out;
    }
    if (count > kMaxSections) {
      return err(fmt::format("too many section headers ({})", count));
    }
    if (!range_ok(b_, h_.shoff, count * h_.shentsize)) {
      return err("section header table extends past end of file");
    }
    out.reserve(static_cast<size_t>(count));
    for (uint64_t i = 0; i < count; ++i) out.push_back(read_shdr(h_.shoff + i * h_.shentsize));
    return out;
  }

  // Section names, parallel to `secs`; empty strings when there is no usable
  // section name table.
  std::vector<std::string_view> section_names(const std::vector<Shdr>& secs) const {
    std::vector<std::string_view> names(secs.size());
    uint64_t idx = h_.shstrndx;
    if (idx == kShnXindex && !secs.empty()) idx = secs[0].link;
    if (idx == 0 || idx >= secs.size()) return names;
    const Shdr& st = secs[idx];
    if (st.type == kShtNobits) return names;
    auto tab = b_.sub(st.offset, st.size);
    if (!tab) return names;
    for (size_t i = 0; i < secs.size(); ++i) {
      if (auto s = tab->cstring(secs[i].name, 256)) names[i] = *s;
    }
    return names;
  }

  Result<std::vector<Phdr>> program_headers() const {
    std::vector<Phdr> out;
    uint64_t count = h_.phnum;
    if (count == 0 || h_.phoff == 0) return out;
    const uint64_t entsize = h_.is64 ? 56 : 32;
    if (h_.phentsize < entsize) {
      return err(
          fmt::format("program header entry size {} is smaller than {}", h_.phentsize, entsize));
    }
    if (count == kPnXnum) {
      // Extended numbering: the real count lives in section 0's sh_info.
      if (h_.shoff == 0 || !range_ok(b_, h_.shoff, h_.is64 ? 64 : 40)) {
        return err("program header count is PN_XNUM but section header 0 is missing");
      }
      count = read_shdr(h_.shoff).info;
    }
    if (count > kMaxProgramHeaders) {
      return err(fmt::format("too many program headers ({})", count));
    }
    if (!range_ok(b_, h_.phoff, count * h_.phentsize)) {
      return err("program header table extends past end of file");
    }
    out.reserve(static_cast<size_t>(count));
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t o = h_.phoff + i * h_.phentsize;
      Phdr p;
      p.type = r_.u32(o);
      if (h_.is64) {
        p.flags = r_.u32(o + 4);
        p.offset = r_.u64(o + 8);
        p.vaddr = r_.u64(o + 16);
        p.filesz = r_.u64(o + 32);
      } else {
        p.offset = r_.u32(o + 4);
        p.vaddr = r_.u32(o + 8);
        p.filesz = r_.u32(o + 16);
        p.flags = r_.u32(o + 24);
      }
      out.push_back(p);
    }
    return out;
  }

 private:
  Shdr read_shdr(uint64_t o) const {
    Shdr s;
    s.name = r_.u32(o);
    s.type = r_.u32(o + 4);
    if (h_.is64) {
      s.flags = r_.u64(o + 8);
      s.addr = r_.u64(o + 16);
      s.offset = r_.u64(o + 24);
      s.size = r_.u64(o + 32);
      s.link = r_.u32(o + 40);
      s.info = r_.u32(o + 44);
    } else {
      s.flags = r_.u32(o + 8);
      s.addr = r_.u32(o + 12);
      s.offset = r_.u32(o + 16);
      s.size = r_.u32(o + 20);
      s.link = r_.u32(o + 24);
      s.info = r_.u32(o + 28);
    }
    return s;
  }

  ByteView b_;
  std::string name_;
  Header h_;
  Reader r_;
};

bool has_elf_magic(ByteView b) {
  return b.size() >= 4 && std::memcmp(b.data(),
                                      "\x7f"
                                      "ELF",
                                      4) == 0;
}

Result<std::optional<ElfFile>> open_elf(ByteView b, const std::string& name) {
  if (!has_elf_magic(b)) return std::optional<ElfFile>();
  auto e = [&](std::string_view what) { return fail(fmt::format("{}: {}", name, what)); };
  if (b.size() < 16) return e("ELF identification (e_ident) truncated");
  Header h;
  const uint8_t cls = b.data()[4];
  const uint8_t data = b.data()[5];
  if (cls != 1 && cls != 2) return e(fmt::format("invalid ELF class {} in e_ident", cls));
  if (data != 1 && data != 2)
    return e(fmt::format("invalid ELF data encoding {} in e_ident", data));
  h.is64 = cls == 2;
  h.big = data == 2;
  h.os_abi = b.data()[7];
  const uint64_t ehsize = h.is64 ? 64 : 52;
  if (b.size() < ehsize) {
    return e(fmt::format("ELF header truncated ({} bytes, need {})", b.size(), ehsize));
  }
  Reader r(b, h.is64, h.big);
  h.type = r.u16(16);
  h.machine = r.u16(18);
  if (h.is64) {
    h.phoff = r.u64(32);
    h.shoff = r.u64(40);
    h.phentsize = r.u16(54);
    h.phnum = r.u16(56);
    h.shentsize = r.u16(58);
    h.shnum = r.u16(60);
    h.shstrndx = r.u16(62);
  } else {
    h.phoff = r.u32(28);
    h.shoff = r.u32(32);
    h.phentsize = r.u16(42);
    h.phnum = r.u16(44);
    h.shentsize = r.u16(46);
    h.shnum = r.u16(48);
    h.shstrndx = r.u16(50);
  }
  return std::optional<ElfFile>(ElfFile(b, name, h));
}

ElfInfo header_info(const Header& h) {
  ElfInfo info;
  info.is_64 = h.is64;
  info.little_endian = !h.big;
  info.machine = h.machine;
  info.os_abi = h.os_abi;
  info.type = h.type;
  return info;
}

// Maps a virtual address to a file offset through the PT_LOAD segments. On
// success also returns how many file bytes the segment has from there on.
std::optional<std::pair<uint64_t, uint64_t>> vaddr_to_offset(const std::vector<Phdr>& phdrs,
                                                             uint64_t addr) {
  for (const Phdr& p : phdrs) {
    if (p.type != kPtLoad) continue;
    if (addr < p.vaddr) continue;
    const uint64_t delta = addr - p.vaddr;
    if (delta >= p.filesz) continue;
    if (p.offset > UINT64_MAX - delta) continue;
    return std::make_pair(p.offset + delta, p.filesz - delta);
  }
  return std::nullopt;
}

struct DynEntry {
  int64_t tag;
  uint64_t val;
};

struct SymTags {
  std::optional<uint64_t> symtab, syment, hash, gnu_hash, verneed, verneednum, verdef, verdefnum,
      versym;
};

// Section headers, read on first use only: when the program headers are not
// enough. Their errors matter only then.
class LazySections {
 public:
  explicit LazySections(const ElfFile& f) : f_(f) {}
  const Result<std::vector<Shdr>>& get() {
    if (!cache_) cache_.emplace(f_.sections());
    return *cache_;
  }

 private:
  const ElfFile& f_;
  std::optional<Result<std::vector<Shdr>>> cache_;
};

// What the dynamic array says, with its string table located.
struct DynTables {
  std::vector<Phdr> phdrs;
  std::vector<DynEntry> entries;  // DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH in order
  SymTags st;
  std::optional<ByteView> strtab;
  std::string strtab_problem;  // why strtab is nullopt
};

Result<void> read_symbols(const ElfFile& f, const std::vector<Phdr>& phdrs, LazySections& secs,
                          ByteView strtab, const SymTags& st, ElfInfo& info, bool with_symbols);

// nullopt: the file has no dynamic array (a static executable, an object file).
Result<std::optional<DynTables>> read_dyn_tables(const ElfFile& f, LazySections& secs) {
  auto phdrs_r = f.program_headers();
  if (!phdrs_r) return std::unexpected(phdrs_r.error());
  DynTables t;
  t.phdrs = std::move(*phdrs_r);
  const ByteView b = f.bytes();
  const uint64_t dyn_entsize = f.header().is64 ? 16 : 8;

  // Locate the dynamic array: PT_DYNAMIC first, else the SHT_DYNAMIC section.
  std::optional<ByteView> dyn;
  for (const Phdr& p : t.phdrs) {
    if (p.type != kPtDynamic) continue;
    dyn = b.sub(p.offset, p.filesz);
    if (!dyn) return f.err("dynamic segment (PT_DYNAMIC) extends past end of file");
    break;
  }
  if (!dyn) {
    const auto& s = secs.get();
    if (!s) return std::unexpected(s.error());
    for (const Shdr& sh : *s) {
      if (sh.type != kShtDynamic) continue;
      dyn = b.sub(sh.offset, sh.size);
      if (!dyn) return f.err("dynamic section (.dynamic) extends past end of file");
      break;
    }
  }
  if (!dyn) return std::optional<DynTables>();

  const Reader r(*dyn, f.header().is64, f.header().big);
  std::optional<uint64_t> strtab_addr;
  std::optional<uint64_t> strsz;
  SymTags& st = t.st;
  const uint64_t count = std::min<uint64_t>(dyn->size() / dyn_entsize, kMaxDynamicEntries);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t o = i * dyn_entsize;
    const int64_t tag = r.sword(o);
    const uint64_t val = r.word(o + dyn_entsize / 2);
    if (tag == kDtNull) break;
    switch (tag) {
      case kDtStrtab: strtab_addr = val; break;
      case kDtStrsz: strsz = val; break;
      case kDtSymtab: st.symtab = val; break;
      case kDtSyment: st.syment = val; break;
      case kDtHash: st.hash = val; break;
      case kDtGnuHash: st.gnu_hash = val; break;
      case kDtVerneed: st.verneed = val; break;
      case kDtVerneednum: st.verneednum = val; break;
      case kDtVerdef: st.verdef = val; break;
      case kDtVerdefnum: st.verdefnum = val; break;
      case kDtVersym: st.versym = val; break;
      case kDtNeeded:
      case kDtSoname:
      case kDtRpath:
      case kDtRunpath: t.entries.push_back({tag, val}); break;
      default: break;
    }
  }

  // Locate the string table: DT_STRTAB mapped through PT_LOAD, else .dynstr.
  if (strtab_addr) {
    if (auto m = vaddr_to_offset(t.phdrs, *strtab_addr)) {
      uint64_t size = m->second;  // to the end of the segment's file bytes
      if (strsz) size = *strsz;
      t.strtab = b.sub(m->first, size);
      if (!t.strtab) {
        t.strtab_problem = fmt::format(
            "dynamic string table (DT_STRTAB 0x{:x}, DT_STRSZ {}) extends past end of file",
            *strtab_addr, size);
      }
    } else {
      t.strtab_problem =
          fmt::format("DT_STRTAB address 0x{:x} is not inside any PT_LOAD segment", *strtab_addr);
    }
  } else {
    t.strtab_problem = "dynamic section has no DT_STRTAB";
  }
  if (!t.strtab) {
    const auto& s = secs.get();
    if (s) {
      // The SHT_DYNAMIC section's sh_link names its string table; else ".dynstr".
      std::optional<uint64_t> idx;
      for (const Shdr& sh : *s) {
        if (sh.type == kShtDynamic && sh.link != 0 && sh.link < s->size()) {
          idx = sh.link;
          break;
        }
      }
      if (!idx) {
        auto names = f.section_names(*s);
        for (size_t i = 0; i < s->size(); ++i) {
          if (names[i] == ".dynstr") {
            idx = i;
            break;
          }
        }
      }
      if (idx) {
        const Shdr& sh = (*s)[*idx];
        if (sh.type == kShtStrtab) t.strtab = b.sub(sh.offset, sh.size);
      }
    }
  }
  return std::optional<DynTables>(std::move(t));
}

Result<ElfInfo> read_dynamic(const ElfFile& f, ElfInfo info, const ElfParseOptions& options) {
  LazySections secs(f);
  auto tables = read_dyn_tables(f, secs);
  if (!tables) return std::unexpected(tables.error());
  if (!*tables) return info;  // static executable, object file, ...
  info.has_dynamic = true;
  const DynTables& t = **tables;
  const bool with_tables = options.symbols || options.versions;
  if (t.entries.empty() && !with_tables) return info;
  if (!t.strtab) {
    if (t.entries.empty()) return info;
    return f.err(t.strtab_problem);
  }
  const ByteView strtab = *t.strtab;

  size_t total = 0;
  for (const DynEntry& d : t.entries) {
    auto str = strtab.cstring(d.val, kMaxDynString);
    if (!str) {
      const char* what = d.tag == kDtNeeded   ? "DT_NEEDED"
                         : d.tag == kDtSoname ? "DT_SONAME"
                         : d.tag == kDtRpath  ? "DT_RPATH"
                                              : "DT_RUNPATH";
      return f.err(fmt::format(
          "{} string offset {} is outside the dynamic string table or not NUL-terminated", what,
          d.val));
    }
    total += str->size();
    if (total > kMaxDynStringTotal) {
      return f.err(fmt::format("dynamic section strings exceed {} bytes", kMaxDynStringTotal));
    }
    switch (d.tag) {
      case kDtNeeded: info.needed.emplace_back(*str); break;
      case kDtSoname: info.soname = std::string(*str); break;
      case kDtRpath: info.rpath = std::string(*str); break;
      case kDtRunpath: info.runpath = std::string(*str); break;
      default: break;
    }
  }
  if (with_tables) {
    auto sr = read_symbols(f, t.phdrs, secs, strtab, t.st, info, options.symbols);
    if (!sr) return std::unexpected(sr.error());
    info.symbols_read = options.symbols;
  }
  return info;
}

// A table at a virtual address: mapped through PT_LOAD, `need` bytes checked.
std::optional<ByteView> at_vaddr(const ElfFile& f, const std::vector<Phdr>& phdrs, uint64_t addr) {
  auto m = vaddr_to_offset(phdrs, addr);
  if (!m) return std::nullopt;
  return f.bytes().sub(m->first, m->second);
}

// Number of .dynsym entries from DT_GNU_HASH: the highest symbol index any
// bucket chain reaches, plus one.
Result<uint64_t> gnu_hash_count(const ElfFile& f, ByteView h) {
  const Reader r(h, f.header().is64, f.header().big);
  if (h.size() < 16) return f.err("DT_GNU_HASH table truncated");
  const uint64_t nbuckets = r.u32(0), symoffset = r.u32(4), bloom = r.u32(8);
  const uint64_t word = f.header().is64 ? 8 : 4;
  if (nbuckets > kMaxSymbols || bloom > kMaxSymbols) {
    return f.err("DT_GNU_HASH table has an absurd bucket or bloom count");
  }
  const uint64_t buckets_off = 16 + bloom * word;
  if (!h.in_bounds(buckets_off, nbuckets * 4)) return f.err("DT_GNU_HASH buckets past end of file");
  uint64_t max_index = 0;
  for (uint64_t i = 0; i < nbuckets; ++i)
    max_index = std::max<uint64_t>(max_index, r.u32(buckets_off + i * 4));
  if (max_index == 0) return symoffset;  // no hashed symbols
  if (max_index < symoffset) return f.err("DT_GNU_HASH bucket points below symoffset");
  const uint64_t chains_off = buckets_off + nbuckets * 4;
  for (uint64_t idx = max_index; idx - max_index < kMaxSymbols; ++idx) {
    const uint64_t o = chains_off + (idx - symoffset) * 4;
    if (!h.in_bounds(o, 4)) return f.err("DT_GNU_HASH chain runs past end of file");
    if (r.u32(o) & 1) return idx + 1;
  }
  return f.err("DT_GNU_HASH chain does not terminate");
}

// One Elf32_Sym / Elf64_Sym entry's fields (the layouts order them differently).
struct SymEntry {
  uint32_t name = 0;
  uint8_t bind = 0, type = 0;
  uint16_t shndx = 0;
  bool global() const { return bind == 1 || bind == 2 || bind == 10; }  // GLOBAL, WEAK, UNIQUE
  bool defined() const { return shndx != 0; }
};

SymEntry sym_entry(const Reader& r, bool is64, uint64_t o) {
  const uint8_t info = is64 ? r.u8(o + 4) : r.u8(o + 12);
  return {r.u32(o), static_cast<uint8_t>(info >> 4), static_cast<uint8_t>(info & 0xf),
          is64 ? r.u16(o + 6) : r.u16(o + 14)};
}

// Symbol i's name from the string table, counted against kMaxSymbolBytesTotal.
Result<std::string_view> symbol_name(const ElfFile& f, ByteView strtab, uint64_t i, uint32_t offset,
                                     uint64_t& name_bytes) {
  auto n = strtab.cstring(offset, kMaxDynString);
  if (!n) {
    return f.err(
        fmt::format("dynamic symbol {} name offset {} is outside the string table", i, offset));
  }
  name_bytes += n->size();
  if (name_bytes > kMaxSymbolBytesTotal) {
    return f.err(fmt::format("dynamic symbol names exceed {} bytes in all", kMaxSymbolBytesTotal));
  }
  return *n;
}

// Where .dynsym is and how many entries it has.
struct DynsymLocation {
  ByteView table;
  uint64_t count = 0;
  uint64_t entsize = 0;
};

// The SHT_DYNSYM section when present, else DT_SYMTAB with its count from DT_HASH,
// else from DT_GNU_HASH. nullopt: the file has no dynamic symbol table.
Result<std::optional<DynsymLocation>> locate_dynsym(const ElfFile& f,
                                                    const std::vector<Phdr>& phdrs,
                                                    LazySections& secs, const SymTags& st) {
  const bool is64 = f.header().is64;
  const uint64_t entsize_min = is64 ? 24 : 16;
  std::optional<ByteView> table;
  const uint64_t entsize = st.syment.value_or(entsize_min);
  std::optional<uint64_t> count;
  if (const auto& s = secs.get(); s) {
    for (const Shdr& sh : *s) {
      if (sh.type != kShtDynsym) continue;
      table = f.bytes().sub(sh.offset, sh.size);
      if (!table) return f.err("dynamic symbol table (.dynsym) extends past end of file");
      count = sh.size / std::max<uint64_t>(entsize, 1);
      break;
    }
  }
  if (!table && st.symtab) {
    table = at_vaddr(f, phdrs, *st.symtab);
    if (!table) {
      return f.err(
          fmt::format("DT_SYMTAB address 0x{:x} is not inside any PT_LOAD segment", *st.symtab));
    }
    if (st.hash) {
      auto h = at_vaddr(f, phdrs, *st.hash);
      if (!h || h->size() < 8) return f.err("DT_HASH table is outside the file");
      count = Reader(*h, is64, f.header().big).u32(4);  // nchain
    } else if (st.gnu_hash) {
      auto h = at_vaddr(f, phdrs, *st.gnu_hash);
      if (!h) return f.err("DT_GNU_HASH table is outside the file");
      auto c = gnu_hash_count(f, *h);
      if (!c) return std::unexpected(c.error());
      count = *c;
    } else {
      return f.err(
          "DT_SYMTAB without DT_HASH, DT_GNU_HASH or a .dynsym section: symbol count unknown");
    }
  }
  if (!table || !count) return std::optional<DynsymLocation>();
  if (entsize < entsize_min) {
    return f.err(
        fmt::format("dynamic symbol entry size {} is smaller than {}", entsize, entsize_min));
  }
  if (*count > kMaxSymbols) return f.err(fmt::format("too many dynamic symbols ({})", *count));
  if (!table->in_bounds(0, *count * entsize)) {
    return f.err(fmt::format("dynamic symbol table ({} entries) extends past end of file", *count));
  }
  return std::optional<DynsymLocation>(DynsymLocation{*table, *count, entsize});
}

Result<void> read_symbols(const ElfFile& f, const std::vector<Phdr>& phdrs, LazySections& secs,
                          ByteView strtab, const SymTags& st, ElfInfo& info, bool with_symbols) {
  const bool is64 = f.header().is64;
  std::vector<uint16_t> symbol_versions;  // DT_VERSYM index, parallel to dynamic_symbols
  uint64_t name_bytes = 0;                // symbol names and their versions, in all
  std::optional<DynsymLocation> loc;
  if (with_symbols) {
    auto l = locate_dynsym(f, phdrs, secs, st);
    if (!l) return std::unexpected(l.error());
    loc = *l;
  }
  if (loc) {
    const uint64_t count = loc->count, entsize = loc->entsize;
    const Reader r(loc->table, is64, f.header().big);
    // DT_VERSYM: one uint16 version index per .dynsym entry.
    std::optional<ByteView> versym;
    if (st.versym) {
      versym = at_vaddr(f, phdrs, *st.versym);
      if (!versym) return f.err("DT_VERSYM table is outside the file");
      if (!versym->in_bounds(0, count * 2)) {
        return f.err(fmt::format("DT_VERSYM table is shorter than the {} dynamic symbols", count));
      }
    }
    const Reader vr(versym.value_or(ByteView()), is64, f.header().big);
    info.dynamic_symbols.reserve(static_cast<size_t>(count));
    symbol_versions.reserve(static_cast<size_t>(count));
    for (uint64_t i = 1; i < count; ++i) {
      const SymEntry e = sym_entry(r, is64, i * entsize);
      if (!e.global()) continue;
      auto n = symbol_name(f, strtab, i, e.name, name_bytes);
      if (!n) return std::unexpected(n.error());
      if (n->empty()) continue;
      info.dynamic_symbols.push_back(ElfSymbol{
          std::string(*n), e.defined(), e.bind == 2, e.type == 2 || e.type == 10, {}, {}, false});
      symbol_versions.push_back(versym ? vr.u16(i * 2) : 0);
    }
  }
  // Version index (vna_other / vd_ndx) -> name and, for needs, the file.
  std::unordered_map<uint16_t, std::pair<std::string, std::string>> by_index;
  uint64_t version_names = 0;
  auto too_many_versions = [&]() { return ++version_names > kMaxVersionNamesTotal; };
  // DT_VERNEED: Elf_Verneed {vn_version u16, vn_cnt u16, vn_file u32, vn_aux u32, vn_next u32}
  // and Elf_Vernaux {hash u32, flags u16, other u16, name u32, next u32}; same in both classes.
  if (st.verneed) {
    auto v = at_vaddr(f, phdrs, *st.verneed);
    if (!v) return f.err("DT_VERNEED table is outside the file");
    const Reader r(*v, is64, f.header().big);
    uint64_t off = 0;
    const uint64_t n =
        std::min<uint64_t>(st.verneednum.value_or(kMaxVersionEntries), kMaxVersionEntries);
    for (uint64_t i = 0; i < n; ++i) {
      if (!v->in_bounds(off, 16)) return f.err("DT_VERNEED entry extends past end of file");
      auto file = strtab.cstring(r.u32(off + 4), kMaxDynString);
      if (!file) return f.err("DT_VERNEED file name is outside the string table");
      ElfVersionNeed need{std::string(*file), {}};
      uint64_t aux = off + r.u32(off + 8);
      const uint64_t cnt = std::min<uint64_t>(r.u16(off + 2), kMaxVersionEntries);
      for (uint64_t j = 0; j < cnt; ++j) {
        if (!v->in_bounds(aux, 16))
          return f.err("DT_VERNEED auxiliary entry extends past end of file");
        auto vn = strtab.cstring(r.u32(aux + 8), kMaxDynString);
        if (!vn) return f.err("DT_VERNEED version name is outside the string table");
        if (too_many_versions()) {
          return f.err(fmt::format("DT_VERNEED/DT_VERDEF list more than {} version names",
                                   kMaxVersionNamesTotal));
        }
        need.versions.emplace_back(*vn);
        by_index.try_emplace(r.u16(aux + 6), std::string(*vn), need.file);
        const uint32_t next = r.u32(aux + 12);
        if (next == 0) break;
        aux += next;
      }
      info.version_needs.push_back(std::move(need));
      const uint32_t next = r.u32(off + 12);
      if (next == 0) break;
      off += next;
    }
  }
  // DT_VERDEF: Elf_Verdef {version u16, flags u16, ndx u16, cnt u16, hash u32, aux u32, next u32},
  // Elf_Verdaux {name u32, next u32}. The first aux entry is the version's name.
  if (st.verdef) {
    auto v = at_vaddr(f, phdrs, *st.verdef);
    if (!v) return f.err("DT_VERDEF table is outside the file");
    const Reader r(*v, is64, f.header().big);
    uint64_t off = 0;
    const uint64_t n =
        std::min<uint64_t>(st.verdefnum.value_or(kMaxVersionEntries), kMaxVersionEntries);
    for (uint64_t i = 0; i < n; ++i) {
      if (!v->in_bounds(off, 20)) return f.err("DT_VERDEF entry extends past end of file");
      if (r.u16(off + 6) > 0) {
        const uint64_t aux = off + r.u32(off + 12);
        if (!v->in_bounds(aux, 8))
          return f.err("DT_VERDEF auxiliary entry extends past end of file");
        auto vn = strtab.cstring(r.u32(aux), kMaxDynString);
        if (!vn) return f.err("DT_VERDEF version name is outside the string table");
        if (too_many_versions()) {
          return f.err(fmt::format("DT_VERNEED/DT_VERDEF list more than {} version names",
                                   kMaxVersionNamesTotal));
        }
        info.version_defs.emplace_back(*vn);
        by_index.try_emplace(r.u16(off + 4), std::string(*vn), std::string());
      }
      const uint32_t next = r.u32(off + 16);
      if (next == 0) break;
      off += next;
    }
  }
  // Indexes 0 (local) and 1 (global) carry no name; an index no table defines
  // (a corrupt or stripped table) leaves the symbol unversioned.
  for (size_t i = 0; i < symbol_versions.size(); ++i) {
    const uint16_t idx = symbol_versions[i] & 0x7fff;
    if (idx < 2) continue;
    auto it = by_index.find(idx);
    if (it == by_index.end()) continue;
    ElfSymbol& sym = info.dynamic_symbols[i];
    name_bytes += it->second.first.size() + (sym.defined ? 0 : it->second.second.size());
    if (name_bytes > kMaxSymbolBytesTotal) {
      return f.err(
          fmt::format("dynamic symbol names exceed {} bytes in all", kMaxSymbolBytesTotal));
    }
    sym.version = it->second.first;
    sym.version_file = sym.defined ? std::string() : it->second.second;
    sym.version_hidden = (symbol_versions[i] & 0x8000) != 0;
  }
  return {};
}

}  // namespace

// ---- ElfSymbolTable ------------------------------------------------------------------

Result<std::optional<ElfSymbolTable>> ElfSymbolTable::read(ByteView bytes,
                                                           const std::string& name) {
  return read(bytes, name, {});
}

Result<std::optional<ElfSymbolTable>> ElfSymbolTable::read(
    ByteView bytes, const std::string& name, const std::function<void(ByteView)>& prefetch) {
  auto f = open_elf(bytes, name);
  if (!f) return std::unexpected(f.error());
  if (!*f) return std::optional<ElfSymbolTable>();
  const ElfFile& file = **f;
  LazySections secs(file);
  auto tables = read_dyn_tables(file, secs);
  if (!tables) return std::unexpected(tables.error());
  if (!*tables || !(*tables)->strtab) return std::optional<ElfSymbolTable>();
  const DynTables& t = **tables;
  auto loc = locate_dynsym(file, t.phdrs, secs, t.st);
  if (!loc) return std::unexpected(loc.error());
  if (!*loc) return std::optional<ElfSymbolTable>();

  ElfSymbolTable s;
  s.table_ = (*loc)->table;
  s.strtab_ = *t.strtab;
  s.count_ = (*loc)->count;
  s.entsize_ = (*loc)->entsize;
  s.is64_ = file.header().is64;
  s.big_ = file.header().big;
  if (prefetch) {
    prefetch(s.table_);
    prefetch(s.strtab_);
  }
  const Reader r(s.table_, s.is64_, s.big_);
  uint64_t name_bytes = 0;
  for (uint64_t i = 1; i < s.count_; ++i) {
    const SymEntry e = sym_entry(r, s.is64_, i * s.entsize_);
    if (e.defined() || !e.global()) continue;  // exports: looked up through the hash table
    auto n = symbol_name(file, s.strtab_, i, e.name, name_bytes);
    if (!n) return std::unexpected(n.error());
    if (n->empty()) continue;
    s.imports_.push_back(Import{*n, e.bind == 2});
  }

  // The hash tables. One that does not fit the file is not used (lookups then go
  // through a linear index): ld.so would fail on it, but its names are still
  // worth reporting.
  const uint64_t word = s.is64_ ? 8 : 4;
  if (t.st.gnu_hash) {
    if (auto h = at_vaddr(file, t.phdrs, *t.st.gnu_hash); h && h->size() >= 16) {
      const Reader hr(*h, s.is64_, s.big_);
      const uint32_t nbuckets = hr.u32(0), symoffset = hr.u32(4), bloom = hr.u32(8),
                     shift = hr.u32(12);
      const uint64_t buckets_off = 16 + uint64_t{bloom} * word;
      const uint64_t chains_off = buckets_off + uint64_t{nbuckets} * 4;
      if (nbuckets > 0 && bloom > 0 && nbuckets <= kMaxSymbols && bloom <= kMaxSymbols &&
          symoffset <= s.count_ && h->in_bounds(16, uint64_t{bloom} * word) &&
          h->in_bounds(buckets_off, uint64_t{nbuckets} * 4)) {
        s.gnu_bloom_ = *h->sub(16, uint64_t{bloom} * word);
        s.gnu_buckets_ = *h->sub(buckets_off, uint64_t{nbuckets} * 4);
        // Chains: as far as the file goes, at most one per hashed symbol.
        const uint64_t avail = h->size() - std::min<uint64_t>(h->size(), chains_off);
        const uint64_t chains = std::min<uint64_t>(avail / 4, s.count_ - symoffset);
        s.gnu_chains_ = h->sub(chains_off, chains * 4).value_or(ByteView());
        s.gnu_nbuckets_ = nbuckets;
        s.gnu_symoffset_ = symoffset;
        s.gnu_bloom_words_ = bloom;
        s.gnu_shift_ = shift;
        if (prefetch) {
          prefetch(s.gnu_bloom_);
          prefetch(s.gnu_buckets_);
          prefetch(s.gnu_chains_);
        }
      }
    }
  }
  if (s.gnu_nbuckets_ == 0 && t.st.hash) {
    if (auto h = at_vaddr(file, t.phdrs, *t.st.hash); h && h->size() >= 8) {
      const Reader hr(*h, s.is64_, s.big_);
      const uint32_t nbucket = hr.u32(0), nchain = hr.u32(4);
      if (nbucket > 0 && nbucket <= kMaxSymbols && nchain <= kMaxSymbols &&
          h->in_bounds(8, (uint64_t{nbucket} + nchain) * 4)) {
        s.sysv_buckets_ = *h->sub(8, uint64_t{nbucket} * 4);
        s.sysv_chains_ = *h->sub(8 + uint64_t{nbucket} * 4, uint64_t{nchain} * 4);
        s.sysv_nbucket_ = nbucket;
        s.sysv_nchain_ = nchain;
      }
    }
  }
  if (s.gnu_nbuckets_ == 0 && s.sysv_nbucket_ == 0) {
    // No usable hash table: a linear index, built now so that lookups are
    // read-only (they run on several threads).
    s.linear_.emplace();
    for (uint64_t i = 1; i < s.count_; ++i) {
      const SymEntry e = sym_entry(r, s.is64_, i * s.entsize_);
      if (!e.defined() || !e.global()) continue;
      if (auto n = s.strtab_.cstring(e.name, kMaxDynString); n && !n->empty()) {
        s.linear_->insert(*n);
      }
    }
  }
  return std::optional<ElfSymbolTable>(std::move(s));
}

std::string_view ElfSymbolTable::lookup_method() const {
  if (gnu_nbuckets_ > 0) return "gnu";
  if (sysv_nbucket_ > 0) return "sysv";
  return "none";
}

bool ElfSymbolTable::defined_at(uint64_t index, std::string_view name) const {
  if (index == 0 || index >= count_) return false;
  const SymEntry e = sym_entry(Reader(table_, is64_, big_), is64_, index * entsize_);
  if (!e.defined() || !e.global()) return false;
  auto n = strtab_.cstring(e.name, kMaxDynString);
  return n && *n == name;
}

uint32_t ElfSymbolTable::gnu_hash(std::string_view name) {
  uint32_t h = 5381;  // dl_new_hash
  for (unsigned char c : name) h = h * 33 + c;
  return h;
}

bool ElfSymbolTable::gnu_lookup(std::string_view name, uint32_t h) const {
  const Reader br(gnu_bloom_, is64_, big_);
  const uint32_t bits = is64_ ? 64 : 32;
  const uint64_t w = (h / bits) % gnu_bloom_words_;
  const uint64_t bword = is64_ ? br.u64(w * 8) : br.u32(w * 4);
  const uint64_t mask = (uint64_t{1} << (h % bits)) |
                        (uint64_t{1} << ((gnu_shift_ < 32 ? h >> gnu_shift_ : 0) % bits));
  if ((bword & mask) != mask) return false;
  const Reader r(gnu_buckets_, is64_, big_);
  uint64_t idx = r.u32((h % gnu_nbuckets_) * 4);
  if (idx < gnu_symoffset_ || idx == 0) return false;
  const Reader cr(gnu_chains_, is64_, big_);
  for (; idx < count_; ++idx) {
    const uint64_t c = idx - gnu_symoffset_;
    if (!gnu_chains_.in_bounds(c * 4, 4)) return false;
    const uint32_t ch = cr.u32(c * 4);
    if ((ch | 1u) == (h | 1u) && defined_at(idx, name)) return true;
    if (ch & 1u) return false;
  }
  return false;
}

bool ElfSymbolTable::sysv_lookup(std::string_view name) const {
  uint32_t h = 0;  // the SysV ELF hash
  for (unsigned char c : name) {
    h = (h << 4) + c;
    const uint32_t g = h & 0xf0000000u;
    if (g != 0) h ^= g >> 24;
    h &= ~g;
  }
  const Reader br(sysv_buckets_, is64_, big_);
  const Reader cr(sysv_chains_, is64_, big_);
  uint64_t idx = br.u32((h % sysv_nbucket_) * 4);
  // A chain visits each symbol once at most; a longer one is a loop.
  for (uint64_t steps = 0; idx != 0 && idx < sysv_nchain_ && steps < sysv_nchain_; ++steps) {
    if (defined_at(idx, name)) return true;
    idx = cr.u32(idx * 4);
  }
  return false;
}

bool ElfSymbolTable::defines(std::string_view name) const {
  return defines(name, gnu_nbuckets_ > 0 ? gnu_hash(name) : 0);
}

bool ElfSymbolTable::defines(std::string_view name, uint32_t hash) const {
  if (name.empty()) return false;
  if (gnu_nbuckets_ > 0) return gnu_lookup(name, hash);
  if (sysv_nbucket_ > 0) return sysv_lookup(name);
  if (!linear_) return false;
  return linear_->count(name) > 0;
}

namespace {

struct Region {
  uint64_t offset;
  uint64_t size;
};

// The read-only data regions of the file, sorted by offset and merged.
std::vector<Region> readonly_regions(const ElfFile& f) {
  std::vector<Region> regions;
  const ByteView b = f.bytes();
  auto add = [&](uint64_t off, uint64_t size) {
    if (size == 0 || off >= b.size()) return;
    size = std::min<uint64_t>(size, b.size() - off);  // tolerate truncated files
    regions.push_back({off, size});
  };
  if (auto secs = f.sections(); secs && !secs->empty()) {
    auto names = f.section_names(*secs);
    for (size_t i = 0; i < secs->size(); ++i) {
      const Shdr& s = (*secs)[i];
      if (s.type == kShtNobits) continue;
      const std::string_view n = names[i];
      // Not .lrodata: GCC and Clang put only objects larger than
      // -mlarge-data-threshold (64 KiB by default) there, never a string literal,
      // and cuDNN 9.19's heuristic library has 47 MB of tables in it.
      if (n == ".rodata" || n.starts_with(".rodata.") || n == ".dynstr") {
        add(s.offset, s.size);
      }
    }
  }
  if (regions.empty()) {
    if (auto phdrs = f.program_headers()) {
      for (const Phdr& p : *phdrs) {
        if (p.type == kPtLoad && (p.flags & (kPfX | kPfW)) == 0) add(p.offset, p.filesz);
      }
    }
  }
  std::sort(regions.begin(), regions.end(),
            [](const Region& a, const Region& c) { return a.offset < c.offset; });
  std::vector<Region> merged;
  for (const Region& r : regions) {
    if (!merged.empty() && r.offset <= merged.back().offset + merged.back().size) {
      Region& m = merged.back();
      m.size = std::max(m.size, r.offset + r.size - m.offset);
    } else {
      merged.push_back(r);
    }
  }
  return merged;
}

// First occurrence of `needle` in [data, data + size), or nullptr. glibc's memmem
// is about 4x faster than Boyer-Moore-Horspool on cuDNN's read-only data (3 vs
// 13 ms for 49 MB, measured on the build machine); elsewhere (Windows) BMH.
const void* memmem_portable(const char* data, size_t size, const std::string& needle) {
#if defined(__GLIBC__)
  return memmem(data, size, needle.data(), needle.size());
#else
  const char* end = data + size;
  const char* hit =
      std::search(data, end, std::boyer_moore_horspool_searcher(needle.begin(), needle.end()));
  return hit == end ? nullptr : hit;
#endif
}

bool printable(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u < 0x7f;
  });
}

}  // namespace

std::string elf_machine_name(uint16_t machine) {
  switch (machine) {
    case 0: return "none";
    case 2: return "sparc";
    case 3: return "i386";
    case 8: return "mips";
    case 20: return "ppc";
    case 21: return "ppc64";
    case 22: return "s390";
    case 40: return "arm";
    case 43: return "sparcv9";
    case 50: return "ia64";
    case 62: return "x86-64";
    case 183: return "aarch64";
    case 243: return "riscv";
    case 247: return "bpf";
    case 258: return "loongarch";
    default: return fmt::format("machine 0x{:02x}", machine);
  }
}

Result<std::optional<ElfInfo>> parse_elf(ByteView bytes, const std::string& name) {
  return parse_elf(bytes, name, ElfParseOptions{});
}

Result<std::optional<ElfInfo>> parse_elf(ByteView bytes, const std::string& name,
                                         const ElfParseOptions& options) {
  auto f = open_elf(bytes, name);
  if (!f) return std::unexpected(f.error());
  if (!*f) return std::optional<ElfInfo>();
  auto full = read_dynamic(**f, header_info((*f)->header()), options);
  if (!full) return std::unexpected(full.error());
  return std::optional<ElfInfo>(std::move(*full));
}

std::optional<std::string> elf_load_problem(ByteView file) {
  auto f = open_elf(file, "");
  if (f && !*f) return std::nullopt;  // not ELF: the loader refuses it without mapping anything
  const uint64_t size = file.size();
  if (!f) {
    const bool is64 = size > 4 && file.data()[4] == 2;
    const uint64_t ehsize = is64 ? 64 : 52;
    if (size < ehsize) {
      return fmt::format("the file is truncated ({} of {} bytes of its ELF header)", size, ehsize);
    }
    std::string why = f.error().message;
    if (why.starts_with(": ")) why = why.substr(2);
    return fmt::format("its ELF header is corrupt ({})", why);
  }
  const Header& h = (*f)->header();
  const uint64_t entsize = h.is64 ? 56 : 32;
  if (h.phnum == 0 || h.phoff == 0) return "it has no program headers: nothing can be loaded";
  if (h.phentsize < entsize) {
    return fmt::format("its program header entry size {} is smaller than {}", h.phentsize, entsize);
  }
  const uint64_t ph_bytes = uint64_t{h.phnum} * h.phentsize;
  // Every "truncated" text counts the same way: the file's size of the bytes it needs.
  if (h.phoff > UINT64_MAX - ph_bytes) {
    return fmt::format("its program headers have an impossible offset {:#x}", h.phoff);
  }
  if (h.phoff + ph_bytes > size) {
    return fmt::format("the file is truncated ({} of {} bytes: its program headers end at byte {})",
                       size, h.phoff + ph_bytes, h.phoff + ph_bytes);
  }
  auto phdrs = (*f)->program_headers();
  if (!phdrs) return "its program headers are corrupt (" + phdrs.error().message.substr(2) + ")";
  size_t loads = 0;
  for (size_t i = 0; i < phdrs->size(); ++i) {
    const Phdr& p = (*phdrs)[i];
    if (p.type != kPtLoad && p.type != kPtDynamic) continue;
    loads += p.type == kPtLoad;
    const char* what = p.type == kPtLoad ? "loadable segment" : "dynamic section";
    if (p.offset > UINT64_MAX - p.filesz) {
      return fmt::format("its {} (program header {}) has an impossible offset {:#x} + size {:#x}",
                         what, i, p.offset, p.filesz);
    }
    const uint64_t end = p.offset + p.filesz;
    if (end > size) {
      return fmt::format(
          "the file is truncated ({} of {} bytes: its {} (program header {}) "
          "ends at byte {})",
          size, end, what, i, end);
    }
  }
  if (loads == 0) return "it has no loadable segment (PT_LOAD)";
  auto dynamic = read_dynamic(**f, header_info(h), ElfParseOptions{});
  if (!dynamic) return "its dynamic section is corrupt (" + dynamic.error().message.substr(2) + ")";
  return std::nullopt;
}

Result<std::optional<ElfInfo>> parse_elf_header(ByteView bytes, const std::string& name) {
  auto f = open_elf(bytes, name);
  if (!f) return std::unexpected(f.error());
  if (!*f) return std::optional<ElfInfo>();
  return std::optional<ElfInfo>(header_info((*f)->header()));
}

std::vector<std::string> elf_find_strings(ByteView bytes, const std::string& prefix,
                                          size_t max_results) {
  return std::move(elf_find_strings(bytes, std::vector<std::string>{prefix}, max_results)[0]);
}

std::vector<std::vector<std::string>> elf_find_strings(ByteView bytes,
                                                       const std::vector<std::string>& prefixes,
                                                       size_t max_results, ElfSpan span) {
  std::vector<std::vector<std::string>> out(prefixes.size());
  if (max_results == 0) return out;
  auto f = open_elf(bytes, "");
  if (!f || !*f) return out;
  const auto regions = readonly_regions(**f);
  for (size_t k = 0; k < prefixes.size(); ++k) {
    const std::string& prefix = prefixes[k];
    if (prefix.empty()) continue;
    std::unordered_set<std::string_view> seen;
    for (const Region& r : regions) {
      const char* base = reinterpret_cast<const char*>(bytes.data() + r.offset);
      const size_t size = static_cast<size_t>(r.size);
      // Strings starting in [first, last) of this region; a match needs its whole
      // prefix, so the search stops prefix.size() - 1 bytes past `last`.
      const uint64_t first = span.begin > r.offset ? span.begin - r.offset : 0;
      const uint64_t last = span.end >= r.offset + r.size ? r.size
                            : span.end > r.offset         ? span.end - r.offset
                                                          : 0;
      if (first >= last) continue;
      const size_t stop = static_cast<size_t>(std::min<uint64_t>(size, last + prefix.size() - 1));
      size_t pos = static_cast<size_t>(first);
      // Position of the first NUL at or after the last hit, so that each byte is
      // scanned for a NUL at most once however many hits share a string.
      size_t nul = 0;
      bool nul_valid = false;
      while (pos < stop) {
        const void* hit = memmem_portable(base + pos, stop - pos, prefix);
        if (!hit) break;
        const size_t start = static_cast<size_t>(static_cast<const char*>(hit) - base);
        if (!nul_valid || nul < start) {
          const void* p = std::memchr(base + start, 0, size - start);
          if (!p) break;  // no terminator in the rest of the region
          nul = static_cast<size_t>(static_cast<const char*>(p) - base);
          nul_valid = true;
        }
        const std::string_view s(base + start, nul - start);
        if (s.size() > kMaxFoundString) {
          pos = start + 1;  // too long; a match may start inside it
          continue;
        }
        pos = nul + 1;
        if (!printable(s) || !seen.insert(s).second) continue;
        out[k].emplace_back(s);
        if (out[k].size() >= max_results) break;
      }
      if (out[k].size() >= max_results) break;
    }
  }
  return out;
}

std::vector<std::pair<uint64_t, uint64_t>> elf_readonly_ranges(ByteView file) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  auto f = open_elf(file, "");
  if (!f || !*f) return out;
  for (const Region& r : readonly_regions(**f)) out.emplace_back(r.offset, r.size);
  return out;
}

}  // namespace dlenv
