// SHA-256 (FIPS 180-4), streamed: `dlenv cudnn inspect` shows an archive's digest and
// `dlenv cudnn install --sha256 HEX` refuses an archive whose digest differs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace dlenv {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view data);
  // The digest as 64 lowercase hex digits; the object is spent afterwards.
  std::string hex_digest();

 private:
  void block(const unsigned char* p);
  std::array<uint32_t, 8> h_;
  unsigned char buf_[64];
  size_t used_ = 0;
  uint64_t total_ = 0;
};

std::string sha256_hex(std::string_view data);

}  // namespace dlenv
