// Reading a file of an untrusted tree (an extracted cuDNN download) without
// following links and without blocking: every directory on the way is opened
// relative to its parent with O_NOFOLLOW, the file itself with O_NOFOLLOW and
// O_NONBLOCK, and the opened descriptor must be a regular file (fstat) before a
// byte is read. A file swapped for a link (or a directory for a link) after the
// tree was listed, a FIFO, socket or device is refused with an Error naming it.
#pragma once

#include <cstdint>
#include <string>

#include "util/result.h"

namespace dlenv {

// `rel`: '/'-separated, relative, no "..". Error when the file is larger than
// `max_bytes` (checked on the descriptor, and while reading).
Result<std::string> read_file_beneath(const std::string& dir, const std::string& rel,
                                      uint64_t max_bytes);

}  // namespace dlenv
