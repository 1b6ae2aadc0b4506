// Windows: each component is checked not to be a reparse point (link or junction)
// before the file is read; unlike the POSIX version this is a check, then an open
// (a swap in between is not caught).
#include <filesystem>
#include <fstream>

#include "platform/read_beneath.h"
#include "platform/win32_text.h"
#include "util/strings.h"

namespace dlenv {

Result<uint64_t> stream_file_beneath(const std::string& dir, const std::string& rel,
                                     uint64_t max_bytes, const FilePiece& piece) {
  namespace sfs = std::filesystem;
  const std::string shown = dir + "/" + rel;
  auto refused = [&](const std::string& why) {
    return fail("refusing to read " + shown + ": " + why);
  };
  sfs::path p(win32::widen(dir));
  auto parts = split(rel, '/');
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].empty() || parts[i] == "." || parts[i] == "..") return refused("bad path");
    p /= win32::widen(parts[i]);
    std::error_code ec;
    auto st = sfs::symlink_status(p, ec);
    if (ec) return refused(ec.message());
    if (sfs::is_symlink(st)) return refused(parts[i] + " is a link now");
    if (i + 1 == parts.size() && !sfs::is_regular_file(st)) return refused("not a regular file");
  }
  std::error_code ec;
  auto size = sfs::file_size(p, ec);
  if (ec) return refused(ec.message());
  if (size > max_bytes) return refused("larger than expected");
  std::ifstream in(p, std::ios::binary);
  if (!in) return refused("cannot open it");
  std::string buf(1u << 20, '\0');
  uint64_t got = 0;
  while (got < max_bytes) {
    in.read(buf.data(),
            static_cast<std::streamsize>(std::min<uint64_t>(buf.size(), max_bytes - got)));
    const auto n = static_cast<size_t>(in.gcount());
    if (n == 0) break;
    if (auto r = piece(got, std::string_view(buf.data(), n)); !r) return std::unexpected(r.error());
    got += n;
  }
  return got;
}

}  // namespace dlenv
