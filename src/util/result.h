// Error and Result: every fallible library call returns Result<T>; the message
// names the file/library/version involved so the CLI can print it as is, and the code
// says what kind of failure it was for callers that act on the kind (never on the text).
#pragma once

#include <expected>
#include <string>
#include <type_traits>
#include <utility>

namespace dlenv {

enum class ErrorCode {
  failed,         // no more specific kind
  not_found,      // a file, library, process or entry that is not there
  access_denied,  // the system refused (permissions, a protected process)
  invalid,        // input that is not what it should be (corrupt, unsafe, unparsable)
  limit,          // over a size, count or time bound
  busy,           // held by someone else (a lock)
};

struct Error {
  std::string message;
  ErrorCode code = ErrorCode::failed;
};

// std::expected that must not be ignored: a dropped Result is a failure nobody saw.
template <class T>
class [[nodiscard]] Result : public std::expected<T, Error> {
 public:
  using std::expected<T, Error>::expected;
  Result(const std::expected<T, Error>& e) : std::expected<T, Error>(e) {}
  Result(std::expected<T, Error>&& e) : std::expected<T, Error>(std::move(e)) {}
};

inline std::unexpected<Error> fail(std::string message, ErrorCode code = ErrorCode::failed) {
  return std::unexpected<Error>(Error{std::move(message), code});
}

}  // namespace dlenv
