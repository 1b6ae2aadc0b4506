#include "platform/read_beneath.h"

namespace dlenv {

Result<std::string> read_file_beneath(const std::string& dir, const std::string& rel,
                                      uint64_t max_bytes) {
  std::string out;
  auto n = stream_file_beneath(dir, rel, max_bytes, [&](uint64_t, std::string_view piece) {
    out.append(piece);
    return Result<void>{};
  });
  if (!n) return std::unexpected(n.error());
  return out;
}

}  // namespace dlenv
