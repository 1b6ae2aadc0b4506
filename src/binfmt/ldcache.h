// Parser for glibc's /etc/ld.so.cache: the old "ld.so-1.7.0" format, the new
// "glibc-ld.so.cache1.1" format, and the combined file (old then new).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/bytes.h"
#include "util/result.h"

namespace dlenv {

struct LdCacheEntry {
  std::string soname;  // key, e.g. "libcudnn.so.9"
  std::string path;    // value, e.g. "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"
  int32_t flags = 0;   // FLAG_ELF_LIBC6 | FLAG_X8664_LIB64 ...
  uint64_t hwcap = 0;
  bool is_64bit_x86() const { return (flags & 0xff00) == 0x0300 && (flags & 0xff) == 0x03; }
};

struct LdCache {
  std::string format;                 // "new", "old", "old+new"
  std::vector<LdCacheEntry> entries;  // in file order (the loader's preference order)
  // First entry for a soname, as the loader would take it (x86-64 entries preferred).
  const LdCacheEntry* find(const std::string& soname) const;
};

// nullopt: not an ld.so.cache (no magic). Error: magic present but corrupt.
// Error messages start with "ld.so.cache: ".
Result<std::optional<LdCache>> parse_ld_cache(ByteView bytes);
// Same, with `name` (e.g. the cache's path inside a sysroot) used in messages.
Result<std::optional<LdCache>> parse_ld_cache(ByteView bytes, const std::string& name);

}  // namespace dlenv
