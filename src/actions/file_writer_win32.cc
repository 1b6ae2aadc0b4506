// The FileWriter on Windows: new files written through a handle and flushed with
// FlushFileBuffers (as the journal is), renames with MOVEFILE_WRITE_THROUGH, the toolkit
// lock a LockFileEx on <dir>\\.dlenv-lock (deleted when the last handle closes). Before each
// change every directory on the way is checked not to be a reparse point (a symbolic link or
// junction); unlike file_writer_posix.cc's walk of directory handles that check and the
// change are two steps.
#include <fmt/format.h>
#include <windows.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <vector>

#include "actions/file_writer.h"
#include "platform/win32_text.h"
#include "util/strings.h"

namespace dlenv {
namespace {

namespace sfs = std::filesystem;

class HandleLock : public FileLock {
 public:
  explicit HandleLock(HANDLE h) : h_(h) {}
  ~HandleLock() override {
    OVERLAPPED ov{};
    ::UnlockFileEx(h_, 0, 1, 0, &ov);
    ::CloseHandle(h_);
  }

 private:
  HANDLE h_;
};

// A new file written through its own handle (created with CREATE_NEW: never over anything
// already there, a link included), never past the promised size, flushed to the disk
// (FlushFileBuffers) before it counts as finished; removed again unless finished.
class HandleNewFile : public NewFile {
 public:
  HandleNewFile(HANDLE h, std::string host, uint32_t mode, uint64_t size)
      : h_(h), host_(std::move(host)), mode_(mode), size_(size) {}
  ~HandleNewFile() override {
    if (h_ != INVALID_HANDLE_VALUE) ::CloseHandle(h_);
    if (!finished_) ::DeleteFileW(win32::widen(host_).c_str());
  }
  Result<void> write(std::string_view data) override {
    if (data.size() > size_ - written_) {
      return fail(fmt::format(
          "cannot write {}: more than the {} bytes its source declared (the source is corrupt "
          "or changed while being read)",
          host_, size_));
    }
    while (!data.empty()) {
      const DWORD piece = static_cast<DWORD>(std::min<size_t>(data.size(), 1u << 30));
      DWORD wrote = 0;
      if (!::WriteFile(h_, data.data(), piece, &wrote, nullptr) || wrote == 0) {
        return fail(fmt::format("cannot write {} (error {})", host_, ::GetLastError()));
      }
      data.remove_prefix(wrote);
      written_ += wrote;
    }
    return {};
  }
  Result<void> set_owner(uint32_t, uint32_t) override {
    return {};
  }  // Windows: ACLs, kept by the folder

  Result<void> finish() override {
    if (written_ != size_) {
      return fail(fmt::format("cannot complete {}: {} bytes were written, {} were declared", host_,
                              written_, size_));
    }
    if (!::FlushFileBuffers(h_)) {
      return fail(fmt::format("cannot flush {} to the disk (error {})", host_, ::GetLastError()));
    }
    ::CloseHandle(h_);
    h_ = INVALID_HANDLE_VALUE;
    std::error_code ec;
    sfs::permissions(host_, static_cast<sfs::perms>(mode_ & 07777), ec);
    if (ec) return fail(fmt::format("cannot set the permissions of {}: {}", host_, ec.message()));
    finished_ = true;
    return {};
  }

 private:
  HANDLE h_;
  std::string host_;
  uint32_t mode_;
  uint64_t size_;
  uint64_t written_ = 0;
  bool finished_ = false;
};

class RealFileWriter : public FileWriter {
 public:
  explicit RealFileWriter(std::string root) : root_(std::move(root)) {
    while (!root_.empty() && root_.back() == '/') root_.pop_back();
  }

  Result<void> make_dir(const std::string& path, uint32_t mode) override {
    if (auto ok = no_link_on_the_way(path); !ok) return ok;
    const std::string h = host_path(path);
    std::error_code ec;
    if (!sfs::create_directory(h, ec)) {
      return fail(fmt::format("cannot create the directory {}: {}", h,
                              ec ? ec.message() : "it already exists"));
    }
    sfs::permissions(h, static_cast<sfs::perms>(mode & 07777), ec);
    return {};
  }

  Result<std::unique_ptr<NewFile>> create_new_file(const std::string& path, uint32_t mode,
                                                   uint64_t size) override {
    if (auto ok = no_link_on_the_way(path); !ok) return std::unexpected(ok.error());
    const std::string h = host_path(path);
    HANDLE f = ::CreateFileW(win32::widen(h).c_str(), GENERIC_WRITE, 0, nullptr, CREATE_NEW,
                             FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
    if (f == INVALID_HANDLE_VALUE) {
      const DWORD err = ::GetLastError();
      if (err == ERROR_FILE_EXISTS || err == ERROR_ALREADY_EXISTS) {
        return fail(fmt::format("cannot write {}: something is already there", h));
      }
      return fail(fmt::format("cannot create {} (error {})", h, err));
    }
    return std::unique_ptr<NewFile>(new HandleNewFile(f, h, mode, size));
  }

  Result<void> make_symlink(const std::string& path, const std::string& target) override {
    if (auto ok = no_link_on_the_way(path); !ok) return ok;
    const std::string h = host_path(path);
    std::error_code ec;
    sfs::create_symlink(target, h, ec);
    if (ec)
      return fail(fmt::format("cannot create the link {} -> {}: {}", h, target, ec.message()));
    return {};
  }

  Result<void> rename(const std::string& from, const std::string& to) override {
    if (auto ok = no_link_on_the_way(from); !ok) return ok;
    if (auto ok = no_link_on_the_way(to); !ok) return ok;
    const std::string hf = host_path(from), ht = host_path(to);
    std::error_code ec;
    if (sfs::exists(sfs::symlink_status(ht, ec))) {
      return fail(fmt::format("cannot move {} to {}: the destination exists", hf, ht));
    }
    // Never over an existing name (no MOVEFILE_REPLACE_EXISTING); on the disk before it returns.
    if (!::MoveFileExW(win32::widen(hf).c_str(), win32::widen(ht).c_str(),
                       MOVEFILE_WRITE_THROUGH)) {
      return fail(fmt::format("cannot move {} to {} (error {})", hf, ht, ::GetLastError()));
    }
    return {};
  }

  Result<void> replace_file(const std::string& from, const std::string& to) override {
    if (auto ok = no_link_on_the_way(from); !ok) return ok;
    if (auto ok = no_link_on_the_way(to); !ok) return ok;
    const std::string hf = host_path(from), ht = host_path(to);
    std::error_code ec;
    if (!sfs::is_regular_file(sfs::symlink_status(ht, ec))) {
      return fail(fmt::format("cannot replace {}: not a regular file", ht));
    }
    // MoveFileEx(MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH): one step.
    if (!::MoveFileExW(win32::widen(hf).c_str(), win32::widen(ht).c_str(),
                       MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) {
      return fail(fmt::format("cannot replace {} with {}: error {}", ht, hf, ::GetLastError()));
    }
    return {};
  }

  Result<void> remove(const std::string& path) override {
    if (auto ok = no_link_on_the_way(path); !ok) return ok;
    const std::string h = host_path(path);
    std::error_code ec;
    if (!sfs::remove(h, ec)) {
      return fail(fmt::format("cannot remove {}: {}", h, ec ? ec.message() : "it does not exist"));
    }
    return {};
  }

  Result<void> append_durably(const std::string& path, std::string_view data) override {
    if (auto ok = no_link_on_the_way(path); !ok) return ok;
    const std::string h = host_path(path);
    HANDLE f =
        ::CreateFileW(win32::widen(h).c_str(), FILE_APPEND_DATA, FILE_SHARE_READ, nullptr,
                      OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
    if (f == INVALID_HANDLE_VALUE) {
      return fail(fmt::format("cannot open {} to append (error {})", h, ::GetLastError()));
    }
    DWORD wrote = 0;
    const bool ok = ::WriteFile(f, data.data(), static_cast<DWORD>(data.size()), &wrote, nullptr) &&
                    wrote == data.size() && ::FlushFileBuffers(f);
    const DWORD err = ::GetLastError();
    ::CloseHandle(f);
    if (!ok) return fail(fmt::format("cannot append to {} (error {})", h, err));
    return {};
  }

  Result<std::unique_ptr<FileLock>> lock_dir(const std::string& dir, bool wait) override {
    const std::string h = host_path(path_join(dir, ".dlenv-lock"));
    HANDLE f = INVALID_HANDLE_VALUE;
    // The last holder's handle closing deletes the file; opened in that instant it is
    // "delete pending" (access denied) for a moment: try again.
    for (int attempt = 0; attempt < 200; ++attempt) {
      f = ::CreateFileW(win32::widen(h).c_str(), GENERIC_READ | GENERIC_WRITE,
                        FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                        OPEN_ALWAYS, FILE_ATTRIBUTE_HIDDEN | FILE_FLAG_DELETE_ON_CLOSE, nullptr);
      if (f != INVALID_HANDLE_VALUE || ::GetLastError() != ERROR_ACCESS_DENIED) break;
      ::Sleep(10);
    }
    if (f == INVALID_HANDLE_VALUE) {
      return fail(fmt::format("cannot open the lock file {} (error {})", h, ::GetLastError()));
    }
    OVERLAPPED ov{};
    DWORD flags = LOCKFILE_EXCLUSIVE_LOCK | (wait ? 0 : LOCKFILE_FAIL_IMMEDIATELY);
    if (!::LockFileEx(f, flags, 0, 1, 0, &ov)) {
      const DWORD err = ::GetLastError();
      ::CloseHandle(f);
      if (err == ERROR_LOCK_VIOLATION || err == ERROR_IO_PENDING) {
        return std::unique_ptr<FileLock>();
      }
      return fail(fmt::format("cannot lock {} (error {})", h, err));
    }
    return std::unique_ptr<FileLock>(new HandleLock(f));
  }

  // Whether the reparse point at `path` sends the path elsewhere: a symbolic link or a
  // junction (mount point). Other reparse points (OneDrive's cloud files, deduplicated
  // files) keep the path where it is.
  static bool redirects(const std::string& path) {
    WIN32_FIND_DATAW d{};
    HANDLE h = ::FindFirstFileW(win32::widen(path).c_str(), &d);
    if (h == INVALID_HANDLE_VALUE) return true;  // cannot tell: treat it as a link
    ::FindClose(h);
    return d.dwReserved0 == IO_REPARSE_TAG_SYMLINK || d.dwReserved0 == IO_REPARSE_TAG_MOUNT_POINT;
  }

  // Every directory on the way to `path` below the root (not `path` itself) must be a real
  // directory: a symbolic link or junction (a reparse point) there would take the write
  // out of the toolkit or --root, so it is refused, naming it.
  Result<void> no_link_on_the_way(const std::string& path) const {
    std::string prefix = root_;
    std::string rest = path;
    std::replace(rest.begin(), rest.end(), '\\', '/');
    std::vector<std::string> parts;
    for (const auto& c : split(rest, '/')) {
      if (!c.empty()) parts.push_back(c);
    }
    if (parts.empty()) return {};
    parts.pop_back();  // the entry itself: created new, or a link that is moved or removed
    size_t first = 0;
    if (root_.empty() && !parts.empty() && parts[0].size() == 2 && parts[0][1] == ':') {
      prefix = parts[0];  // "C:": the drive itself is not checked
      first = 1;
    }
    for (size_t i = first; i < parts.size(); ++i) {
      prefix += "/" + parts[i];
      const DWORD a = ::GetFileAttributesW(win32::widen(prefix).c_str());
      if (a == INVALID_FILE_ATTRIBUTES) break;  // not there (yet): nothing to follow
      if ((a & FILE_ATTRIBUTE_REPARSE_POINT) && redirects(prefix)) {
        return fail(fmt::format(
            "{} is a link (a symbolic link or junction), and dlenv never writes through one",
            prefix));
      }
    }
    return {};
  }

  bool exists(const std::string& path) const override {
    std::error_code ec;
    return sfs::exists(sfs::symlink_status(host_path(path), ec));
  }

  std::string host_path(const std::string& path) const override {
    if (root_.empty()) return path;
    return root_ + (starts_with(path, "/") ? "" : "/") + path;
  }

 private:
  std::string root_;
};

}  // namespace

std::unique_ptr<FileWriter> make_file_writer(const std::string& root) {
  return std::make_unique<RealFileWriter>(root == "/" ? "" : root);
}

}  // namespace dlenv
