// Fuzz entry points shared by the libFuzzer targets (elf_fuzz.cc, pe_fuzz.cc,
// ldcache_fuzz.cc) and the corpus replay test (fuzz_replay_test.cc): parse the
// input and touch every field of the result so sanitizers see every read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "binfmt/elf.h"
#include "binfmt/ldcache.h"
#include "binfmt/pe.h"
#include "util/bytes.h"
#include "util/fuzz_touch.h"

namespace dlenv::fuzz {

inline uint64_t elf_one_input(const uint8_t* data, size_t size) {
  const ByteView bytes(data, size);
  uint64_t sink = 0;
  auto r = parse_elf(bytes, "fuzz.so");
  if (!r) {
    sink += touch(r.error().message);
  } else if (*r) {
    const ElfInfo& i = **r;
    sink += i.is_64 + 2u * i.little_endian + i.machine + i.os_abi + i.type + i.has_dynamic;
    sink += touch(elf_machine_name(i.machine));
    for (const auto& n : i.needed) sink += touch(n);
    if (i.soname) sink += touch(*i.soname);
    if (i.rpath) sink += touch(*i.rpath);
    if (i.runpath) sink += touch(*i.runpath);
  }
  auto sym = parse_elf(bytes, "fuzz.so", ElfParseOptions{.symbols = true});
  if (!sym) {
    sink += touch(sym.error().message);
  } else if (*sym) {
    sink += (*sym)->symbols_read;
    for (const auto& s : (*sym)->dynamic_symbols) {
      sink += touch(s.name) + s.defined + 2u * s.weak + 4u * s.function + 8u * s.version_hidden +
              touch(s.version) + touch(s.version_file);
    }
    for (const auto& n : (*sym)->version_needs) {
      sink += touch(n.file);
      for (const auto& v : n.versions) sink += touch(v);
    }
    for (const auto& v : (*sym)->version_defs) sink += touch(v);
  }
  auto ver = parse_elf(bytes, "fuzz.so", ElfParseOptions{.versions = true});
  if (!ver) {
    sink += touch(ver.error().message);
  } else if (*ver) {
    sink += (*ver)->version_needs.size() + (*ver)->version_defs.size();
  }
  auto table = ElfSymbolTable::read(bytes, "fuzz.so");
  if (!table) {
    sink += touch(table.error().message);
  } else if (*table) {
    const ElfSymbolTable& t = **table;
    sink += t.symbol_count() + t.lookup_method().size();
    for (const auto& imp : t.imports()) sink += touch(std::string(imp.name)) + t.defines(imp.name);
    // Exports as the full reader listed them, and names no table holds.
    if (sym && *sym) {
      for (const auto& s : (*sym)->dynamic_symbols) sink += t.defines(s.name);
    }
    sink += t.defines("cudnnGetVersion") + t.defines("") + t.defines(std::string(300, 'x'));
  }
  for (const auto& s : elf_find_strings(bytes, "lib")) sink += touch(s);
  for (const auto& s : elf_find_strings(bytes, "libcublasLt.so.", 4)) sink += touch(s);
  return sink;
}

inline uint64_t ldcache_one_input(const uint8_t* data, size_t size) {
  const ByteView bytes(data, size);
  uint64_t sink = 0;
  auto r = parse_ld_cache(bytes);
  if (!r) {
    sink += touch(r.error().message);
  } else if (*r) {
    const LdCache& c = **r;
    sink += touch(c.format);
    for (const auto& e : c.entries) {
      sink += touch(e.soname) + touch(e.path) + static_cast<uint32_t>(e.flags) + e.hwcap +
              e.is_64bit_x86();
    }
    if (!c.entries.empty()) {
      const LdCacheEntry* e = c.find(c.entries.back().soname);
      if (e) sink += touch(e->path);
    }
    if (const LdCacheEntry* e = c.find("libc.so.6")) sink += touch(e->path);
  }
  return sink;
}

inline uint64_t pe_one_input(const uint8_t* data, size_t size) {
  const ByteView bytes(data, size);
  uint64_t sink = 0;
  auto r = parse_pe(bytes, "fuzz.dll");
  if (!r) {
    sink += touch(r.error().message);
  } else if (*r) {
    const PeInfo& i = **r;
    sink += i.machine + i.is_64 + i.is_dll + i.characteristics + touch(pe_machine_name(i.machine));
    for (const auto* list : {&i.imports, &i.delay_imports}) {
      for (const auto& imp : *list) {
        sink += touch(imp.dll);
        for (const auto& f : imp.functions) sink += touch(f);
      }
    }
    if (i.export_name) sink += touch(*i.export_name);
    for (const auto& e : i.exports) {
      sink += touch(e.name) + e.ordinal;
      if (e.forwarder) sink += touch(*e.forwarder);
    }
    if (i.file_version) sink += touch(*i.file_version);
    if (i.product_version) sink += touch(*i.product_version);
  }
  return sink;
}

}  // namespace dlenv::fuzz
