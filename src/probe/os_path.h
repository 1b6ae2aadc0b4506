// Paths of the system being analysed, spelled with its own separator. Logical paths ("/x",
// what --root reads) always use '/'; on Windows (--os windows or dlenv.exe) a path that
// came with a drive letter ("C:\Python311", from PATH or the registry) is continued with
// '\' so that what the user reads is one Windows path, never "C:\Python311/Lib/site-packages".
#pragma once

#include <string>
#include <string_view>

namespace dlenv {

// "C:\x", "c:/x": a Windows path with a drive letter.
bool is_drive_path(std::string_view p);
// path_join, with '\' throughout for a drive path when `windows` (the '/' of both parts
// too: "C:/Python311" + "Lib/site-packages" -> "C:\Python311\Lib\site-packages"); else
// exactly path_join.
std::string path_join_os(std::string_view a, std::string_view b, bool windows);
// path_dirname / path_basename that also split a drive path at '\'.
std::string path_dirname_os(std::string_view p);
std::string path_basename_os(std::string_view p);

}  // namespace dlenv
