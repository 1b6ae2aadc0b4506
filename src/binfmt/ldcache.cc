// glibc ld.so.cache reader (layout as in glibc's sysdeps/generic/dl-cache.h):
//
//   old:  "ld.so-1.7.0" (11 bytes) + pad, uint32 nlibs, then nlibs entries
//         {int32 flags, uint32 key, uint32 value}; key/value are offsets from
//         the end of the entry table.
//   new:  "glibc-ld.so.cache" "1.1", uint32 nlibs, uint32 len_strings,
//         uint8 flags (endianness in bits 0-1) + 3 pad, uint32 extension_offset,
//         uint32 unused[3] (48 bytes), then nlibs entries {int32 flags,
//         uint32 key, uint32 value, uint32 osversion, uint64 hwcap}; key/value
//         are offsets from the start of the new header.
//   old+new: the new header follows the old table, aligned to
//         alignof(cache_file_new) (8 on LP64, 4 on i386); the loader uses the
//         new table.
#include "binfmt/ldcache.h"

#include <fmt/format.h>

#include <cstring>
#include <string_view>

namespace dlenv {

namespace {

constexpr std::string_view kOldMagic = "ld.so-1.7.0";
constexpr std::string_view kNewMagic = "glibc-ld.so.cache";
constexpr std::string_view kNewVersion = "1.1";
constexpr uint64_t kOldHeader = 16;  // magic[11] + pad to 12 + nlibs
constexpr uint64_t kOldEntry = 12;
constexpr uint64_t kNewHeader = 48;
constexpr uint64_t kNewEntry = 24;
constexpr size_t kMaxPath = 4096;                  // PATH_MAX
constexpr uint64_t kMaxEntries = 1u << 20;         // real caches hold a few thousand
constexpr uint64_t kMaxStringBytes = 64ull << 20;  // all keys and values together

Result<uint32_t> check_count(uint32_t nlibs, const std::string& name, const char* fmt_name) {
  if (nlibs > kMaxEntries) {
    return fail(fmt::format("{}: {} entry count {} exceeds the limit of {}", name, fmt_name, nlibs,
                            kMaxEntries));
  }
  return nlibs;
}

Result<void> check_total(uint64_t total, const std::string& name) {
  if (total > kMaxStringBytes) {
    return fail(fmt::format("{}: entry strings exceed {} bytes", name, kMaxStringBytes));
  }
  return {};
}

bool has_at(ByteView b, uint64_t off, std::string_view magic) {
  auto s = b.sub(off, magic.size());
  return s && s->as_string_view() == magic;
}

Result<std::string> string_at(ByteView b, uint64_t base, uint64_t rel, const std::string& name,
                              const char* what, uint64_t index) {
  std::optional<std::string_view> s;
  if (base <= UINT64_MAX - rel) s = b.cstring(base + rel, kMaxPath);
  if (!s) {
    return fail(fmt::format("{}: entry {} {} string offset {} is outside the file or too long",
                            name, index, what, rel));
  }
  return std::string(*s);
}

Result<std::vector<LdCacheEntry>> parse_new(ByteView b, uint64_t base, const std::string& name) {
  if (!b.in_bounds(base, kNewHeader)) {
    return fail(fmt::format("{}: new-format header truncated", name));
  }
  if (!has_at(b, base + kNewMagic.size(), kNewVersion)) {
    auto v = b.sub(base + kNewMagic.size(), kNewVersion.size());
    std::string shown;
    for (char c : v->as_string_view()) shown += (c >= 0x20 && c < 0x7f) ? c : '?';
    return fail(fmt::format("{}: unsupported new-format version '{}'", name, shown));
  }
  const uint8_t endian = b.read<uint8_t>(base + 28).value_or(0) & 3;
  if (endian == 1) return fail(fmt::format("{}: new-format header marks endianness invalid", name));
  const bool big = endian == 3;  // 0: unset (pre-2.32 ldconfig, host order), 2: little
  const uint32_t nlibs = b.read<uint32_t>(base + 20, big).value_or(0);
  const uint64_t table = base + kNewHeader;
  if (!b.in_bounds(table, uint64_t{nlibs} * kNewEntry)) {
    return fail(fmt::format("{}: new-format entry table ({} entries) extends past end of file",
                            name, nlibs));
  }
  std::vector<LdCacheEntry> out;
  if (auto c = check_count(nlibs, name, "new-format"); !c) return std::unexpected(c.error());
  out.reserve(nlibs);
  uint64_t total = 0;
  for (uint64_t i = 0; i < nlibs; ++i) {
    const uint64_t o = table + i * kNewEntry;
    LdCacheEntry e;
    e.flags = static_cast<int32_t>(b.read<uint32_t>(o, big).value_or(0));
    const uint32_t key = b.read<uint32_t>(o + 4, big).value_or(0);
    const uint32_t value = b.read<uint32_t>(o + 8, big).value_or(0);
    e.hwcap = b.read<uint64_t>(o + 16, big).value_or(0);
    auto k = string_at(b, base, key, name, "key", i);
    if (!k) return std::unexpected(k.error());
    auto v = string_at(b, base, value, name, "value", i);
    if (!v) return std::unexpected(v.error());
    total += k->size() + v->size();
    if (auto t = check_total(total, name); !t) return std::unexpected(t.error());
    e.soname = std::move(*k);
    e.path = std::move(*v);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace

const LdCacheEntry* LdCache::find(const std::string& soname) const {
  const LdCacheEntry* first = nullptr;
  for (const LdCacheEntry& e : entries) {
    if (e.soname != soname) continue;
    if (e.is_64bit_x86()) return &e;
    if (!first) first = &e;
  }
  return first;
}

Result<std::optional<LdCache>> parse_ld_cache(ByteView bytes) {
  return parse_ld_cache(bytes, "ld.so.cache");
}

Result<std::optional<LdCache>> parse_ld_cache(ByteView b, const std::string& name) {
  LdCache cache;
  if (has_at(b, 0, kNewMagic)) {
    auto entries = parse_new(b, 0, name);
    if (!entries) return std::unexpected(entries.error());
    cache.format = "new";
    cache.entries = std::move(*entries);
    return std::optional<LdCache>(std::move(cache));
  }
  if (!has_at(b, 0, kOldMagic)) return std::optional<LdCache>();

  if (!b.in_bounds(0, kOldHeader))
    return fail(fmt::format("{}: old-format header truncated", name));
  const uint32_t nlibs = b.read<uint32_t>(12).value_or(0);
  if (!b.in_bounds(kOldHeader, uint64_t{nlibs} * kOldEntry)) {
    return fail(fmt::format("{}: old-format entry table ({} entries) extends past end of file",
                            name, nlibs));
  }
  if (auto c = check_count(nlibs, name, "old-format"); !c) return std::unexpected(c.error());
  const uint64_t strings = kOldHeader + uint64_t{nlibs} * kOldEntry;

  // Combined file: the new header follows the old table, aligned.
  for (uint64_t align : {8u, 4u}) {
    const uint64_t at = (strings + align - 1) & ~(align - 1);
    if (has_at(b, at, kNewMagic)) {
      auto entries = parse_new(b, at, name);
      if (!entries) return std::unexpected(entries.error());
      cache.format = "old+new";
      cache.entries = std::move(*entries);
      return std::optional<LdCache>(std::move(cache));
    }
  }

  cache.format = "old";
  cache.entries.reserve(nlibs);
  uint64_t total = 0;
  for (uint64_t i = 0; i < nlibs; ++i) {
    const uint64_t o = kOldHeader + i * kOldEntry;
    LdCacheEntry e;
    e.flags = static_cast<int32_t>(b.read<uint32_t>(o).value_or(0));
    auto k = string_at(b, strings, b.read<uint32_t>(o + 4).value_or(0), name, "key", i);
    if (!k) return std::unexpected(k.error());
    auto v = string_at(b, strings, b.read<uint32_t>(o + 8).value_or(0), name, "value", i);
    if (!v) return std::unexpected(v.error());
    total += k->size() + v->size();
    if (auto t = check_total(total, name); !t) return std::unexpected(t.error());
    e.soname = std::move(*k);
    e.path = std::move(*v);
    cache.entries.push_back(std::move(e));
  }
  return std::optional<LdCache>(std::move(cache));
}

}  // namespace dlenv
