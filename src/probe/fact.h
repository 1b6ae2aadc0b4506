// Fact<T>: a value or the reason there is none, plus its source.
#pragma once

#include <optional>
#include <string>

namespace dlenv {

enum class FactStatus {
  ok,
  not_found,
  not_supported,
  permission_denied,
  timed_out,
  error,
  skipped,  // deliberately not probed (e.g. live probes under --root)
};

const char* fact_status_name(FactStatus s);  // "ok", "not-found", ...

template <class T>
struct Fact {
  std::optional<T> value;
  FactStatus status = FactStatus::not_found;
  std::string reason;  // why there is no value (empty when ok)
  std::string source;  // where the value (or the failure) came from

  static Fact known(T v, std::string src) {
    Fact f;
    f.value = std::move(v);
    f.status = FactStatus::ok;
    f.source = std::move(src);
    return f;
  }
  static Fact unknown(FactStatus st, std::string why, std::string src = {}) {
    Fact f;
    f.status = st;
    f.reason = std::move(why);
    f.source = std::move(src);
    return f;
  }
  bool ok() const { return value.has_value(); }
  explicit operator bool() const { return ok(); }
  const T& operator*() const { return *value; }
  const T* operator->() const { return &*value; }
};

}  // namespace dlenv
