// Error and Result: every fallible library call returns Result<T>; the message
// names the file/library/version involved so the CLI can print it as is.
#pragma once

#include <expected>
#include <string>
#include <utility>

namespace dlenv {

struct Error {
  std::string message;
};

template <class T>
using Result = std::expected<T, Error>;

inline std::unexpected<Error> fail(std::string message) {
  return std::unexpected<Error>(Error{std::move(message)});
}

}  // namespace dlenv
