// DynamicLibrary on POSIX: dlopen/dlsym/dlinfo/dlclose.
#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <utility>

#include "platform/dynamic_library.h"
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
  // instead of the loader handing back the first one.
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

void* DynamicLibrary::symbol(const char* name) const {
  if (handle_ == nullptr || name == nullptr) return nullptr;
  return ::dlsym(handle_, name);
}

std::string DynamicLibrary::loaded_path() const {
  return handle_ != nullptr ? loaded_path_ : "";
}

Result<BoundSymbols> bind_symbols(const DynamicLibrary& lib, std::span<const SymbolSpec> specs) {
  if (!lib.is_open()) {
    return fail("cannot bind symbols of " + lib.requested_name() + ": library is not loaded");
  }
  BoundSymbols bound;
  std::vector<std::string> missing_required;
  for (const SymbolSpec& spec : specs) {
    const std::string base = spec.name != nullptr ? spec.name : "";
    void* address = nullptr;
    std::string bound_name;
    for (int v = spec.newest_version; v >= 2 && address == nullptr; --v) {
      std::string candidate = base + "_v" + std::to_string(v);
      address = lib.symbol(candidate.c_str());
      if (address != nullptr) bound_name = std::move(candidate);
    }
    if (address == nullptr) {
      address = lib.symbol(base.c_str());
      if (address != nullptr) bound_name = base;
    }
    if (spec.slot != nullptr) *spec.slot = address;
    if (address != nullptr) {
      bound.bound_names.push_back(std::move(bound_name));
    } else if (spec.required) {
      missing_required.push_back(base);
    } else {
      bound.missing_optional.push_back(base);
    }
  }
  if (!missing_required.empty()) {
    std::string path = lib.loaded_path();
    return fail("missing required symbol" + std::string(missing_required.size() > 1 ? "s" : "") +
                " in " + path + ": " + join(missing_required, ", "));
  }
  return bound;
}

}  // namespace dlenv
