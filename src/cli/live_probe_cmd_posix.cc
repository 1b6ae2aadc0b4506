#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "cli/live_probe_cmd.h"

namespace dlenv {

int take_stdout_for_protocol() {
  const int fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (fd < 0) return STDOUT_FILENO;
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  return fd;
}

void write_protocol_line(int fd, const char* data, unsigned long size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone: nothing to tell
    data += n;
    size -= static_cast<unsigned long>(n);
  }
}

}  // namespace dlenv
