// ELF reader: identity (class, machine, OS ABI, type) and the dynamic section
// (DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH). Every read is bounds-checked.
// parse_elf returns nullopt-in-Result for "not an ELF file" and an Error for a
// corrupt one, so callers can tell "not mine" from "broken".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/bytes.h"
#include "util/result.h"

namespace dlenv {

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
};

// "x86-64", "aarch64", "i386", ... or "machine 0xNN".
std::string elf_machine_name(uint16_t machine);

// nullopt: not an ELF file (bad magic). Error: ELF magic but corrupt/truncated
// headers (the message says which structure). `name` is used in messages.
Result<std::optional<ElfInfo>> parse_elf(ByteView bytes, const std::string& name);

// Scans the read-only data of an ELF for NUL-terminated strings that start with
// `prefix` (e.g. "libcublasLt.so.") and returns the distinct ones found, in
// file order. Used for libraries loaded with dlopen by name (cuDNN 9 -> cuBLASLt).
// Read-only data = sections .rodata, .rodata.*, .lrodata, .lrodata.* and .dynstr
// when section headers exist, else the PT_LOAD segments that are neither
// writable nor executable. A match inside a longer string yields the text from
// the prefix to the NUL; only printable-ASCII results are returned. Not-ELF or
// corrupt headers give an empty result.
std::vector<std::string> elf_find_strings(ByteView bytes, const std::string& prefix,
                                          size_t max_results = 16);

}  // namespace dlenv
