// Replacing a whole file so that a reader sees the old content or the new, never a part:
// `dlenv doctor --textfile` (node-exporter's textfile collector reads the file at any time).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/result.h"

namespace dlenv {

// Writes `data` to a new temporary file in the directory of `path` (a hidden name that does
// not end in `path`'s extension, so a collector reading "*.prom" never sees it), flushes it
// to disk, gives it `mode` and renames it over `path`; on POSIX the directory is flushed
// too. On any failure the temporary file is removed and `path` is left as it was.
Result<void> replace_file_atomically(const std::string& path, std::string_view data,
                                     uint32_t mode = 0644);

}  // namespace dlenv
