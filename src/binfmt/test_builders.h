// Test-only builders for synthetic ELF images and ld.so.cache files (both byte
// orders, both ELF classes, old/new/combined cache formats). Used by the unit
// tests and by the seed-corpus writer in fuzz_replay_test.cc.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dlenv::testbuild {

class Writer {
 public:
  explicit Writer(bool big) : big_(big) {}
  std::vector<uint8_t>& bytes() { return b_; }
  size_t size() const { return b_.size(); }
  void pad_to(size_t n) {
    if (b_.size() < n) b_.resize(n, 0);
  }
  void align(size_t a) { pad_to((b_.size() + a - 1) / a * a); }
  void raw(const void* p, size_t n) {
    const auto* c = static_cast<const uint8_t*>(p);
    b_.insert(b_.end(), c, c + n);
  }
  void str(const std::string& s) { raw(s.data(), s.size()); }
  void u8(uint8_t v) { b_.push_back(v); }
  void u16(uint64_t v) { put(v, 2); }
  void u32(uint64_t v) { put(v, 4); }
  void u64(uint64_t v) { put(v, 8); }
  void word(bool is64, uint64_t v) { put(v, is64 ? 8 : 4); }
  // Overwrite at a fixed position.
  void put_at(size_t at, uint64_t v, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      const size_t shift = big_ ? 8 * (n - 1 - i) : 8 * i;
      b_.at(at + i) = static_cast<uint8_t>(v >> shift);
    }
  }

 private:
  void put(uint64_t v, size_t n) {
    const size_t at = b_.size();
    b_.resize(at + n);
    put_at(at, v, n);
  }
  bool big_;
  std::vector<uint8_t> b_;
};

struct ElfSymSpec {
  std::string name;
  bool defined = true;  // false: st_shndx = SHN_UNDEF (an import)
  bool weak = false;
  bool function = true;
  std::string version;  // a name from version_defs or version_needs (DT_VERSYM); "" = global
  bool hidden = false;  // name@VER rather than name@@VER
};

inline ElfSymSpec elf_sym(std::string name, bool defined = true, bool weak = false,
                          bool function = true, std::string version = {}, bool hidden = false) {
  return ElfSymSpec{std::move(name), defined, weak, function, std::move(version), hidden};
}

struct ElfSpec {
  bool is64 = true;
  bool big = false;
  uint16_t machine = 62;
  uint16_t type = 3;
  uint8_t os_abi = 0;
  std::vector<std::string> needed;
  std::optional<std::string> soname;
  std::optional<std::string> rpath;
  std::optional<std::string> runpath;
  std::string rodata;           // contents of a .rodata section (may hold NULs)
  bool program_headers = true;  // PT_LOAD + PT_DYNAMIC
  bool sections = true;         // .dynstr .dynamic .rodata .shstrtab
  bool strtab_mapped = true;    // false: DT_STRTAB points outside every PT_LOAD
  uint32_t load_flags = 4;      // PF_R
  // .dynsym (DT_SYMTAB/DT_SYMENT, plus a .dynsym section when `sections`),
  // counted by DT_HASH and/or DT_GNU_HASH. The null symbol is added first.
  std::vector<ElfSymSpec> symbols;
  bool sysv_hash = true;
  bool gnu_hash = true;
  // DT_VERNEED (file, version names) and DT_VERDEF (names; the first is the base).
  std::vector<std::pair<std::string, std::vector<std::string>>> version_needs;
  std::vector<std::string> version_defs;
};

struct ElfImage {
  std::vector<uint8_t> bytes;
  size_t phoff = 0;
  size_t shoff = 0;
  size_t dynoff = 0;
  size_t dynsize = 0;
  size_t dynstroff = 0;
  size_t rodataoff = 0;
  size_t dynsymoff = 0;  // 0 when there are no symbols
};

inline ElfImage build_elf(const ElfSpec& s) {
  constexpr uint64_t kBase = 0x400000;
  const bool w = s.is64;
  const size_t ehsize = w ? 64 : 52, phent = w ? 56 : 32, shent = w ? 64 : 40;
  const size_t dynent = w ? 16 : 8;
  const size_t nph = s.program_headers ? 2 : 0;

  // String table and dynamic entries.
  std::string dynstr(1, '\0');
  auto add_str = [&](const std::string& v) {
    const size_t off = dynstr.size();
    dynstr += v;
    dynstr += '\0';
    return off;
  };
  std::vector<std::pair<int64_t, uint64_t>> dyn;
  for (const auto& n : s.needed) dyn.push_back({1, add_str(n)});
  if (s.soname) dyn.push_back({14, add_str(*s.soname)});
  if (s.rpath) dyn.push_back({15, add_str(*s.rpath)});
  if (s.runpath) dyn.push_back({29, add_str(*s.runpath)});
  std::vector<size_t> sym_names, def_names;
  std::vector<std::pair<size_t, std::vector<size_t>>> need_names;
  for (const auto& y : s.symbols) sym_names.push_back(add_str(y.name));
  for (const auto& [file, versions] : s.version_needs) {
    need_names.push_back({add_str(file), {}});
    for (const auto& v : versions) need_names.back().second.push_back(add_str(v));
  }
  for (const auto& d : s.version_defs) def_names.push_back(add_str(d));
  // Version indexes: definitions 1..D (the first is the base), then needs.
  auto version_index = [&](const std::string& v) -> uint16_t {
    for (size_t i = 0; i < s.version_defs.size(); ++i)
      if (s.version_defs[i] == v) return static_cast<uint16_t>(i + 1);
    uint16_t next = static_cast<uint16_t>(std::max<size_t>(s.version_defs.size() + 1, 2));
    for (const auto& [file, versions] : s.version_needs) {
      for (const auto& n : versions) {
        if (n == v) return next;
        ++next;
      }
    }
    return 1;
  };
  uint16_t need_index = static_cast<uint16_t>(std::max<size_t>(s.version_defs.size() + 1, 2));

  ElfImage img;
  Writer o(s.big);
  o.pad_to(ehsize);
  img.phoff = o.size();
  o.pad_to(img.phoff + nph * phent);
  o.align(8);
  img.dynstroff = o.size();
  o.str(dynstr);
  o.align(8);
  // Symbol and version tables, between .dynstr and .dynamic.
  size_t dynsymoff = 0, dynsymsize = 0;
  const size_t syment = w ? 24 : 16;
  if (!s.symbols.empty()) {
    auto elf_hash = [](const std::string& n) {  // the GNU hash function (dl_new_hash)
      uint32_t h = 5381;
      for (unsigned char c : n) h = h * 33 + c;
      return h;
    };
    const size_t nsyms = s.symbols.size() + 1;
    dynsymoff = o.size();
    dynsymsize = nsyms * syment;
    o.pad_to(dynsymoff + syment);  // the null symbol
    for (size_t i = 0; i < s.symbols.size(); ++i) {
      const auto& y = s.symbols[i];
      const uint8_t info =
          static_cast<uint8_t>(((y.weak ? 2 : 1) << 4) | (y.function ? 2 : 1));  // FUNC/OBJECT
      const uint16_t shndx = y.defined ? 1 : 0;
      o.u32(sym_names[i]);
      if (w) {
        o.u8(info);
        o.u8(0);
        o.u16(shndx);
        o.u64(y.defined ? kBase + 0x10 * (i + 1) : 0);
        o.u64(y.defined ? 8 : 0);
      } else {
        o.u32(y.defined ? kBase + 0x10 * (i + 1) : 0);
        o.u32(y.defined ? 8 : 0);
        o.u8(info);
        o.u8(0);
        o.u16(shndx);
      }
    }
    o.align(8);
    dyn.push_back({6, kBase + dynsymoff});
    dyn.push_back({11, syment});
    bool versioned = false;
    for (const auto& y : s.symbols) versioned = versioned || !y.version.empty();
    if (versioned) {  // DT_VERSYM: index 0 for the null symbol, 1 (global) when unversioned
      const size_t at = o.size();
      o.u16(0);
      for (const auto& y : s.symbols) {
        const uint16_t idx = y.version.empty() ? 1 : version_index(y.version);
        o.u16(idx | (y.hidden ? 0x8000 : 0));
      }
      o.align(8);
      dyn.push_back({0x6ffffff0, kBase + at});
    }
    if (s.sysv_hash) {  // nbucket 1, nchain = nsyms; one chain through every symbol
      const size_t at = o.size();
      o.u32(1);
      o.u32(nsyms);
      o.u32(nsyms - 1);
      for (size_t i = 0; i < nsyms; ++i) o.u32(i == 0 ? 0 : i - 1);
      o.align(8);
      dyn.push_back({4, kBase + at});
    }
    if (s.gnu_hash) {  // nbuckets 1, symoffset 1, one bloom word
      const size_t at = o.size();
      o.u32(1);
      o.u32(1);
      o.u32(1);
      o.u32(6);
      o.word(w, ~uint64_t{0});
      o.u32(1);
      for (size_t i = 0; i < s.symbols.size(); ++i) {
        const uint32_t last = i + 1 == s.symbols.size() ? 1 : 0;
        o.u32((elf_hash(s.symbols[i].name) & ~1u) | last);
      }
      o.align(8);
      dyn.push_back({0x6ffffef5, kBase + at});
    }
  }
  if (!s.version_needs.empty()) {
    const size_t at = o.size();
    for (size_t i = 0; i < need_names.size(); ++i) {
      const auto& [file, versions] = need_names[i];
      const bool last = i + 1 == need_names.size();
      o.u16(1);
      o.u16(versions.size());
      o.u32(file);
      o.u32(16);
      o.u32(last ? 0 : 16 + 16 * versions.size());
      for (size_t j = 0; j < versions.size(); ++j) {
        o.u32(0);  // vna_hash
        o.u16(0);
        o.u16(need_index++);
        o.u32(versions[j]);
        o.u32(j + 1 == versions.size() ? 0 : 16);
      }
    }
    o.align(8);
    dyn.push_back({0x6ffffffe, kBase + at});
    dyn.push_back({0x6fffffff, need_names.size()});
  }
  if (!s.version_defs.empty()) {
    const size_t at = o.size();
    for (size_t i = 0; i < def_names.size(); ++i) {
      o.u16(1);
      o.u16(i == 0 ? 1 : 0);  // VER_FLG_BASE
      o.u16(i + 1);
      o.u16(1);
      o.u32(0);
      o.u32(20);
      o.u32(i + 1 == def_names.size() ? 0 : 28);
      o.u32(def_names[i]);
      o.u32(0);
    }
    o.align(8);
    dyn.push_back({0x6ffffffc, kBase + at});
    dyn.push_back({0x6ffffffd, def_names.size()});
  }
  img.dynsymoff = dynsymoff;
  img.dynoff = o.size();
  const uint64_t strtab_addr = s.strtab_mapped ? kBase + img.dynstroff : 0x7fff0000;
  dyn.push_back({5, strtab_addr});
  dyn.push_back({10, dynstr.size()});
  dyn.push_back({0, 0});
  for (const auto& [tag, val] : dyn) {
    o.word(w, static_cast<uint64_t>(tag));
    o.word(w, val);
  }
  img.dynsize = dyn.size() * dynent;
  img.rodataoff = o.size();
  o.str(s.rodata);
  const bool dynsym_sec = !s.symbols.empty();
  const std::string shstr =
      std::string("\0.dynstr\0.dynamic\0.rodata\0.shstrtab\0", 36) + (dynsym_sec ? ".dynsym" : "");
  const size_t shstroff = o.size();
  o.str(shstr);
  if (dynsym_sec) o.u8(0);
  o.align(8);
  const size_t nsh = s.sections ? (dynsym_sec ? 6 : 5) : 0;
  img.shoff = s.sections ? o.size() : 0;
  if (s.sections) {
    auto sh = [&](uint32_t name, uint32_t type, uint64_t off, uint64_t size, uint32_t link) {
      o.u32(name);
      o.u32(type);
      o.word(w, 2);                            // flags: SHF_ALLOC
      o.word(w, type == 0 ? 0 : kBase + off);  // addr
      o.word(w, off);
      o.word(w, size);
      o.u32(link);
      o.u32(0);
      o.word(w, 1);
      o.word(w, type == 6 ? dynent : type == 11 ? syment : 0);
    };
    sh(0, 0, 0, 0, 0);
    sh(1, 3, img.dynstroff, dynstr.size(), 0);  // .dynstr
    sh(9, 6, img.dynoff, img.dynsize, 1);       // .dynamic -> .dynstr
    sh(18, 1, img.rodataoff, s.rodata.size(), 0);
    sh(26, 3, shstroff, shstr.size() + (dynsym_sec ? 1 : 0), 0);
    if (dynsym_sec) sh(36, 11, dynsymoff, dynsymsize, 1);  // .dynsym -> .dynstr
  }
  const size_t total = o.size();

  // ELF header.
  std::vector<uint8_t>& b = o.bytes();
  const uint8_t ident[16] = {
      0x7f, 'E',     'L', 'F', static_cast<uint8_t>(w ? 2 : 1), static_cast<uint8_t>(s.big ? 2 : 1),
      1,    s.os_abi};
  std::memcpy(b.data(), ident, 16);
  o.put_at(16, s.type, 2);
  o.put_at(18, s.machine, 2);
  o.put_at(20, 1, 4);
  if (w) {
    o.put_at(32, nph ? img.phoff : 0, 8);
    o.put_at(40, img.shoff, 8);
    o.put_at(52, ehsize, 2);
    o.put_at(54, phent, 2);
    o.put_at(56, nph, 2);
    o.put_at(58, shent, 2);
    o.put_at(60, nsh, 2);
    o.put_at(62, nsh ? 4 : 0, 2);
  } else {
    o.put_at(28, nph ? img.phoff : 0, 4);
    o.put_at(32, img.shoff, 4);
    o.put_at(40, ehsize, 2);
    o.put_at(42, phent, 2);
    o.put_at(44, nph, 2);
    o.put_at(46, shent, 2);
    o.put_at(48, nsh, 2);
    o.put_at(50, nsh ? 4 : 0, 2);
  }
  // Program headers: PT_LOAD over the whole file, PT_DYNAMIC.
  auto ph = [&](size_t at, uint32_t type, uint32_t flags, uint64_t off, uint64_t size) {
    o.put_at(at, type, 4);
    if (w) {
      o.put_at(at + 4, flags, 4);
      o.put_at(at + 8, off, 8);
      o.put_at(at + 16, kBase + off, 8);
      o.put_at(at + 24, kBase + off, 8);
      o.put_at(at + 32, size, 8);
      o.put_at(at + 40, size, 8);
      o.put_at(at + 48, type == 1 ? 0x1000 : 8, 8);
    } else {
      o.put_at(at + 4, off, 4);
      o.put_at(at + 8, kBase + off, 4);
      o.put_at(at + 12, kBase + off, 4);
      o.put_at(at + 16, size, 4);
      o.put_at(at + 20, size, 4);
      o.put_at(at + 24, flags, 4);
      o.put_at(at + 28, type == 1 ? 0x1000 : 4, 4);
    }
  };
  if (nph) {
    ph(img.phoff, 1, s.load_flags, 0, total);
    ph(img.phoff + phent, 2, 6, img.dynoff, img.dynsize);
  }
  img.bytes = std::move(b);
  return img;
}

struct CacheEntrySpec {
  int32_t flags = 0x0303;  // libc6, x86-64
  std::string soname;
  std::string path;
  uint64_t hwcap = 0;
};

enum class CacheFormat { kOld, kNew, kCombined };

// Writes an ld.so.cache; `big` applies to the new-format part (the old format
// has no byte-order marker and is always written little-endian here).
inline std::vector<uint8_t> build_ld_cache(const std::vector<CacheEntrySpec>& entries,
                                           CacheFormat fmt, bool big = false) {
  Writer o(big);
  const bool has_old = fmt != CacheFormat::kNew;
  const bool has_new = fmt != CacheFormat::kOld;
  size_t old_table = 0, old_strings = 0, new_base = 0, new_table = 0;
  Writer le(false);  // for the old part
  if (has_old) {
    o.str("ld.so-1.7.0");
    o.u8(0);
    o.bytes().resize(12);
    le.u32(entries.size());
    o.raw(le.bytes().data(), 4);
    old_table = o.size();
    o.pad_to(old_table + 12 * entries.size());
    old_strings = o.size();
  }
  if (has_new) {
    if (has_old) o.align(8);
    new_base = o.size();
    o.str("glibc-ld.so.cache1.1");
    o.u32(entries.size());
    o.u32(0);           // len_strings, patched below
    o.u8(big ? 3 : 2);  // endianness flags
    o.u8(0), o.u8(0), o.u8(0);
    o.u32(0);  // extension offset
    o.u32(0), o.u32(0), o.u32(0);
    new_table = o.size();
    o.pad_to(new_table + 24 * entries.size());
  }
  const size_t strings_start = o.size();
  for (size_t i = 0; i < entries.size(); ++i) {
    const CacheEntrySpec& e = entries[i];
    const size_t key = o.size();
    o.str(e.soname);
    o.u8(0);
    const size_t value = o.size();
    o.str(e.path);
    o.u8(0);
    if (has_old) {
      Writer t(false);
      t.bytes() = std::move(o.bytes());
      t.put_at(old_table + 12 * i, static_cast<uint32_t>(e.flags), 4);
      t.put_at(old_table + 12 * i + 4, key - old_strings, 4);
      t.put_at(old_table + 12 * i + 8, value - old_strings, 4);
      o.bytes() = std::move(t.bytes());
    }
    if (has_new) {
      const size_t at = new_table + 24 * i;
      o.put_at(at, static_cast<uint32_t>(e.flags), 4);
      o.put_at(at + 4, key - new_base, 4);
      o.put_at(at + 8, value - new_base, 4);
      o.put_at(at + 12, 0, 4);
      o.put_at(at + 16, e.hwcap, 8);
    }
  }
  if (has_new) o.put_at(new_base + 24, o.size() - strings_start, 4);
  return std::move(o.bytes());
}

}  // namespace dlenv::testbuild
