// Builds small PE images as byte buffers for the PE reader's tests and the
// fuzz seed corpus: one section (".rdata", RVA 0x1000, file offset 0x200)
// holding imports, delay-load imports, exports (with forwarders) and a
// VS_VERSIONINFO resource.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace dlenv::testbuild {

struct PeSpec {
  bool is64 = true;
  uint16_t machine = 0x8664;
  bool dll = true;
  std::vector<std::pair<std::string, std::vector<std::string>>> imports;  // "#N" = ordinal
  std::vector<std::pair<std::string, std::vector<std::string>>> delay_imports;
  std::string export_name;                                   // empty: no export directory
  std::vector<std::pair<std::string, std::string>> exports;  // name, forwarder ("" = code)
  uint16_t file_version[4] = {0, 0, 0, 0};
  bool version_resource = false;
};

struct PeImage {
  std::vector<uint8_t> bytes;
  uint32_t section_offset = 0x200;
};

inline PeImage build_pe(const PeSpec& s) {
  constexpr uint32_t kRva = 0x1000, kRaw = 0x200;
  std::vector<uint8_t> sec;  // section contents
  auto align = [&](size_t a) {
    while (sec.size() % a) sec.push_back(0);
  };
  auto put16 = [](std::vector<uint8_t>& v, size_t o, uint16_t x) { std::memcpy(&v[o], &x, 2); };
  auto put32 = [](std::vector<uint8_t>& v, size_t o, uint32_t x) { std::memcpy(&v[o], &x, 4); };
  auto put64 = [](std::vector<uint8_t>& v, size_t o, uint64_t x) { std::memcpy(&v[o], &x, 8); };
  auto reserve = [&](size_t n) {
    align(8);
    size_t o = sec.size();
    sec.resize(o + n, 0);
    return o;
  };
  auto str = [&](const std::string& t) {
    size_t o = sec.size();
    sec.insert(sec.end(), t.begin(), t.end());
    sec.push_back(0);
    return static_cast<uint32_t>(kRva + o);
  };
  const size_t w = s.is64 ? 8 : 4;
  auto thunks = [&](const std::vector<std::string>& fns) {
    size_t t = reserve((fns.size() + 1) * w);
    for (size_t i = 0; i < fns.size(); ++i) {
      uint64_t v;
      if (fns[i].starts_with("#")) {
        v = std::stoul(fns[i].substr(1)) | (s.is64 ? (uint64_t{1} << 63) : (uint64_t{1} << 31));
      } else {
        align(2);
        uint32_t hint_rva = static_cast<uint32_t>(kRva + sec.size());
        sec.push_back(0);
        sec.push_back(0);
        str(fns[i]);
        v = hint_rva;
      }
      if (s.is64) {
        put64(sec, t + i * 8, v);
      } else {
        put32(sec, t + i * 4, static_cast<uint32_t>(v));
      }
    }
    return static_cast<uint32_t>(kRva + t);
  };
  uint32_t dirs[16][2] = {};
  if (!s.imports.empty()) {
    size_t d = reserve((s.imports.size() + 1) * 20);
    dirs[1][0] = static_cast<uint32_t>(kRva + d);
    dirs[1][1] = static_cast<uint32_t>((s.imports.size() + 1) * 20);
    for (size_t i = 0; i < s.imports.size(); ++i) {
      uint32_t name = str(s.imports[i].first);
      uint32_t ilt = thunks(s.imports[i].second);
      uint32_t iat = thunks(s.imports[i].second);
      put32(sec, d + i * 20, ilt);
      put32(sec, d + i * 20 + 12, name);
      put32(sec, d + i * 20 + 16, iat);
    }
  }
  if (!s.delay_imports.empty()) {
    size_t d = reserve((s.delay_imports.size() + 1) * 32);
    dirs[13][0] = static_cast<uint32_t>(kRva + d);
    dirs[13][1] = static_cast<uint32_t>((s.delay_imports.size() + 1) * 32);
    for (size_t i = 0; i < s.delay_imports.size(); ++i) {
      uint32_t name = str(s.delay_imports[i].first);
      uint32_t nt = thunks(s.delay_imports[i].second);
      put32(sec, d + i * 32, 1);  // RVA-based
      put32(sec, d + i * 32 + 4, name);
      put32(sec, d + i * 32 + 16, nt);
    }
  }
  if (!s.export_name.empty()) {
    const size_t n = s.exports.size();
    size_t d = reserve(40);
    size_t funcs = reserve(n * 4), names = reserve(n * 4), ords = reserve(n * 2);
    uint32_t dll = str(s.export_name);
    put32(sec, d + 12, dll);
    put32(sec, d + 16, 1);  // ordinal base
    put32(sec, d + 20, static_cast<uint32_t>(n));
    put32(sec, d + 24, static_cast<uint32_t>(n));
    put32(sec, d + 28, static_cast<uint32_t>(kRva + funcs));
    put32(sec, d + 32, static_cast<uint32_t>(kRva + names));
    put32(sec, d + 36, static_cast<uint32_t>(kRva + ords));
    for (size_t i = 0; i < n; ++i) {
      put32(sec, names + i * 4, str(s.exports[i].first));
      put16(sec, ords + i * 2, static_cast<uint16_t>(i));
      put32(sec, funcs + i * 4, s.exports[i].second.empty() ? 0x5000u : str(s.exports[i].second));
    }
    dirs[0][0] = static_cast<uint32_t>(kRva + d);
    dirs[0][1] = static_cast<uint32_t>(sec.size() - d);  // forwarder strings lie inside
  }
  if (s.version_resource) {
    // root dir -> RT_VERSION(16) -> id 1 -> lang 0x409 -> data entry -> VS_VERSIONINFO
    size_t root = reserve(16 + 8), names = reserve(16 + 8), langs = reserve(16 + 8),
           entry = reserve(16);
    put16(sec, root + 14, 1);
    put32(sec, root + 16, 16);
    put32(sec, root + 20, 0x80000000u | static_cast<uint32_t>(names - root));
    put16(sec, names + 14, 1);
    put32(sec, names + 16, 1);
    put32(sec, names + 20, 0x80000000u | static_cast<uint32_t>(langs - root));
    put16(sec, langs + 14, 1);
    put32(sec, langs + 16, 0x409);
    put32(sec, langs + 20, static_cast<uint32_t>(entry - root));
    align(4);
    size_t vi = sec.size();
    const std::u16string key = u"VS_VERSION_INFO";
    sec.resize(vi + 6 + (key.size() + 1) * 2, 0);
    std::memcpy(&sec[vi + 6], key.data(), key.size() * 2);
    align(4);
    size_t ffi = reserve(52);  // reserve aligns to 8: the reader scans aligned words
    put32(sec, ffi, 0xFEEF04BDu);
    put32(sec, ffi + 4, 0x10000);
    const uint32_t ms = (uint32_t{s.file_version[0]} << 16) | s.file_version[1];
    const uint32_t ls = (uint32_t{s.file_version[2]} << 16) | s.file_version[3];
    put32(sec, ffi + 8, ms);
    put32(sec, ffi + 12, ls);
    put32(sec, ffi + 16, ms);
    put32(sec, ffi + 20, ls);
    put16(sec, vi, static_cast<uint16_t>(sec.size() - vi));
    put16(sec, vi + 2, 52);
    put32(sec, entry, static_cast<uint32_t>(kRva + vi));
    put32(sec, entry + 4, static_cast<uint32_t>(sec.size() - vi));
    dirs[2][0] = static_cast<uint32_t>(kRva + root);
    dirs[2][1] = static_cast<uint32_t>(sec.size() - root);
  }
  align(0x200);
  if (sec.empty()) sec.resize(0x200, 0);

  std::vector<uint8_t> img(kRaw, 0);
  img[0] = 'M';
  img[1] = 'Z';
  put32(img, 0x3c, 0x80);
  std::memcpy(&img[0x80], "PE\0\0", 4);
  const size_t coff = 0x84;
  const uint16_t opt_size = s.is64 ? 240 : 224;
  put16(img, coff, s.machine);
  put16(img, coff + 2, 1);
  put16(img, coff + 16, opt_size);
  put16(img, coff + 18, static_cast<uint16_t>(0x0002 | (s.dll ? 0x2000 : 0)));
  const size_t opt = coff + 20;
  put16(img, opt, s.is64 ? 0x20b : 0x10b);
  if (s.is64) {
    put64(img, opt + 24, 0x180000000ull);
  } else {
    put32(img, opt + 28, 0x10000000u);
  }
  put32(img, opt + 56, static_cast<uint32_t>(kRva + sec.size()));  // SizeOfImage
  put32(img, opt + 60, kRaw);                                      // SizeOfHeaders
  const size_t nd = s.is64 ? 108 : 92;
  put32(img, opt + nd, 16);
  for (int i = 0; i < 16; ++i) {
    put32(img, opt + nd + 4 + i * 8, dirs[i][0]);
    put32(img, opt + nd + 8 + i * 8, dirs[i][1]);
  }
  const size_t st = opt + opt_size;
  std::memcpy(&img[st], ".rdata\0\0", 8);
  put32(img, st + 8, static_cast<uint32_t>(sec.size()));
  put32(img, st + 12, kRva);
  put32(img, st + 16, static_cast<uint32_t>(sec.size()));
  put32(img, st + 20, kRaw);
  img.insert(img.end(), sec.begin(), sec.end());
  return PeImage{std::move(img), kRaw};
}

// A PE file as bytes: a DLL (else an EXE), x64 (else i386), with a version resource
// `version` (none when all four are 0) and one import ("f") from each of `imports`.
inline std::string pe_bytes(std::array<uint16_t, 4> version,
                            const std::vector<std::string>& imports = {}, bool x64 = true,
                            bool dll = true) {
  PeSpec spec;
  spec.is64 = x64;
  spec.machine = x64 ? 0x8664 : 0x14c;
  spec.dll = dll;
  for (const auto& i : imports) spec.imports.push_back({i, {"f"}});
  if (version[0] || version[1] || version[2] || version[3]) {
    spec.version_resource = true;
    for (size_t i = 0; i < 4; ++i) spec.file_version[i] = version[i];
  }
  auto img = build_pe(spec);
  return std::string(reinterpret_cast<const char*>(img.bytes.data()), img.bytes.size());
}

}  // namespace dlenv::testbuild
