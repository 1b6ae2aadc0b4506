// DynamicLibrary on Windows: LoadLibraryExW / GetProcAddress / GetModuleFileNameW /
// FreeLibrary. A failed load keeps GetLastError()'s number and its FormatMessage text.
#include <windows.h>

#include <utility>

#include "platform/dynamic_library.h"
#include "platform/win32_text.h"
#include "util/strings.h"

namespace dlenv {
namespace {

thread_local int t_last_error = 0;

bool has_separator(std::string_view s) {
  return s.find_first_of("\\/") != std::string_view::npos;
}

// The winerror.h names of the codes LoadLibrary gives for broken CUDA installs, so a
// message reads the same whatever language (or Wine version) FormatMessage speaks.
const char* error_name(DWORD code) {
  switch (code) {
    case ERROR_FILE_NOT_FOUND: return "ERROR_FILE_NOT_FOUND";
    case ERROR_PATH_NOT_FOUND: return "ERROR_PATH_NOT_FOUND";
    case ERROR_ACCESS_DENIED: return "ERROR_ACCESS_DENIED";
    case ERROR_MOD_NOT_FOUND: return "ERROR_MOD_NOT_FOUND";
    case ERROR_PROC_NOT_FOUND: return "ERROR_PROC_NOT_FOUND";
    case ERROR_INVALID_ORDINAL: return "ERROR_INVALID_ORDINAL";
    case ERROR_BAD_EXE_FORMAT: return "ERROR_BAD_EXE_FORMAT";
    case ERROR_EXE_MACHINE_TYPE_MISMATCH: return "ERROR_EXE_MACHINE_TYPE_MISMATCH";
    case ERROR_DLL_INIT_FAILED: return "ERROR_DLL_INIT_FAILED";
    case ERROR_COMMITMENT_LIMIT: return "ERROR_COMMITMENT_LIMIT";
    case ERROR_NOT_ENOUGH_MEMORY: return "ERROR_NOT_ENOUGH_MEMORY";
    case ERROR_SXS_CANT_GEN_ACTCTX: return "ERROR_SXS_CANT_GEN_ACTCTX";
    default: return nullptr;
  }
}

std::string module_file_name(HMODULE module) {
  std::wstring buf(MAX_PATH, L'\0');
  for (;;) {
    const DWORD n = ::GetModuleFileNameW(module, buf.data(), static_cast<DWORD>(buf.size()));
    if (n == 0) return {};
    if (n < buf.size()) {
      buf.resize(n);
      return win32::strip_verbatim_prefix(win32::narrow(buf));
    }
    if (buf.size() >= 32768) return {};
    buf.resize(buf.size() * 2);
  }
}

std::wstring full_path(const std::wstring& path) {
  const DWORD n = ::GetFullPathNameW(path.c_str(), 0, nullptr, nullptr);
  if (n == 0) return path;
  std::wstring out(n, L'\0');
  const DWORD m = ::GetFullPathNameW(path.c_str(), n, out.data(), nullptr);
  if (m == 0 || m >= n) return path;
  out.resize(m);
  return out;
}

}  // namespace

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      name_(std::move(other.name_)),
      loaded_path_(std::move(other.loaded_path_)) {}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) ::FreeLibrary(static_cast<HMODULE>(handle_));
    handle_ = std::exchange(other.handle_, nullptr);
    name_ = std::move(other.name_);
    loaded_path_ = std::move(other.loaded_path_);
  }
  return *this;
}

DynamicLibrary::~DynamicLibrary() {
  if (handle_ != nullptr) ::FreeLibrary(static_cast<HMODULE>(handle_));
}

Result<DynamicLibrary> DynamicLibrary::open(const std::string& name_or_path) {
  t_last_error = 0;
  if (name_or_path.empty()) {
    t_last_error = ERROR_INVALID_PARAMETER;
    return fail("cannot load a library with an empty name");
  }
  // A path (with a directory) is made absolute and loaded with the altered search
  // order, so its dependencies are looked for beside it first (as Python's ctypes
  // and most programs that load CUDA libraries by path expect). A bare name goes
  // through the standard DLL search order.
  std::wstring target = win32::native_path(name_or_path);
  DWORD flags = 0;
  if (has_separator(name_or_path)) {
    target = full_path(target);
    flags = LOAD_WITH_ALTERED_SEARCH_PATH;
  }
  // No "cannot find the file" / bad-image dialog boxes: the error comes back as a code.
  DWORD old_mode = 0;
  const BOOL mode_set =
      ::SetThreadErrorMode(SEM_FAILCRITICALERRORS | SEM_NOOPENFILEERRORBOX, &old_mode);
  ::SetLastError(0);
  HMODULE module = ::LoadLibraryExW(target.c_str(), nullptr, flags);
  const DWORD err = module == nullptr ? ::GetLastError() : 0;
  if (mode_set) ::SetThreadErrorMode(old_mode, nullptr);
  if (module == nullptr) {
    t_last_error = static_cast<int>(err);
    std::string code = std::to_string(err);
    if (const char* n = error_name(err)) code += std::string(" (") + n + ")";
    return fail("cannot load " + name_or_path + ": LoadLibrary error " + code + ": " +
                win32::error_text(err));
  }
  DynamicLibrary lib;
  lib.handle_ = module;
  lib.name_ = name_or_path;
  lib.loaded_path_ = module_file_name(module);
  return lib;
}

Result<DynamicLibrary> DynamicLibrary::open_isolated(const std::string& path) {
  // Windows has no loader namespaces; a load by full path already maps that file
  // even when a DLL with the same name is loaded from elsewhere.
  return open(path);
}

int DynamicLibrary::last_error_code() {
  return t_last_error;
}

void* DynamicLibrary::symbol(const char* name) const {
  if (handle_ == nullptr || name == nullptr) return nullptr;
  return reinterpret_cast<void*>(::GetProcAddress(static_cast<HMODULE>(handle_), name));
}

std::string DynamicLibrary::loaded_path() const {
  return handle_ != nullptr ? loaded_path_ : "";
}

}  // namespace dlenv
