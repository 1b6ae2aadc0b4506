#include <io.h>

#include "cli/live_probe_cmd.h"

namespace dlenv {

int take_stdout_for_protocol() {
  const int fd = ::_dup(1);
  if (fd < 0) return 1;
  ::_dup2(2, 1);
  return fd;
}

void write_protocol_line(int fd, const char* data, unsigned long size) {
  while (size > 0) {
    const int n = ::_write(fd, data, static_cast<unsigned>(size));
    if (n <= 0) return;  // the parent is gone: nothing to tell
    data += n;
    size -= static_cast<unsigned long>(n);
  }
}

}  // namespace dlenv
