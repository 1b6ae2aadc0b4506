// DynamicLibrary on POSIX: dlopen/dlsym/dlinfo/dlclose.
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <link.h>

#include <cstdlib>
#include <utility>

#include "platform/dynamic_library.h"
#include "platform/glibc_compat.h"
#include "util/strings.h"

namespace dlenv {

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      name_(std::move(other.name_)),
      loaded_path_(std::move(other.loaded_path_)) {}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) ::dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    name_ = std::move(other.name_);
    loaded_path_ = std::move(other.loaded_path_);
  }
  return *this;
}

DynamicLibrary::~DynamicLibrary() {
  if (handle_ != nullptr) ::dlclose(handle_);
}

namespace {

// The link map's name of `handle`, made absolute (relative to the current directory
// for a relative dlopen path).
std::string link_map_path(void* handle, const std::string& requested) {
  struct link_map* map = nullptr;
  std::string path;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr) {
    path = map->l_name;
  }
  if (path.empty()) path = requested;
  if (!path.empty() && path.front() != '/') {
    if (char* resolved = ::realpath(path.c_str(), nullptr)) {
      path = resolved;
      std::free(resolved);
    }
  }
  return path;
}

}  // namespace

Result<DynamicLibrary> DynamicLibrary::open(const std::string& name_or_path) {
  ::dlerror();  // clear any stale error
  void* handle = ::dlopen(name_or_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = ::dlerror();
    return fail("cannot load " + name_or_path + ": " +
                (err != nullptr ? std::string(err) : std::string("unknown dlopen error")));
  }
  DynamicLibrary lib;
  lib.handle_ = handle;
  lib.name_ = name_or_path;
  lib.loaded_path_ = link_map_path(handle, name_or_path);
  return lib;
}

Result<DynamicLibrary> DynamicLibrary::open_isolated(const std::string& path) {
  // A fresh link-map namespace: a second copy of a library whose soname is
  // already loaded (two cuDNN 9 copies, say) is really loaded from `path`
  // instead of the loader handing back the first one. Not on glibc < 2.34, where a
  // failed dlopen made by the library from inside that namespace ends the process
  // (platform/glibc_compat.h): there the shared namespace, whose callers check the
  // path they got (a second copy then reports "the loader returned ...").
  static const bool namespaces_safe = dlopen_in_dlmopen_namespace_is_safe(gnu_get_libc_version());
  if (!namespaces_safe) return open(path);
  ::dlerror();
  void* handle = ::dlmopen(LM_ID_NEWLM, path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = ::dlerror();
    std::string why = err != nullptr ? std::string(err) : std::string("unknown dlmopen error");
    // Namespaces are limited (16 in glibc) and some libraries refuse them
    // (static TLS): fall back to the shared namespace, still checked by path.
    auto shared = open(path);
    if (!shared) return fail("cannot load " + path + ": " + why);
    return shared;
  }
  DynamicLibrary lib;
  lib.handle_ = handle;
  lib.name_ = path;
  lib.loaded_path_ = link_map_path(handle, path);
  return lib;
}

int DynamicLibrary::last_error_code() {
  return 0;  // dlerror() has text only
}

void* DynamicLibrary::symbol(const char* name) const {
  if (handle_ == nullptr || name == nullptr) return nullptr;
  return ::dlsym(handle_, name);
}

std::string DynamicLibrary::loaded_path() const {
  return handle_ != nullptr ? loaded_path_ : "";
}

}  // namespace dlenv
