// Windows-only helpers shared by the *_win32.cc files of the platform layer:
// UTF-8 <-> UTF-16 conversion and the text of a Win32 error code. dlenv keeps every
// string in UTF-8; these are the only places that see wide strings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dlenv::win32 {

// Invalid input never throws: bad UTF-8 / unpaired surrogates become U+FFFD.
std::wstring widen(std::string_view utf8);
std::string narrow(std::wstring_view utf16);

// FormatMessageW text of a GetLastError() code, without the trailing newline or
// period, e.g. 126 -> "The specified module could not be found"; "Win32 error N"
// when the system has no text for it.
std::string error_text(uint32_t code);

// A path for the wide Win32 calls: '/' becomes '\'. Drive letters, UNC and
// relative paths are kept as they are.
std::wstring native_path(std::string_view path);

// "\\?\C:\x" -> "C:\x", "\\?\UNC\srv\share" -> "\\srv\share" (GetFinalPathNameByHandleW).
std::string strip_verbatim_prefix(std::string path);

// Appends one argument to a command line, quoted the way CommandLineToArgvW and
// the C runtime split it.
void append_quoted(std::wstring& cmd, const std::wstring& arg);

}  // namespace dlenv::win32
