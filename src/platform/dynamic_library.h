// DynamicLibrary: RAII dlopen/LoadLibrary with the loader's own error text kept,
// and symbol tables: a list of {name, slot, required, newest _vN} bound in one go.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "util/result.h"

namespace dlenv {

class DynamicLibrary {
 public:
  DynamicLibrary() = default;
  DynamicLibrary(DynamicLibrary&& other) noexcept;
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  ~DynamicLibrary();

  // dlopen(name, RTLD_NOW | RTLD_LOCAL) / LoadLibraryExW. The error carries the
  // loader's message (dlerror text; Win32 code and its text) and the name.
  static Result<DynamicLibrary> open(const std::string& name_or_path);

  // Like open(), but in a new loader namespace (dlmopen LM_ID_NEWLM on Linux) so
  // the copy at `path` is loaded even when a library with the same soname is
  // already loaded. Falls back to open() where namespaces are unavailable.
  static Result<DynamicLibrary> open_isolated(const std::string& path);

  // The loader's error number for the last failed open()/open_isolated() on this
  // thread: GetLastError() on Windows (126 module not found, 127 procedure not found,
  // 193 not a valid Win32 application, 1114 DLL initialisation failed); 0 on POSIX,
  // where dlopen reports only text (and after a successful open).
  static int last_error_code();

  bool is_open() const { return handle_ != nullptr; }
  void* symbol(const char* name) const;
  // The file the loader really mapped (dlinfo link map / GetModuleFileNameW), as an
  // absolute path (symlinks in it are not resolved). Empty when not open.
  std::string loaded_path() const;
  const std::string& requested_name() const { return name_; }

 private:
  void* handle_ = nullptr;
  std::string name_;
  std::string loaded_path_;  // absolute; found at open() (a relative one depends on the cwd)
};

struct SymbolSpec {
  const char* name;  // base name, e.g. "nvmlInit"
  void** slot;       // where the address goes (nullptr when not found)
  bool required;
  int newest_version;  // try name_vN ... name_v2 then name; 0/1 = only name
};

struct BoundSymbols {
  std::vector<std::string> bound_names;  // the exact names that bound, e.g. "nvmlInit_v2"
  std::vector<std::string> missing_optional;
};

// Binds every spec; fails listing every missing required symbol and the library path.
Result<BoundSymbols> bind_symbols(const DynamicLibrary& lib, std::span<const SymbolSpec> specs);

struct LibraryWithSymbols {
  DynamicLibrary lib;
  BoundSymbols bound;
};

// The first of `candidates` (names or paths, in order) that opens and binds every
// required symbol of `specs` and that `accept` takes (it returns "" to take the library,
// else why not; no `accept` takes every library). On return the slots of `specs` hold
// that library's addresses. Fails with each candidate's reason (the loader's error, the
// missing symbols with the library's path, or accept's text) joined by "; ".
Result<LibraryWithSymbols> open_first_with_symbols(
    std::span<const std::string> candidates, std::span<const SymbolSpec> specs,
    const std::function<std::string(const DynamicLibrary&)>& accept = {});

}  // namespace dlenv
