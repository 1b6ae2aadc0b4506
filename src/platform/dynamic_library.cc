// bind_symbols: the same on every platform (DynamicLibrary::symbol is per OS).
#include "platform/dynamic_library.h"

#include "util/strings.h"

namespace dlenv {

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

Result<LibraryWithSymbols> open_first_with_symbols(
    std::span<const std::string> candidates, std::span<const SymbolSpec> specs,
    const std::function<std::string(const DynamicLibrary&)>& accept) {
  if (candidates.empty()) return fail("no library to try");
  std::string failures;
  auto failed = [&](const std::string& why) { failures += (failures.empty() ? "" : "; ") + why; };
  for (const auto& c : candidates) {
    auto lib = DynamicLibrary::open(c);
    if (!lib) {
      failed(lib.error().message);
      continue;
    }
    auto bound = bind_symbols(*lib, specs);
    if (!bound) {
      failed(bound.error().message);
      continue;
    }
    if (accept) {
      if (std::string why = accept(*lib); !why.empty()) {
        failed(why);
        continue;
      }
    }
    return LibraryWithSymbols{std::move(*lib), std::move(*bound)};
  }
  return fail(failures);
}

}  // namespace dlenv
