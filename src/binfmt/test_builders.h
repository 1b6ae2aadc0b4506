// Test-only builders for synthetic ELF images and ld.so.cache files (both byte
// orders, both ELF classes, old/new/combined cache formats). Used by the unit
// tests and by the seed-corpus writer in fuzz_replay_test.cc.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
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
};

struct ElfImage {
  std::vector<uint8_t> bytes;
  size_t phoff = 0;
  size_t shoff = 0;
  size_t dynoff = 0;
  size_t dynsize = 0;
  size_t dynstroff = 0;
  size_t rodataoff = 0;
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

  ElfImage img;
  Writer o(s.big);
  o.pad_to(ehsize);
  img.phoff = o.size();
  o.pad_to(img.phoff + nph * phent);
  o.align(8);
  img.dynstroff = o.size();
  o.str(dynstr);
  o.align(8);
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
  const std::string shstr = std::string("\0.dynstr\0.dynamic\0.rodata\0.shstrtab\0", 36);
  const size_t shstroff = o.size();
  o.str(shstr);
  o.align(8);
  const size_t nsh = s.sections ? 5 : 0;
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
      o.word(w, type == 6 ? dynent : 0);
    };
    sh(0, 0, 0, 0, 0);
    sh(1, 3, img.dynstroff, dynstr.size(), 0);  // .dynstr
    sh(9, 6, img.dynoff, img.dynsize, 1);       // .dynamic -> .dynstr
    sh(18, 1, img.rodataoff, s.rodata.size(), 0);
    sh(26, 3, shstroff, shstr.size(), 0);
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
