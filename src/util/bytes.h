// Checked reads of untrusted bytes (ELF, PE, ld.so.cache...). Every accessor
// bounds-checks and returns nullopt instead of reading past the end, so a
// corrupt or truncated file can never crash a parser.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>

namespace dlenv {

class ByteView {
 public:
  ByteView() = default;
  ByteView(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  explicit ByteView(std::string_view s)
      : data_(reinterpret_cast<const uint8_t*>(s.data())), size_(s.size()) {}

  size_t size() const { return size_; }
  const uint8_t* data() const { return data_; }

  bool in_bounds(uint64_t offset, uint64_t length) const {
    return offset <= size_ && length <= size_ - offset;
  }

  // Sub-view [offset, offset+length) or nullopt when out of bounds.
  std::optional<ByteView> sub(uint64_t offset, uint64_t length) const {
    if (!in_bounds(offset, length)) return std::nullopt;
    return ByteView(data_ + offset, static_cast<size_t>(length));
  }

  template <class T>
  std::optional<T> read(uint64_t offset, bool big_endian = false) const {
    static_assert(std::is_integral_v<T>);
    if (!in_bounds(offset, sizeof(T))) return std::nullopt;
    T value;
    std::memcpy(&value, data_ + offset, sizeof(T));
    if (big_endian) value = byteswap_value(value);
    return value;
  }

  // NUL-terminated string starting at offset, at most max_len bytes long.
  // nullopt when offset is out of bounds or no terminator is found in range.
  std::optional<std::string_view> cstring(uint64_t offset, size_t max_len = 4096) const {
    if (offset >= size_) return std::nullopt;
    size_t avail = size_ - static_cast<size_t>(offset);
    size_t limit = avail < max_len ? avail : max_len;
    const void* nul = std::memchr(data_ + offset, 0, limit);
    if (!nul) return std::nullopt;
    return std::string_view(reinterpret_cast<const char*>(data_ + offset),
                            static_cast<const uint8_t*>(nul) - (data_ + offset));
  }

  std::string_view as_string_view() const {
    return std::string_view(reinterpret_cast<const char*>(data_), size_);
  }

 private:
  template <class T>
  static T byteswap_value(T v) {
    T out = 0;
    for (size_t i = 0; i < sizeof(T); ++i) {
      out = static_cast<T>((out << 8) | ((v >> (8 * i)) & 0xff));
    }
    return out;
  }

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace dlenv
