// The real FileWriter on Linux: every directory of a path is opened relative to
// its parent with O_NOFOLLOW (never through a link, so nothing lands outside
// --root or the toolkit), every change is flushed to disk (file fsync before the
// call returns, directory fsync after each entry changes), renames never replace.
#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "actions/file_writer.h"
#include "util/strings.h"

namespace dlenv {
namespace {

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

class FlockLock : public FileLock {
 public:
  explicit FlockLock(Fd fd) : fd_(std::move(fd)) {}
  ~FlockLock() override { ::flock(fd_.get(), LOCK_UN); }

 private:
  Fd fd_;
};

std::string errno_text(int e) {
  return std::strerror(e);
}

Result<void> sync_dir_of(const Fd& dir, const std::string& host) {
  if (::fsync(dir.get()) != 0) {
    return fail(fmt::format("cannot flush the directory of {}: {}", host, errno_text(errno)));
  }
  return {};
}

// A file created O_EXCL|O_NOFOLLOW in its directory (held open by fd), written in
// pieces, never past the promised size; removed again unless finished.
class PosixNewFile : public NewFile {
 public:
  PosixNewFile(Fd dir, std::string name, Fd file, std::string host, uint32_t mode, uint64_t size)
      : dir_(std::move(dir)),
        name_(std::move(name)),
        file_(std::move(file)),
        host_(std::move(host)),
        mode_(mode),
        size_(size) {}
  ~PosixNewFile() override {
    if (!finished_) ::unlinkat(dir_.get(), name_.c_str(), 0);
  }

  Result<void> write(std::string_view data) override {
    if (data.size() > size_ - written_) {
      return fail(
          fmt::format("cannot write {}: more than the {} bytes its source declared (the source is "
                      "corrupt or changed while being read)",
                      host_, size_));
    }
    for (size_t done = 0; done < data.size();) {
      ssize_t n = ::write(file_.get(), data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return failed("write");
      done += static_cast<size_t>(n);
    }
    written_ += data.size();
    return {};
  }

  Result<void> set_owner(uint32_t uid, uint32_t gid) override {
    struct stat st {};
    if (::fstat(file_.get(), &st) == 0 && st.st_uid == uid && st.st_gid == gid) return {};
    if (::fchown(file_.get(), uid, gid) != 0) {
      return fail(fmt::format("cannot give {} the owner {}:{} of the file it replaces: {}", host_,
                              uid, gid, errno_text(errno)));
    }
    return {};
  }

  Result<void> finish() override {
    if (written_ != size_) {
      return fail(fmt::format("cannot complete {}: {} bytes were written, {} were declared", host_,
                              written_, size_));
    }
    if (::fchmod(file_.get(), mode_ & 07777) != 0) return failed("set the mode of");
    if (::fsync(file_.get()) != 0) return failed("flush");
    if (auto s = sync_dir_of(dir_, host_); !s) return s;
    finished_ = true;
    return {};
  }

 private:
  std::unexpected<Error> failed(const char* what) const {
    return fail(fmt::format("cannot {} {} ({} bytes): {}", what, host_, size_, errno_text(errno)));
  }
  Fd dir_;
  std::string name_;
  Fd file_;
  std::string host_;
  uint32_t mode_;
  uint64_t size_;
  uint64_t written_ = 0;
  bool finished_ = false;
};

class PosixFileWriter : public FileWriter {
 public:
  explicit PosixFileWriter(std::string root) : root_(std::move(root)) {
    while (!root_.empty() && root_.back() == '/') root_.pop_back();
  }

  Result<void> make_dir(const std::string& path, uint32_t mode) override {
    auto p = parent(path, "create the directory");
    if (!p) return std::unexpected(p.error());
    if (::mkdirat(p->dir.get(), p->name.c_str(), 0700) != 0) {
      return fail(fmt::format("cannot create the directory {}: {}", host_path(path),
                              errno == EEXIST ? "it already exists" : errno_text(errno)));
    }
    Fd d(::openat(p->dir.get(), p->name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!d.ok() || ::fchmod(d.get(), mode & 07777) != 0 || ::fsync(d.get()) != 0) {
      return fail(fmt::format("cannot set the mode of {}: {}", host_path(path), errno_text(errno)));
    }
    return sync_dir(p->dir, path);
  }

  Result<std::unique_ptr<NewFile>> create_new_file(const std::string& path, uint32_t mode,
                                                   uint64_t size) override {
    auto p = parent(path, "create");
    if (!p) return std::unexpected(p.error());
    Fd f(::openat(p->dir.get(), p->name.c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!f.ok()) {
      return fail(fmt::format("cannot create {}: {}", host_path(path),
                              errno == EEXIST ? "something is already there" : errno_text(errno)));
    }
    return std::unique_ptr<NewFile>(
        new PosixNewFile(std::move(p->dir), p->name, std::move(f), host_path(path), mode, size));
  }

  Result<void> make_symlink(const std::string& path, const std::string& target) override {
    auto p = parent(path, "create the link");
    if (!p) return std::unexpected(p.error());
    if (::symlinkat(target.c_str(), p->dir.get(), p->name.c_str()) != 0) {
      return fail(fmt::format("cannot create the link {} -> {}: {}", host_path(path), target,
                              errno_text(errno)));
    }
    return sync_dir(p->dir, path);
  }

  Result<void> rename(const std::string& from, const std::string& to) override {
    auto pf = parent(from, "move");
    if (!pf) return std::unexpected(pf.error());
    auto pt = parent(to, "move into");
    if (!pt) return std::unexpected(pt.error());
    const std::string hf = host_path(from), ht = host_path(to);
    if (::renameat2(pf->dir.get(), pf->name.c_str(), pt->dir.get(), pt->name.c_str(),
                    RENAME_NOREPLACE) != 0) {
      int e = errno;
      if (e == EINVAL || e == ENOSYS) {
        // A file system without RENAME_NOREPLACE: check, then rename (the toolkit lock
        // keeps other dlenv runs out of the gap).
        struct stat st {};
        if (::fstatat(pt->dir.get(), pt->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
          e = EEXIST;
        } else if (::renameat(pf->dir.get(), pf->name.c_str(), pt->dir.get(), pt->name.c_str()) ==
                   0) {
          e = 0;
        } else {
          e = errno;
        }
      }
      if (e == EEXIST) {
        return fail(fmt::format("cannot move {} to {}: the destination exists", hf, ht));
      }
      if (e != 0) return fail(fmt::format("cannot move {} to {}: {}", hf, ht, errno_text(e)));
    }
    if (auto s = sync_dir(pt->dir, to); !s) return s;
    if (path_dirname(from) != path_dirname(to)) return sync_dir(pf->dir, from);
    return {};
  }

  Result<void> replace_file(const std::string& from, const std::string& to) override {
    auto pf = parent(from, "move");
    if (!pf) return std::unexpected(pf.error());
    auto pt = parent(to, "replace");
    if (!pt) return std::unexpected(pt.error());
    struct stat st {};
    if (::fstatat(pt->dir.get(), pt->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(st.st_mode)) {
      return fail(fmt::format("cannot replace {}: not a regular file", host_path(to)));
    }
    if (::renameat(pf->dir.get(), pf->name.c_str(), pt->dir.get(), pt->name.c_str()) != 0) {
      return fail(fmt::format("cannot replace {} with {}: {}", host_path(to), host_path(from),
                              errno_text(errno)));
    }
    if (auto s = sync_dir(pt->dir, to); !s) return s;
    if (path_dirname(from) != path_dirname(to)) return sync_dir(pf->dir, from);
    return {};
  }

  Result<void> remove(const std::string& path) override {
    auto p = parent(path, "remove");
    if (!p) return std::unexpected(p.error());
    struct stat st {};
    if (::fstatat(p->dir.get(), p->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return fail(fmt::format("cannot remove {}: {}", host_path(path),
                              errno == ENOENT ? "it does not exist" : errno_text(errno)));
    }
    if (::unlinkat(p->dir.get(), p->name.c_str(), S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) != 0) {
      return fail(fmt::format("cannot remove {}: {}", host_path(path), errno_text(errno)));
    }
    return sync_dir(p->dir, path);
  }

  Result<void> append_durably(const std::string& path, std::string_view data) override {
    auto p = parent(path, "append to");
    if (!p) return std::unexpected(p.error());
    bool created = false;
    Fd f(::openat(p->dir.get(), p->name.c_str(),
                  O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!f.ok() && errno == ENOENT) {
      f = Fd(::openat(p->dir.get(), p->name.c_str(),
                      O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
      created = true;
    }
    if (!f.ok()) {
      return fail(fmt::format("cannot open {} to append: {}", host_path(path), errno_text(errno)));
    }
    struct stat st {};
    if (::fstat(f.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return fail(fmt::format("cannot append to {}: not a regular file", host_path(path)));
    }
    for (size_t done = 0; done < data.size();) {
      ssize_t n = ::write(f.get(), data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        return fail(fmt::format("cannot append to {}: {}", host_path(path), errno_text(errno)));
      }
      done += static_cast<size_t>(n);
    }
    if (::fsync(f.get()) != 0) {
      return fail(fmt::format("cannot flush {}: {}", host_path(path), errno_text(errno)));
    }
    if (created) return sync_dir(p->dir, path);
    return {};
  }

  bool exists(const std::string& path) const override {
    auto p = parent(path, "look at");
    if (!p) return false;
    struct stat st {};
    return ::fstatat(p->dir.get(), p->name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  }

  std::string host_path(const std::string& path) const override {
    if (root_.empty()) return path;
    return root_ + (starts_with(path, "/") ? "" : "/") + path;
  }

  Result<std::unique_ptr<FileLock>> lock_dir(const std::string& dir, bool wait) override {
    auto d = open_dir(dir, "lock");
    if (!d) return std::unexpected(d.error());
    while (::flock(d->get(), LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
      if (errno == EINTR) continue;
      if (errno == EWOULDBLOCK) return std::unique_ptr<FileLock>();
      return fail(fmt::format("cannot lock {}: {}", host_path(dir), errno_text(errno)));
    }
    return std::unique_ptr<FileLock>(new FlockLock(std::move(*d)));
  }

 private:
  struct Parent {
    Fd dir;
    std::string name;
  };

  // Opens every directory of `logical` below the root with O_NOFOLLOW, each relative to
  // the one before: a link anywhere on the way is refused, never followed.
  Result<Fd> open_dir(const std::string& logical, const char* what) const {
    // The root itself is trusted (it may be reached through links); a relative path
    // without a root starts at the current directory.
    const std::string start = !root_.empty() ? root_ : starts_with(logical, "/") ? "/" : ".";
    Fd cur(::open(start.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!cur.ok()) {
      return fail(fmt::format("cannot {} {}: {} cannot be opened: {}", what, host_path(logical),
                              start, errno_text(errno)));
    }
    std::string so_far = root_;
    for (const auto& c : split(logical, '/')) {
      if (c == "." || c.empty()) continue;
      if (c == "..") return fail(fmt::format("cannot {} {}: \"..\" in the path", what, logical));
      so_far += "/" + c;
      Fd next(::openat(cur.get(), c.c_str(),
                       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
      if (!next.ok()) {
        const int e = errno;
        struct stat st {};
        if (::fstatat(cur.get(), c.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
          return fail(fmt::format(
              "cannot {} {}: {} is a symbolic link, and dlenv never writes through one (it "
              "was not one when the change was planned, or it leads outside the tree)",
              what, host_path(logical), so_far));
        }
        return fail(
            fmt::format("cannot {} {}: {}: {}", what, host_path(logical), so_far, errno_text(e)));
      }
      cur = std::move(next);
    }
    return cur;
  }

  Result<Parent> parent(const std::string& logical, const char* what) const {
    const std::string name = path_basename(logical);
    if (name.empty() || name == "." || name == "..") {
      return fail(fmt::format("cannot {} {}: not a file name", what, host_path(logical)));
    }
    auto d = open_dir(path_dirname(logical), what);
    if (!d) return std::unexpected(d.error());
    return Parent{std::move(*d), name};
  }

  Result<void> sync_dir(const Fd& dir, const std::string& changed) const {
    return sync_dir_of(dir, host_path(changed));
  }

  std::string root_;
};

}  // namespace

std::unique_ptr<FileWriter> make_file_writer(const std::string& root) {
  return std::make_unique<PosixFileWriter>(root == "/" ? "" : root);
}

}  // namespace dlenv
