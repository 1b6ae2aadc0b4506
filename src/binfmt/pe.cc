// PE reader. Every read goes through ByteView (bounds-checked); every RVA is
// mapped through the section table and checked against the file; every count
// is capped, so a corrupt file yields an Error and never a crash, a hang or an
// absurd allocation.
#include "binfmt/pe.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace dlenv {

namespace {

constexpr uint16_t kOptMagic32 = 0x10b;
constexpr uint16_t kOptMagic64 = 0x20b;
constexpr uint32_t kDirExport = 0;
constexpr uint32_t kDirImport = 1;
constexpr uint32_t kDirResource = 2;
constexpr uint32_t kDirDelayImport = 13;
constexpr uint32_t kRtVersion = 16;
constexpr uint32_t kMaxSections = 96;  // the Windows loader's own limit
constexpr size_t kMaxImportDlls = 4096;
constexpr size_t kMaxImportFunctions = 65536;
constexpr uint32_t kMaxExports = 1u << 20;
constexpr size_t kMaxName = 4096;
// All import/export names together. Tables may share bytes (every descriptor
// can point at one name table, every name at one long string), so the per-table
// caps alone would let a small file ask for gigabytes.
constexpr uint64_t kMaxNamesTotal = 1u << 20;
constexpr uint64_t kMaxNameBytesTotal = 256ull << 20;

struct Section {
  uint32_t vaddr = 0;
  uint32_t vsize = 0;
  uint32_t raw_size = 0;
  uint32_t raw_offset = 0;
};

struct DataDir {
  uint32_t rva = 0;
  uint32_t size = 0;
};

class Image {
 public:
  Image(ByteView b, std::string name) : b_(b), name_(std::move(name)) {}

  std::unexpected<Error> err(std::string_view what) const {
    return fail(fmt::format("{}: {}", name_, what));
  }
  uint16_t u16(ByteView v, uint64_t off) const { return v.read<uint16_t>(off).value_or(0); }
  uint32_t u32(ByteView v, uint64_t off) const { return v.read<uint32_t>(off).value_or(0); }
  uint64_t u64(ByteView v, uint64_t off) const { return v.read<uint64_t>(off).value_or(0); }

  // The file bytes from `rva` to the end of the section (or header) holding it.
  std::optional<ByteView> at(uint64_t rva) const {
    for (const Section& s : sections) {
      const uint64_t span = std::max(s.vsize, s.raw_size);
      if (rva < s.vaddr || rva - s.vaddr >= span) continue;
      const uint64_t delta = rva - s.vaddr;
      if (delta >= s.raw_size) return std::nullopt;  // in the zero-filled tail
      const uint64_t avail = std::min<uint64_t>(s.raw_size - delta, b_.size());
      auto v = b_.sub(static_cast<uint64_t>(s.raw_offset) + delta, avail);
      if (!v && s.raw_offset + delta < b_.size()) {
        // Raw data truncated by the end of the file: what is there.
        return b_.sub(s.raw_offset + delta, b_.size() - (s.raw_offset + delta));
      }
      return v;
    }
    if (rva < size_of_headers) return b_.sub(rva, size_of_headers - rva);
    return std::nullopt;
  }
  // Counts one more name of `bytes` bytes against the file's totals; false
  // (with the error message in `why`) once they are exceeded.
  bool charge(size_t bytes, std::string& why) const {
    ++names_total_;
    bytes_total_ += bytes;
    if (names_total_ <= kMaxNamesTotal && bytes_total_ <= kMaxNameBytesTotal) return true;
    why = fmt::format("imports and exports hold more than {} names or {} bytes of names",
                      kMaxNamesTotal, kMaxNameBytesTotal);
    return false;
  }
  std::optional<std::string> string_at(uint64_t rva) const {
    auto v = at(rva);
    if (!v) return std::nullopt;
    auto s = v->cstring(0, kMaxName);
    if (!s) return std::nullopt;
    return std::string(*s);
  }

  ByteView b_;
  std::string name_;
  std::vector<Section> sections;
  uint64_t size_of_headers = 0;
  uint64_t image_base = 0;
  bool is64 = false;

 private:
  mutable uint64_t names_total_ = 0;
  mutable uint64_t bytes_total_ = 0;
};

// One import table (regular or delay-load) entry's names, from its name table.
Result<std::vector<std::string>> read_thunks(const Image& img, uint64_t rva,
                                             const std::string& dll) {
  std::vector<std::string> out;
  if (rva == 0) return out;
  auto v = img.at(rva);
  if (!v) {
    return img.err(
        fmt::format("import name table of {} (RVA 0x{:x}) is outside the file", dll, rva));
  }
  const uint64_t width = img.is64 ? 8 : 4;
  for (size_t i = 0;; ++i) {
    if (i >= kMaxImportFunctions) {
      return img.err(fmt::format("import name table of {} has no terminator", dll));
    }
    if (!v->in_bounds(i * width, width)) {
      return img.err(fmt::format("import name table of {} runs past its section", dll));
    }
    const uint64_t t = img.is64 ? img.u64(*v, i * width) : img.u32(*v, i * width);
    if (t == 0) break;
    const uint64_t ordinal_flag = img.is64 ? (uint64_t{1} << 63) : (uint64_t{1} << 31);
    std::string why;
    if (t & ordinal_flag) {
      if (!img.charge(0, why)) return img.err(why);
      out.push_back(fmt::format("#{}", t & 0xffff));
      continue;
    }
    auto hint = img.at(t & 0x7fffffff);
    if (!hint) {
      return img.err(fmt::format("import of {} names RVA 0x{:x}, outside the file", dll, t));
    }
    auto s = hint->cstring(2, kMaxName);
    if (!s)
      return img.err(fmt::format("import name of {} at RVA 0x{:x} is not terminated", dll, t));
    if (!img.charge(s->size(), why)) return img.err(why);
    out.emplace_back(*s);
  }
  return out;
}

Result<std::vector<PeImport>> read_imports(const Image& img, DataDir d) {
  std::vector<PeImport> out;
  if (d.rva == 0) return out;
  auto v = img.at(d.rva);
  if (!v) return img.err(fmt::format("import directory (RVA 0x{:x}) is outside the file", d.rva));
  for (size_t i = 0;; ++i) {
    const uint64_t o = i * 20;
    if (i >= kMaxImportDlls) return img.err("import directory has no terminator");
    if (!v->in_bounds(o, 20)) return img.err("import directory runs past its section");
    const uint32_t original_first_thunk = img.u32(*v, o), name = img.u32(*v, o + 12),
                   first_thunk = img.u32(*v, o + 16);
    if (name == 0 && first_thunk == 0 && original_first_thunk == 0) break;
    auto dll = img.string_at(name);
    if (!dll) return img.err(fmt::format("import directory entry {} has an invalid DLL name", i));
    auto f = read_thunks(img, original_first_thunk ? original_first_thunk : first_thunk, *dll);
    if (!f) return std::unexpected(f.error());
    out.push_back(PeImport{*dll, std::move(*f)});
  }
  return out;
}

Result<std::vector<PeImport>> read_delay_imports(const Image& img, DataDir d) {
  std::vector<PeImport> out;
  if (d.rva == 0) return out;
  auto v = img.at(d.rva);
  if (!v)
    return img.err(fmt::format("delay-load directory (RVA 0x{:x}) is outside the file", d.rva));
  for (size_t i = 0;; ++i) {
    const uint64_t o = i * 32;
    if (i >= kMaxImportDlls) return img.err("delay-load directory has no terminator");
    if (!v->in_bounds(o, 32)) return img.err("delay-load directory runs past its section");
    const uint32_t attributes = img.u32(*v, o);
    uint64_t name = img.u32(*v, o + 4);
    uint64_t int_rva = img.u32(*v, o + 16);
    if (name == 0) break;
    if ((attributes & 1) == 0) {
      // Old VC6 descriptors hold virtual addresses, not RVAs.
      if (name < img.image_base)
        return img.err("delay-load DLL name address is below the image base");
      name -= img.image_base;
      int_rva = int_rva >= img.image_base ? int_rva - img.image_base : 0;
    }
    auto dll = img.string_at(name);
    if (!dll) return img.err(fmt::format("delay-load entry {} has an invalid DLL name", i));
    auto f = read_thunks(img, int_rva, *dll);
    if (!f) return std::unexpected(f.error());
    out.push_back(PeImport{*dll, std::move(*f)});
  }
  return out;
}

Result<void> read_exports(const Image& img, DataDir d, PeInfo& info) {
  if (d.rva == 0) return {};
  auto v = img.at(d.rva);
  if (!v || !v->in_bounds(0, 40)) {
    return img.err(fmt::format("export directory (RVA 0x{:x}) is outside the file", d.rva));
  }
  if (auto n = img.string_at(img.u32(*v, 12))) info.export_name = *n;
  const uint32_t base = img.u32(*v, 16), nfuncs = img.u32(*v, 20), nnames = img.u32(*v, 24);
  const uint32_t funcs_rva = img.u32(*v, 28), names_rva = img.u32(*v, 32),
                 ords_rva = img.u32(*v, 36);
  if (nfuncs > kMaxExports || nnames > kMaxExports) {
    return img.err(fmt::format("export directory claims {} functions / {} names", nfuncs, nnames));
  }
  if (nfuncs == 0) return {};
  auto funcs = img.at(funcs_rva);
  if (!funcs || !funcs->in_bounds(0, uint64_t{nfuncs} * 4)) {
    return img.err("export address table is outside the file");
  }
  std::vector<std::string> names(nfuncs);
  if (nnames > 0) {
    auto nv = img.at(names_rva);
    auto ov = img.at(ords_rva);
    if (!nv || !nv->in_bounds(0, uint64_t{nnames} * 4) || !ov ||
        !ov->in_bounds(0, uint64_t{nnames} * 2)) {
      return img.err("export name or ordinal table is outside the file");
    }
    for (uint32_t i = 0; i < nnames; ++i) {
      const uint16_t idx = img.u16(*ov, uint64_t{i} * 2);
      if (idx >= nfuncs)
        return img.err(fmt::format("export name {} has ordinal index {} >= {}", i, idx, nfuncs));
      auto s = img.string_at(img.u32(*nv, uint64_t{i} * 4));
      if (!s) return img.err(fmt::format("export name {} is outside the file", i));
      if (std::string why; !img.charge(s->size(), why)) return img.err(why);
      names[idx] = std::move(*s);
    }
  }
  for (uint32_t i = 0; i < nfuncs; ++i) {
    const uint32_t rva = img.u32(*funcs, uint64_t{i} * 4);
    if (rva == 0 && names[i].empty()) continue;  // unused slot
    PeExport e{names[i], base + i, std::nullopt};
    if (rva >= d.rva && rva - d.rva < d.size) {
      auto fwd = img.string_at(rva);
      if (!fwd) return img.err(fmt::format("forwarder of export #{} is not terminated", base + i));
      if (std::string why; !img.charge(fwd->size(), why)) return img.err(why);
      e.forwarder = std::move(*fwd);
    }
    info.exports.push_back(std::move(e));
  }
  return {};
}

// Resource tree: type RT_VERSION -> first name -> first language -> data.
Result<void> read_version(const Image& img, DataDir d, PeInfo& info) {
  if (d.rva == 0) return {};
  auto root = img.at(d.rva);
  if (!root)
    return img.err(fmt::format("resource directory (RVA 0x{:x}) is outside the file", d.rva));
  const ByteView rs = *root;
  // Finds the entry for `id` (or the first entry when id is 0) in the directory at `off`.
  auto find = [&](uint64_t off, uint32_t id) -> Result<std::optional<uint32_t>> {
    if (!rs.in_bounds(off, 16)) return img.err("resource directory runs past its section");
    const uint64_t n = uint64_t{img.u16(rs, off + 12)} + img.u16(rs, off + 14);
    if (!rs.in_bounds(off + 16, n * 8))
      return img.err("resource directory entries run past its section");
    for (uint64_t i = 0; i < n; ++i) {
      const uint32_t key = img.u32(rs, off + 16 + i * 8);
      if (id == 0 || key == id) return std::optional<uint32_t>(img.u32(rs, off + 20 + i * 8));
    }
    return std::optional<uint32_t>();
  };
  auto type = find(0, kRtVersion);
  if (!type) return std::unexpected(type.error());
  if (!*type) return {};
  uint32_t next = **type;
  for (int level = 0; level < 2; ++level) {
    if ((next & 0x80000000u) == 0)
      return img.err("version resource tree is not a directory where expected");
    auto e = find(next & 0x7fffffffu, 0);
    if (!e) return std::unexpected(e.error());
    if (!*e) return {};
    next = **e;
  }
  if (next & 0x80000000u) return img.err("version resource data entry is a directory");
  if (!rs.in_bounds(next, 16)) return img.err("version resource data entry runs past its section");
  const uint32_t data_rva = img.u32(rs, next), data_size = img.u32(rs, next + 4);
  auto data = img.at(data_rva);
  if (!data) return img.err("version resource data is outside the file");
  const ByteView vi =
      data->sub(0, std::min<uint64_t>(data_size, data->size())).value_or(ByteView());
  // VS_VERSIONINFO: wLength, wValueLength, wType, L"VS_VERSION_INFO\0", pad to 4,
  // then VS_FIXEDFILEINFO (signature 0xFEEF04BD). Scan aligned words for the
  // signature in the first 256 bytes to tolerate odd padding.
  for (uint64_t o = 0; o + 52 <= std::min<uint64_t>(vi.size(), 256 + 52); o += 4) {
    if (img.u32(vi, o) != 0xFEEF04BDu) continue;
    const uint32_t fms = img.u32(vi, o + 8), fls = img.u32(vi, o + 12);
    const uint32_t pms = img.u32(vi, o + 16), pls = img.u32(vi, o + 20);
    info.file_version =
        fmt::format("{}.{}.{}.{}", fms >> 16, fms & 0xffff, fls >> 16, fls & 0xffff);
    info.product_version =
        fmt::format("{}.{}.{}.{}", pms >> 16, pms & 0xffff, pls >> 16, pls & 0xffff);
    return {};
  }
  return img.err("version resource has no VS_FIXEDFILEINFO (signature 0xFEEF04BD)");
}

}  // namespace

std::string pe_machine_name(uint16_t machine) {
  switch (machine) {
    case 0x14c: return "x86";
    case 0x8664: return "x64";
    case 0xaa64: return "arm64";
    case 0x1c0:
    case 0x1c4: return "arm";
    case 0x200: return "ia64";
    default: return fmt::format("machine 0x{:04x}", machine);
  }
}

Result<std::optional<PeInfo>> parse_pe(ByteView b, const std::string& name) {
  if (b.size() < 2 || std::memcmp(b.data(), "MZ", 2) != 0) return std::optional<PeInfo>();
  Image img(b, name);
  auto lfanew = b.read<uint32_t>(0x3c);
  if (!lfanew) return img.err("DOS header truncated (no e_lfanew)");
  auto sig = b.sub(*lfanew, 4);
  if (!sig) {
    // e_lfanew beyond the end: a truncated PE, or a DOS program with junk there.
    if (b.size() >= 0x40 && *lfanew < (64u << 20)) {
      return img.err(fmt::format("e_lfanew 0x{:x} points past the end of the file ({} bytes)",
                                 *lfanew, b.size()));
    }
    return std::optional<PeInfo>();
  }
  if (std::memcmp(sig->data(), "PE\0\0", 4) != 0) return std::optional<PeInfo>();  // DOS/NE/LE
  const uint64_t coff = uint64_t{*lfanew} + 4;
  if (!b.in_bounds(coff, 20)) return img.err("COFF file header truncated");
  PeInfo info;
  info.machine = img.u16(b, coff);
  const uint16_t nsections = img.u16(b, coff + 2);
  const uint16_t opt_size = img.u16(b, coff + 16);
  info.characteristics = img.u16(b, coff + 18);
  info.is_dll = (info.characteristics & 0x2000) != 0;
  const uint64_t opt = coff + 20;
  if (opt_size < 2 || !b.in_bounds(opt, opt_size)) return img.err("optional header truncated");
  const uint16_t magic = img.u16(b, opt);
  if (magic != kOptMagic32 && magic != kOptMagic64) {
    return img.err(fmt::format("optional header magic 0x{:x} is neither PE32 nor PE32+", magic));
  }
  info.is_64 = img.is64 = magic == kOptMagic64;
  const uint64_t ndirs_off = info.is_64 ? 108 : 92;
  if (opt_size < ndirs_off + 4)
    return img.err("optional header too small for its data directories");
  img.image_base = info.is_64 ? img.u64(b, opt + 24) : img.u32(b, opt + 28);
  img.size_of_headers = img.u32(b, opt + 60);
  const uint32_t ndirs = std::min<uint32_t>(img.u32(b, opt + ndirs_off), 16);
  if (ndirs_off + 4 + uint64_t{ndirs} * 8 > opt_size) {
    return img.err("data directories extend past the optional header");
  }
  DataDir dirs[16] = {};
  for (uint32_t i = 0; i < ndirs; ++i) {
    dirs[i].rva = img.u32(b, opt + ndirs_off + 4 + i * 8);
    dirs[i].size = img.u32(b, opt + ndirs_off + 8 + i * 8);
  }
  if (nsections > kMaxSections) return img.err(fmt::format("too many sections ({})", nsections));
  const uint64_t sec_off = opt + opt_size;
  if (!b.in_bounds(sec_off, uint64_t{nsections} * 40)) return img.err("section table truncated");
  for (uint16_t i = 0; i < nsections; ++i) {
    const uint64_t o = sec_off + uint64_t{i} * 40;
    img.sections.push_back(
        Section{img.u32(b, o + 12), img.u32(b, o + 8), img.u32(b, o + 16), img.u32(b, o + 20)});
  }
  info.file_bytes_needed = img.size_of_headers;
  for (const Section& s : img.sections) {
    if (s.raw_size == 0) continue;
    info.file_bytes_needed =
        std::max<uint64_t>(info.file_bytes_needed, uint64_t{s.raw_offset} + s.raw_size);
  }
  auto imports = read_imports(img, dirs[kDirImport]);
  if (!imports) return std::unexpected(imports.error());
  info.imports = std::move(*imports);
  auto delay = read_delay_imports(img, dirs[kDirDelayImport]);
  if (!delay) return std::unexpected(delay.error());
  info.delay_imports = std::move(*delay);
  if (auto r = read_exports(img, dirs[kDirExport], info); !r) return std::unexpected(r.error());
  if (auto r = read_version(img, dirs[kDirResource], info); !r) return std::unexpected(r.error());
  return std::optional<PeInfo>(std::move(info));
}

std::optional<std::string> pe_load_problem(ByteView file) {
  auto pe = parse_pe(file, "");
  if (!pe) {
    std::string why = pe.error().message;
    if (why.starts_with(": ")) why = why.substr(2);
    return "its PE headers are corrupt (" + why + ")";
  }
  if (!*pe) return std::nullopt;
  if ((*pe)->file_bytes_needed > file.size()) {
    return fmt::format("the file is truncated ({} of {} bytes its headers and sections need)",
                       file.size(), (*pe)->file_bytes_needed);
  }
  return std::nullopt;
}

}  // namespace dlenv
