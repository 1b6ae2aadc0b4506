#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "platform/replace_file.h"
#include "util/strings.h"

namespace dlenv {

Result<void> replace_file_atomically(const std::string& path, std::string_view data,
                                     uint32_t mode) {
  std::string dir = path_dirname(path);
  if (dir.empty()) dir = ".";
  std::string temp = path_join(dir, "." + path_basename(path) + ".tmp.XXXXXX");
  std::vector<char> name(temp.begin(), temp.end());
  name.push_back('\0');
  int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0)
    return fail(path + ": cannot create a temporary file in " + dir + ": " + std::strerror(errno));
  auto failed = [&](const char* what) -> Result<void> {
    int err = errno;
    if (fd >= 0) ::close(fd);
    ::unlink(name.data());
    return fail(path + ": " + what + ": " + std::strerror(err));
  };
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return failed("write");
    done += static_cast<size_t>(n);
  }
  if (::fchmod(fd, static_cast<mode_t>(mode & 07777)) != 0) return failed("chmod");
  if (::fsync(fd) != 0) return failed("flush");
  if (::close(fd) != 0) {
    fd = -1;
    return failed("close");
  }
  fd = -1;
  if (::rename(name.data(), path.c_str()) != 0) return failed("rename");
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);  // the rename made durable; best effort (some file systems refuse)
    ::close(dfd);
  }
  return {};
}

}  // namespace dlenv
