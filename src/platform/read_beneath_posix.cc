#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "platform/read_beneath.h"
#include "util/strings.h"

namespace dlenv {
namespace {

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

const char* kind_of(mode_t m) {
  if (S_ISLNK(m)) return "a symbolic link";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
  if (S_ISDIR(m)) return "a directory";
  return "not a regular file";
}

}  // namespace

Result<uint64_t> stream_file_beneath(const std::string& dir, const std::string& rel,
                                     uint64_t max_bytes, const FilePiece& piece) {
  const std::string shown = dir + "/" + rel;
  auto refused = [&](const std::string& why) {
    return fail("refusing to read " + shown + ": " + why);
  };
  auto parts = split(rel, '/');
  if (parts.empty()) return refused("no file name");
  auto cur = std::make_unique<Fd>(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (cur->fd < 0) return refused(std::strerror(errno));
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& c = parts[i];
    if (c.empty() || c == "." || c == "..") return refused("\"" + c + "\" in the path");
    const bool last = i + 1 == parts.size();
    const int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (last ? 0 : O_DIRECTORY);
    auto next = std::make_unique<Fd>(::openat(cur->fd, c.c_str(), flags));
    if (next->fd < 0) {
      const int e = errno;
      struct stat st {};
      if (::fstatat(cur->fd, c.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode) &&
          !(S_ISDIR(st.st_mode) && !last)) {
        return refused(c + " is " + kind_of(st.st_mode) + " now (it changed after it was listed)");
      }
      return refused(std::strerror(e));
    }
    cur = std::move(next);
  }
  struct stat st {};
  if (::fstat(cur->fd, &st) != 0) return refused(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return refused(std::string("it is ") + kind_of(st.st_mode));
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return refused("it is larger (" + human_bytes(static_cast<unsigned long long>(st.st_size)) +
                   ") than the " + human_bytes(max_bytes) + " expected");
  }
  std::string buf(1u << 20, '\0');
  uint64_t got = 0;
  while (true) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), max_bytes - got));
    if (want == 0) break;
    ssize_t n = ::read(cur->fd, buf.data(), want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return refused(std::strerror(errno));
    if (n == 0) break;
    if (auto r = piece(got, std::string_view(buf.data(), static_cast<size_t>(n))); !r) {
      return std::unexpected(r.error());
    }
    got += static_cast<uint64_t>(n);
  }
  return got;
}

}  // namespace dlenv
