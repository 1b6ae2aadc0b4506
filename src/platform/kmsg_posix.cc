// /dev/kmsg: one record per read(2); O_NONBLOCK makes the read at the end of the
// buffer fail with EAGAIN instead of waiting for new messages.
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "platform/kmsg.h"

namespace dlenv {

Result<KernelLogRead> read_kernel_ring_buffer(bool (*keep)(const std::string& message),
                                              size_t max_records) {
  int fd = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return fail("/dev/kmsg: " + std::string(e == EPERM || e == EACCES ? "permission denied (needs "
                                                                        "root or "
                                                                        "kernel.dmesg_restrict=0)"
                                                                      : std::strerror(e)));
  }
  KernelLogRead out;
  char buf[8192];
  for (;;) {
    if (out.records >= max_records) {
      out.truncated = true;
      break;
    }
    ssize_t n = ::read(fd, buf, sizeof buf - 1);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) continue;  // the record was overwritten while we read: skip it
      if (errno == EAGAIN) break;    // end of the buffer
      int e = errno;
      ::close(fd);
      if (out.records == 0) {
        return fail("/dev/kmsg: " +
                    std::string(e == EPERM ? "permission denied" : std::strerror(e)));
      }
      return out;
    }
    if (n == 0) break;
    ++out.records;
    std::string rec(buf, static_cast<size_t>(n));
    // "PRI,SEQ,TIME,FLAGS[,...];message\n continuation lines"
    size_t semi = rec.find(';');
    std::string msg = semi == std::string::npos ? rec : rec.substr(semi + 1);
    if (size_t nl = msg.find('\n'); nl != std::string::npos) msg.resize(nl);
    if (!keep || keep(msg)) out.messages.push_back(std::move(msg));
  }
  ::close(fd);
  return out;
}

}  // namespace dlenv
