// Registry values from `reg export` files (.reg), so a --root analysis of a copied
// Windows system can see its registry: `reg export HKCU\Environment user.reg` and
// `reg export "HKLM\SYSTEM\CurrentControlSet\Control\Session Manager\Environment" m.reg`.
// Reads "Windows Registry Editor Version 5.00" files (UTF-16LE with BOM, as reg.exe
// writes them, or UTF-8) and REGEDIT4 files; string values ("x"), REG_EXPAND_SZ and
// REG_MULTI_SZ as hex(2)/hex(7) bytes (continuation lines included), REG_SZ as hex(1).
// Other value types are skipped. Key and value names match case-insensitively.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "platform/registry.h"
#include "util/result.h"

namespace dlenv {

// hive + lower-case key path ("environment") -> lower-case value name -> value (UTF-8).
struct RegistryData {
  std::map<std::pair<RegistryHive, std::string>, std::map<std::string, std::string>> keys;
};

// Parses one .reg file's bytes. Errors name the file and line.
Result<RegistryData> parse_reg_file(std::string_view bytes, std::string_view file_name);
// Merges several parsed files (a later value wins) into a reader.
RegistryReader registry_from_data(RegistryData data);

}  // namespace dlenv
