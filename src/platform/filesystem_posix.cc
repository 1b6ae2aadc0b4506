// POSIX FileSystem: the host file system, and a rooted one that resolves every
// symlink itself so that nothing (absolute links, "..", loops) leaves the root.
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <utility>

#include "platform/filesystem.h"
#include "util/strings.h"

namespace dlenv {
namespace {

constexpr int kMaxSymlinks = 40;
// map_file's read fallback for files whose size stat() does not know (/proc, /sys).
constexpr size_t kMaxUnsizedRead = 64u << 20;

std::string errno_text(int err) {
  return std::strerror(err);
}

FileType type_from_mode(mode_t mode) {
  if (S_ISREG(mode)) return FileType::regular;
  if (S_ISDIR(mode)) return FileType::directory;
  if (S_ISLNK(mode)) return FileType::symlink;
  if (S_ISCHR(mode)) return FileType::char_device;
  if (S_ISBLK(mode)) return FileType::block_device;
  return FileType::other;
}

FileStat to_file_stat(const struct stat& st) {
  FileStat out;
  out.type = type_from_mode(st.st_mode);
  out.size = static_cast<uint64_t>(st.st_size);
  out.mode = static_cast<uint32_t>(st.st_mode & 07777);
  out.uid = static_cast<uint32_t>(st.st_uid);
  out.gid = static_cast<uint32_t>(st.st_gid);
  out.mtime = static_cast<int64_t>(st.st_mtime);
  out.mtime_nsec = static_cast<int64_t>(st.st_mtim.tv_nsec);
  out.device = static_cast<uint64_t>(st.st_dev);
  out.inode = static_cast<uint64_t>(st.st_ino);
  return out;
}

// Closes a file descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Reads everything from fd; returns errno on failure, or EFBIG when more than max_bytes.
std::expected<std::string, int> read_all(int fd, size_t max_bytes, size_t size_hint) {
  std::string data;
  if (size_hint > 0) data.reserve(std::min(size_hint, max_bytes) + 1);
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::unexpected(errno);
    }
    if (n == 0) break;
    if (data.size() + static_cast<size_t>(n) > max_bytes) return std::unexpected(EFBIG);
    data.append(buf, static_cast<size_t>(n));
  }
  return data;
}

class MmapFile final : public MappedFile {
 public:
  MmapFile(void* addr, size_t size) : addr_(addr), size_(size) {}
  ~MmapFile() override { ::munmap(addr_, size_); }
  MmapFile(const MmapFile&) = delete;
  MmapFile& operator=(const MmapFile&) = delete;
  ByteView bytes() const override { return ByteView(static_cast<const uint8_t*>(addr_), size_); }
  // MADV_POPULATE_READ (Linux 5.14) maps the pages in one call; older kernels
  // refuse it (EINVAL) and get MADV_WILLNEED, which only starts the reads.
  void prefetch(ByteView part) const override {
    const auto* base = static_cast<const uint8_t*>(addr_);
    if (part.size() == 0 || part.data() < base || part.data() + part.size() > base + size_) return;
    const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const uintptr_t from = reinterpret_cast<uintptr_t>(part.data()) & ~(page - 1);
    const uintptr_t to = reinterpret_cast<uintptr_t>(part.data() + part.size());
    void* at = reinterpret_cast<void*>(from);
#if defined(MADV_POPULATE_READ)
    if (::madvise(at, to - from, MADV_POPULATE_READ) == 0) return;
#endif
    ::madvise(at, to - from, MADV_WILLNEED);
  }

 private:
  void* addr_;
  size_t size_;
};

class BufferFile final : public MappedFile {
 public:
  explicit BufferFile(std::string data) : data_(std::move(data)) {}
  ByteView bytes() const override { return ByteView(std::string_view(data_)); }

 private:
  std::string data_;
};

// Shared implementation: a subclass only decides how a logical path becomes a
// host path (and how it is canonicalised). `describe` names a path in errors.
class PosixFileSystemBase : public FileSystem {
 public:
  Result<std::string> read_file(std::string_view path, size_t max_bytes) const override {
    struct stat st {};
    auto fd = open_file(path, "read", &st);
    if (!fd) return std::unexpected(fd.error());
    if (static_cast<uint64_t>(st.st_size) > max_bytes) {
      return fail(too_big(path, static_cast<uint64_t>(st.st_size), max_bytes));
    }
    auto data = read_all(fd->get(), max_bytes, static_cast<size_t>(st.st_size));
    if (!data) {
      if (data.error() == EFBIG) return fail(too_big(path, std::nullopt, max_bytes));
      return fail("cannot read " + describe(path) + ": " + errno_text(data.error()));
    }
    return std::move(*data);
  }

  Result<size_t> read_at(std::string_view path, uint64_t offset,
                         std::span<char> buffer) const override {
    auto fd = open_file(path, "read", nullptr);
    if (!fd) return std::unexpected(fd.error());
    size_t got = 0;
    while (got < buffer.size()) {
      const ssize_t n = ::pread(fd->get(), buffer.data() + got, buffer.size() - got,
                                static_cast<off_t>(offset + got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return fail("cannot read " + describe(path) + ": " + errno_text(errno));
      if (n == 0) break;
      got += static_cast<size_t>(n);
    }
    return got;
  }

  // The file opened for reading ("cannot <verb> PATH: why" on failure). With `st`,
  // also fstat'ed into it, and a directory refused.
  Result<Fd> open_file(std::string_view path, const char* verb, struct stat* st) const {
    auto fail_with = [&](int e) {
      return fail(std::string("cannot ") + verb + " " + describe(path) + ": " + errno_text(e));
    };
    auto host = resolve_host(path, /*follow_last=*/true);
    if (!host) return fail_with(host.error());
    // O_NONBLOCK: a FIFO (or a device) where a file is expected never hangs the open.
    Fd fd(::open(host->c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    struct stat own {};
    if (!st) st = &own;
    if (fd.get() < 0) {
      const int e = errno;
      // A socket cannot be opened at all (ENXIO): say what it is, not "No such device".
      if (e == ENXIO && ::stat(host->c_str(), st) == 0 && !S_ISREG(st->st_mode)) {
        return fail(not_regular(path, st->st_mode));
      }
      return fail_with(e);
    }
    if (::fstat(fd.get(), st) != 0) return fail_with(errno);
    if (!S_ISREG(st->st_mode)) return fail(not_regular(path, st->st_mode));
    return fd;
  }

  Result<std::unique_ptr<MappedFile>> map_file(std::string_view path) const override {
    struct stat st {};
    auto fd = open_file(path, "map", &st);
    if (!fd) return std::unexpected(fd.error());
    const size_t size = static_cast<size_t>(st.st_size);
    if (S_ISREG(st.st_mode) && size > 0) {
      void* addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd->get(), 0);
      if (addr != MAP_FAILED) return std::unique_ptr<MappedFile>(new MmapFile(addr, size));
    }
    // Empty, unsized (/proc) or unmappable files: read them instead.
    size_t limit = size > 0 ? size : kMaxUnsizedRead;
    auto data = read_all(fd->get(), limit, size);
    if (!data) {
      if (data.error() == EFBIG) return fail(too_big(path, std::nullopt, limit));
      return fail("cannot map " + describe(path) + ": " + errno_text(data.error()));
    }
    return std::unique_ptr<MappedFile>(new BufferFile(std::move(*data)));
  }

  Result<std::vector<DirEntry>> list_dir(std::string_view path) const override {
    auto host = resolve_host(path, /*follow_last=*/true);
    if (!host) return fail("cannot list " + describe(path) + ": " + errno_text(host.error()));
    DIR* dir = ::opendir(host->c_str());
    if (dir == nullptr) return fail("cannot list " + describe(path) + ": " + errno_text(errno));
    std::vector<DirEntry> entries;
    const int dfd = ::dirfd(dir);
    for (;;) {
      errno = 0;
      struct dirent* de = ::readdir(dir);
      if (de == nullptr) {
        const int err = errno;
        ::closedir(dir);
        if (err != 0) return fail("cannot list " + describe(path) + ": " + errno_text(err));
        break;
      }
      std::string_view name(de->d_name);
      if (name == "." || name == "..") continue;
      DirEntry entry;
      entry.name = std::string(name);
      // d_type saves a syscall per entry (big library dirs hold thousands of files);
      // file systems that do not fill it in get an lstat.
      switch (de->d_type) {
        case DT_REG: entry.type = FileType::regular; break;
        case DT_DIR: entry.type = FileType::directory; break;
        case DT_LNK: entry.type = FileType::symlink; break;
        case DT_CHR: entry.type = FileType::char_device; break;
        case DT_BLK: entry.type = FileType::block_device; break;
        default: {
          struct stat st {};
          if (::fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
            entry.type = type_from_mode(st.st_mode);
          }
        }
      }
      entries.push_back(std::move(entry));
    }
    std::sort(entries.begin(), entries.end(),
              [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
    return entries;
  }

  std::optional<FileStat> stat(std::string_view path) const override {
    return do_stat(path, /*follow=*/true);
  }
  std::optional<FileStat> lstat(std::string_view path) const override {
    return do_stat(path, /*follow=*/false);
  }

  Result<std::string> read_link(std::string_view path) const override {
    auto host = resolve_host(path, /*follow_last=*/false);
    if (!host) {
      return fail("cannot read link " + describe(path) + ": " + errno_text(host.error()));
    }
    std::string buf(256, '\0');
    for (;;) {
      ssize_t n = ::readlink(host->c_str(), buf.data(), buf.size());
      if (n < 0) return fail("cannot read link " + describe(path) + ": " + errno_text(errno));
      if (static_cast<size_t>(n) < buf.size()) {
        buf.resize(static_cast<size_t>(n));
        return buf;
      }
      buf.resize(buf.size() * 2);
    }
  }

  bool can_read(std::string_view path) const override {
    auto host = resolve_host(path, /*follow_last=*/true);
    return host && ::access(host->c_str(), R_OK) == 0;
  }
  bool can_write(std::string_view path) const override {
    auto host = resolve_host(path, /*follow_last=*/true);
    return host && ::access(host->c_str(), W_OK) == 0;
  }

 protected:
  // The host path to hand to a system call, or an errno (ELOOP...).
  virtual std::expected<std::string, int> resolve_host(std::string_view path,
                                                       bool follow_last) const = 0;
  virtual std::string describe(std::string_view path) const = 0;

 private:
  std::optional<FileStat> do_stat(std::string_view path, bool follow) const {
    auto host = resolve_host(path, follow);
    if (!host) return std::nullopt;
    struct stat st {};
    int rc = follow ? ::stat(host->c_str(), &st) : ::lstat(host->c_str(), &st);
    if (rc != 0) return std::nullopt;
    return to_file_stat(st);
  }

  // A FIFO, socket or device where a file is expected: named, never read (a FIFO would
  // block, a device like /dev/zero never ends).
  std::string not_regular(std::string_view path, mode_t mode) const {
    const char* what = S_ISFIFO(mode)   ? "a FIFO"
                       : S_ISSOCK(mode) ? "a socket"
                       : S_ISCHR(mode)  ? "a character device"
                       : S_ISBLK(mode)  ? "a block device"
                       : S_ISDIR(mode)  ? "a directory"
                                        : "not a file";
    return "not reading " + describe(path) + ": it is " + what + ", not a regular file";
  }

  std::string too_big(std::string_view path, std::optional<uint64_t> size, size_t max) const {
    std::string msg = "cannot read " + describe(path) + ": file is ";
    msg += size ? std::to_string(*size) + " bytes" : "larger than the limit";
    msg += " (limit " + std::to_string(max) + " bytes)";
    return msg;
  }
};

class RealFileSystem final : public PosixFileSystemBase {
 public:
  Result<std::string> real_path(std::string_view path) const override {
    std::string p(path);
    char* resolved = ::realpath(p.c_str(), nullptr);
    if (resolved == nullptr) return fail("cannot resolve " + p + ": " + errno_text(errno));
    std::string out(resolved);
    std::free(resolved);
    return out;
  }
  std::string host_path(std::string_view path) const override { return std::string(path); }
  bool is_rooted() const override { return false; }

 protected:
  std::expected<std::string, int> resolve_host(std::string_view path, bool) const override {
    if (path.empty()) return std::unexpected(ENOENT);
    return std::string(path);
  }
  std::string describe(std::string_view path) const override { return std::string(path); }
};

class RootedFileSystem final : public PosixFileSystemBase {
 public:
  explicit RootedFileSystem(std::string root) : root_(std::move(root)) {
    while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
    if (root_ == "/") root_.clear();  // "/" + logical == logical
  }

  Result<std::string> real_path(std::string_view path) const override {
    auto logical = resolve_logical(path, /*follow_last=*/true);
    if (!logical) {
      return fail("cannot resolve " + describe(path) + ": " + errno_text(logical.error()));
    }
    struct stat st {};
    if (::lstat(to_host(*logical).c_str(), &st) != 0) {
      return fail("cannot resolve " + describe(path) + ": " + errno_text(errno));
    }
    return std::move(*logical);
  }

  std::string host_path(std::string_view path) const override {
    auto logical = resolve_logical(path, /*follow_last=*/true, /*lenient=*/true);
    if (!logical) return to_host(path_normalize("/" + std::string(path)));
    return to_host(*logical);
  }

  bool is_rooted() const override { return true; }

 protected:
  std::expected<std::string, int> resolve_host(std::string_view path,
                                               bool follow_last) const override {
    auto logical = resolve_logical(path, follow_last);
    if (!logical) return std::unexpected(logical.error());
    return to_host(*logical);
  }

  std::string describe(std::string_view path) const override {
    return std::string(path) + " (under root " + (root_.empty() ? "/" : root_) + ")";
  }

 private:
  std::string to_host(std::string_view logical) const {
    if (logical == "/") return root_.empty() ? "/" : root_;
    return root_ + std::string(logical);
  }

  // Walks `path` component by component like the kernel would under chroot(root):
  // absolute link targets restart at the root, relative ones continue from the
  // link's directory, ".." stops at the root. A missing last component is kept
  // (the caller's system call reports it); a missing or non-directory earlier
  // component fails with its errno, unless `lenient`: then the walk goes on (each
  // later component is still checked, so nothing can escape). ELOOP after 40 links.
  std::expected<std::string, int> resolve_logical(std::string_view path, bool follow_last,
                                                  bool lenient = false) const {
    if (path.empty()) return std::unexpected(ENOENT);
    // A Windows path (--os windows reads the root as drive C:): "C:\Program Files\X" is
    // "/Program Files/X"; other drives are not under the root.
    std::string windows;
    if (path.size() >= 3 && path[1] == ':' && (path[2] == '\\' || path[2] == '/') &&
        ((path[0] >= 'A' && path[0] <= 'Z') || (path[0] >= 'a' && path[0] <= 'z'))) {
      if (path[0] != 'C' && path[0] != 'c') return std::unexpected(ENOENT);
      windows = std::string(path.substr(2));
      std::replace(windows.begin(), windows.end(), '\\', '/');
      path = windows;
    }
    std::deque<std::string> todo;
    for (auto& part : split(path, '/')) todo.push_back(std::move(part));
    std::vector<std::string> done;
    int links = 0;
    while (!todo.empty()) {
      std::string part = std::move(todo.front());
      todo.pop_front();
      if (part == ".") continue;
      if (part == "..") {
        if (!done.empty()) done.pop_back();
        continue;
      }
      done.push_back(std::move(part));
      const bool is_last = todo.empty();
      if (is_last && !follow_last) break;
      const std::string host = to_host(logical_of(done));
      struct stat st {};
      if (::lstat(host.c_str(), &st) != 0) {
        if (is_last || lenient) continue;
        return std::unexpected(errno);
      }
      if (!S_ISLNK(st.st_mode)) continue;
      if (++links > kMaxSymlinks) return std::unexpected(ELOOP);
      std::string target(PATH_MAX, '\0');
      ssize_t n = ::readlink(host.c_str(), target.data(), target.size());
      if (n < 0) return std::unexpected(errno);
      target.resize(static_cast<size_t>(n));
      done.pop_back();
      if (!target.empty() && target.front() == '/') done.clear();
      std::vector<std::string> parts = split(target, '/');
      todo.insert(todo.begin(), parts.begin(), parts.end());
    }
    return logical_of(done);
  }

  static std::string logical_of(const std::vector<std::string>& parts) {
    return "/" + join(parts, "/");
  }

  std::string root_;  // no trailing '/'; empty for "/"
};

}  // namespace

std::unique_ptr<FileSystem> make_real_filesystem() {
  return std::make_unique<RealFileSystem>();
}

std::unique_ptr<FileSystem> make_rooted_filesystem(std::string root) {
  return std::make_unique<RootedFileSystem>(std::move(root));
}

}  // namespace dlenv
