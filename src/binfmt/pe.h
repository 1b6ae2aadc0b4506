// PE/COFF reader (Windows DLLs and EXEs): machine and bitness, imports
// (including delay-load), exports (including forwarders) and the
// VS_VERSIONINFO file/product versions. Every read is bounds-checked.
// parse_pe returns nullopt-in-Result for "not a PE file" (no MZ header, or an
// MZ stub whose e_lfanew does not lead to "PE\0\0": a DOS/NE/LE program) and
// an Error for a corrupt one (the message names the file and the structure).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/bytes.h"
#include "util/result.h"

namespace dlenv {

struct PeImport {
  std::string dll;  // as written, e.g. "cublasLt64_12.dll"
  // Imported names; by-ordinal imports appear as "#N".
  std::vector<std::string> functions;
};

struct PeExport {
  std::string name;  // empty for an ordinal-only export
  uint32_t ordinal = 0;
  std::optional<std::string> forwarder;  // "OTHERDLL.Function" for a forwarded export
};

struct PeInfo {
  uint16_t machine = 0;  // IMAGE_FILE_MACHINE_* (0x8664 x64, 0x14c x86, 0xaa64 arm64)
  bool is_64 = false;    // PE32+ optional header
  bool is_dll = false;   // IMAGE_FILE_DLL
  uint16_t characteristics = 0;
  std::vector<PeImport> imports;
  std::vector<PeImport> delay_imports;
  std::optional<std::string> export_name;  // the DLL's own name in its export directory
  std::vector<PeExport> exports;
  std::optional<std::string> file_version;     // "9.1.0.70" from VS_FIXEDFILEINFO
  std::optional<std::string> product_version;  // "9.1.0.70"
  // Where the headers (SizeOfHeaders) and the sections' raw data (PointerToRawData +
  // SizeOfRawData) end: a whole file shorter than this is truncated.
  uint64_t file_bytes_needed = 0;
};

// "x64", "x86", "arm64", "arm", or "machine 0xNNNN".
std::string pe_machine_name(uint16_t machine);

Result<std::optional<PeInfo>> parse_pe(ByteView bytes, const std::string& name);

// The pre-check before a real LoadLibrary of `file` (the whole file): nullopt when its
// headers parse and every section's raw data lies inside the file (or it is not a PE file:
// the loader refuses that with 193 by itself); otherwise what is wrong, with the byte counts.
std::optional<std::string> pe_load_problem(ByteView file);

}  // namespace dlenv
