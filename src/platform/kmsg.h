// The kernel's message ring buffer (/dev/kmsg), read without blocking. Reading
// it needs privilege on most systems (kernel.dmesg_restrict); callers treat an
// error as "not readable", never as a failure of the whole probe.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "util/result.h"

namespace dlenv {

struct KernelLogRead {
  std::vector<std::string> messages;  // message text of each record (prefix stripped)
  size_t records = 0;                 // records read (including ones dropped by max_messages)
  bool truncated = false;             // stopped at max_records
};

// Reads every record currently in /dev/kmsg (this boot), oldest first, and
// returns only those for which `keep` returns true. Never blocks. The error names
// /dev/kmsg and the reason ("permission denied", "not supported on this OS").
Result<KernelLogRead> read_kernel_ring_buffer(bool (*keep)(const std::string& message),
                                              size_t max_records = 200000);

}  // namespace dlenv
