// Reading a file of an untrusted tree (an extracted cuDNN download) without
// following links and without blocking: every directory on the way is opened
// relative to its parent with O_NOFOLLOW, the file itself with O_NOFOLLOW and
// O_NONBLOCK, and the opened descriptor must be a regular file (fstat) before a
// byte is read. A file swapped for a link (or a directory for a link) after the
// tree was listed, a FIFO, socket or device is refused with an Error naming it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "util/result.h"

namespace dlenv {

// `rel`: '/'-separated, relative, no "..". Error when the file is larger than
// `max_bytes` (checked on the descriptor, and while reading).
Result<std::string> read_file_beneath(const std::string& dir, const std::string& rel,
                                      uint64_t max_bytes);

// The same file handed to `piece` in order, a bounded piece at a time (`offset`:
// where the piece starts), so a file of any size is read in bounded memory. Returns
// the number of bytes read; an Error from `piece` stops the read and is returned.
using FilePiece = std::function<Result<void>(uint64_t offset, std::string_view piece)>;
Result<uint64_t> stream_file_beneath(const std::string& dir, const std::string& rel,
                                     uint64_t max_bytes, const FilePiece& piece);

}  // namespace dlenv
