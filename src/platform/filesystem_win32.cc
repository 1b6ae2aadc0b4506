// Windows FileSystem: wide Win32 calls on UTF-8 paths. Paths may use '/' or '\'
// and drive letters ("C:/Program Files/..."). The rooted file system (--root DIR
// --os windows) reads drive C: from DIR: "C:\Windows\x", "C:/Windows/x" and the
// logical "/Windows/x" all become DIR\Windows\x; ".." never leaves DIR.
#include <windows.h>

#include <algorithm>
#include <utility>

#include "platform/filesystem.h"
#include "platform/win32_text.h"
#include "util/strings.h"

namespace dlenv {
namespace {

// Seconds between 1601-01-01 (FILETIME) and 1970-01-01.
constexpr int64_t kEpochDelta = 11644473600LL;

class Handle {
 public:
  explicit Handle(HANDLE h) : h_(h) {}
  ~Handle() {
    if (valid()) ::CloseHandle(h_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  HANDLE get() const { return h_; }
  bool valid() const { return h_ != nullptr && h_ != INVALID_HANDLE_VALUE; }

 private:
  HANDLE h_;
};

std::string error_message(DWORD err) {
  return win32::error_text(err) + " (error " + std::to_string(err) + ")";
}

int64_t unix_time(FILETIME ft) {
  const uint64_t ticks = (static_cast<uint64_t>(ft.dwHighDateTime) << 32) | ft.dwLowDateTime;
  return static_cast<int64_t>(ticks / 10000000ULL) - kEpochDelta;
}

FileType type_from_attributes(DWORD attrs, DWORD reparse_tag) {
  if ((attrs & FILE_ATTRIBUTE_REPARSE_POINT) != 0 &&
      (reparse_tag == IO_REPARSE_TAG_SYMLINK || reparse_tag == IO_REPARSE_TAG_MOUNT_POINT)) {
    return FileType::symlink;
  }
  if ((attrs & FILE_ATTRIBUTE_DIRECTORY) != 0) return FileType::directory;
  if ((attrs & FILE_ATTRIBUTE_DEVICE) != 0) return FileType::char_device;
  return FileType::regular;
}

// Windows has no permission bits: read-only files are 0444, the rest 0644 (0755
// for directories), so rules that look at modes see something sensible.
uint32_t mode_from_attributes(DWORD attrs) {
  uint32_t mode = (attrs & FILE_ATTRIBUTE_DIRECTORY) != 0 ? 0755 : 0644;
  if ((attrs & FILE_ATTRIBUTE_READONLY) != 0) mode &= ~0222u;
  return mode;
}

// Opens for reading (directories too); follows symlinks.
HANDLE open_for_read(const std::wstring& path, DWORD access = GENERIC_READ) {
  return ::CreateFileW(path.c_str(), access, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                       nullptr, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, nullptr);
}

std::optional<FileStat> stat_handle(HANDLE h) {
  BY_HANDLE_FILE_INFORMATION info{};
  if (!::GetFileInformationByHandle(h, &info)) return std::nullopt;
  FileStat st;
  st.type = type_from_attributes(info.dwFileAttributes & ~FILE_ATTRIBUTE_REPARSE_POINT, 0);
  if (::GetFileType(h) == FILE_TYPE_CHAR) st.type = FileType::char_device;
  st.size = (static_cast<uint64_t>(info.nFileSizeHigh) << 32) | info.nFileSizeLow;
  st.mode = mode_from_attributes(info.dwFileAttributes);
  st.mtime = unix_time(info.ftLastWriteTime);
  return st;
}

std::optional<FileStat> lstat_path(const std::wstring& path) {
  WIN32_FILE_ATTRIBUTE_DATA data{};
  if (!::GetFileAttributesExW(path.c_str(), GetFileExInfoStandard, &data)) return std::nullopt;
  DWORD tag = 0;
  if ((data.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0) {
    WIN32_FIND_DATAW fd{};
    HANDLE f = ::FindFirstFileW(path.c_str(), &fd);
    if (f != INVALID_HANDLE_VALUE) {
      tag = fd.dwReserved0;
      ::FindClose(f);
    }
  }
  FileStat st;
  st.type = type_from_attributes(data.dwFileAttributes, tag);
  st.size = (static_cast<uint64_t>(data.nFileSizeHigh) << 32) | data.nFileSizeLow;
  st.mode = mode_from_attributes(data.dwFileAttributes);
  st.mtime = unix_time(data.ftLastWriteTime);
  return st;
}

std::optional<std::string> final_path(HANDLE h) {
  std::wstring buf(MAX_PATH, L'\0');
  for (int i = 0; i < 4; ++i) {
    const DWORD n = ::GetFinalPathNameByHandleW(h, buf.data(), static_cast<DWORD>(buf.size()),
                                                FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
    if (n == 0) return std::nullopt;
    if (n < buf.size()) {
      buf.resize(n);
      return win32::strip_verbatim_prefix(win32::narrow(buf));
    }
    buf.resize(n + 1);
  }
  return std::nullopt;
}

class BufferFile final : public MappedFile {
 public:
  explicit BufferFile(std::string data) : data_(std::move(data)) {}
  ByteView bytes() const override { return ByteView(std::string_view(data_)); }

 private:
  std::string data_;
};

class ViewFile final : public MappedFile {
 public:
  ViewFile(const void* view, size_t size) : view_(view), size_(size) {}
  ~ViewFile() override { ::UnmapViewOfFile(view_); }
  ViewFile(const ViewFile&) = delete;
  ViewFile& operator=(const ViewFile&) = delete;
  ByteView bytes() const override { return ByteView(static_cast<const uint8_t*>(view_), size_); }

 private:
  const void* view_;
  size_t size_;
};

// Shared implementation: a subclass only decides how a path becomes a host path.
class WinFileSystemBase : public FileSystem {
 public:
  Result<std::string> read_file(std::string_view path, size_t max_bytes) const override {
    Handle h(open_for_read(host(path)));
    if (!h.valid()) return fail("cannot read " + describe(path) + ": " + last_error());
    LARGE_INTEGER size{};
    if (::GetFileSizeEx(h.get(), &size) && static_cast<uint64_t>(size.QuadPart) > max_bytes) {
      return fail(too_big(path, static_cast<uint64_t>(size.QuadPart), max_bytes));
    }
    if (auto st = stat_handle(h.get()); st && st->type == FileType::directory) {
      return fail("cannot read " + describe(path) + ": it is a directory");
    }
    std::string data;
    char buf[65536];
    for (;;) {
      DWORD n = 0;
      if (!::ReadFile(h.get(), buf, sizeof buf, &n, nullptr)) {
        return fail("cannot read " + describe(path) + ": " + last_error());
      }
      if (n == 0) break;
      if (data.size() + n > max_bytes) return fail(too_big(path, std::nullopt, max_bytes));
      data.append(buf, n);
    }
    return data;
  }

  Result<size_t> read_at(std::string_view path, uint64_t offset,
                         std::span<char> buffer) const override {
    Handle h(open_for_read(host(path)));
    if (!h.valid()) return fail("cannot read " + describe(path) + ": " + last_error());
    if (auto st = stat_handle(h.get()); st && st->type == FileType::directory) {
      return fail("cannot read " + describe(path) + ": it is a directory");
    }
    size_t got = 0;
    while (got < buffer.size()) {
      OVERLAPPED at{};
      const uint64_t pos = offset + got;
      at.Offset = static_cast<DWORD>(pos & 0xffffffffu);
      at.OffsetHigh = static_cast<DWORD>(pos >> 32);
      DWORD n = 0;
      const DWORD want = static_cast<DWORD>(std::min<size_t>(buffer.size() - got, 1u << 20));
      if (!::ReadFile(h.get(), buffer.data() + got, want, &n, &at)) {
        if (::GetLastError() == ERROR_HANDLE_EOF) break;
        return fail("cannot read " + describe(path) + ": " + last_error());
      }
      if (n == 0) break;
      got += n;
    }
    return got;
  }

  Result<std::unique_ptr<MappedFile>> map_file(std::string_view path) const override {
    Handle h(open_for_read(host(path)));
    if (!h.valid()) return fail("cannot map " + describe(path) + ": " + last_error());
    auto st = stat_handle(h.get());
    if (st && st->type == FileType::directory) {
      return fail("cannot map " + describe(path) + ": it is a directory");
    }
    const uint64_t size = st ? st->size : 0;
    if (size > 0 && size <= SIZE_MAX) {
      Handle mapping(::CreateFileMappingW(h.get(), nullptr, PAGE_READONLY, 0, 0, nullptr));
      if (mapping.valid()) {
        if (const void* view = ::MapViewOfFile(mapping.get(), FILE_MAP_READ, 0, 0, 0)) {
          return std::unique_ptr<MappedFile>(new ViewFile(view, static_cast<size_t>(size)));
        }
      }
    }
    // Empty or unmappable files: read them instead.
    auto data = read_file(path, size > 0 ? static_cast<size_t>(size) : (64u << 20));
    if (!data) return std::unexpected(data.error());
    return std::unique_ptr<MappedFile>(new BufferFile(std::move(*data)));
  }

  Result<std::vector<DirEntry>> list_dir(std::string_view path) const override {
    std::wstring pattern = host(path);
    if (!pattern.empty() && pattern.back() != L'\\') pattern += L'\\';
    pattern += L'*';
    WIN32_FIND_DATAW fd{};
    HANDLE f = ::FindFirstFileExW(pattern.c_str(), FindExInfoBasic, &fd, FindExSearchNameMatch,
                                  nullptr, 0);
    if (f == INVALID_HANDLE_VALUE) {
      return fail("cannot list " + describe(path) + ": " + last_error());
    }
    std::vector<DirEntry> entries;
    do {
      std::string name = win32::narrow(fd.cFileName);
      if (name == "." || name == "..") continue;
      entries.push_back(
          DirEntry{std::move(name), type_from_attributes(fd.dwFileAttributes, fd.dwReserved0)});
    } while (::FindNextFileW(f, &fd));
    const DWORD err = ::GetLastError();
    ::FindClose(f);
    if (err != ERROR_NO_MORE_FILES) {
      return fail("cannot list " + describe(path) + ": " + error_message(err));
    }
    std::sort(entries.begin(), entries.end(),
              [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
    return entries;
  }

  std::optional<FileStat> stat(std::string_view path) const override {
    const std::wstring p = host(path);
    auto st = lstat_path(p);
    if (!st || st->type != FileType::symlink) return st;
    Handle h(open_for_read(p, 0));
    if (!h.valid()) return std::nullopt;  // dangling link
    return stat_handle(h.get());
  }
  std::optional<FileStat> lstat(std::string_view path) const override {
    return lstat_path(host(path));
  }

  // Windows links are reparse points, not text: the target is where the link resolves.
  Result<std::string> read_link(std::string_view path) const override {
    auto st = lstat(path);
    if (!st) return fail("cannot read link " + describe(path) + ": " + last_error());
    if (st->type != FileType::symlink) {
      return fail("cannot read link " + describe(path) + ": not a symbolic link");
    }
    Handle h(open_for_read(host(path), 0));
    if (!h.valid()) return fail("cannot read link " + describe(path) + ": " + last_error());
    auto target = final_path(h.get());
    if (!target) return fail("cannot read link " + describe(path) + ": " + last_error());
    return logical_of(*target);
  }

  Result<std::string> real_path(std::string_view path) const override {
    Handle h(open_for_read(host(path), 0));
    if (!h.valid()) return fail("cannot resolve " + describe(path) + ": " + last_error());
    auto p = final_path(h.get());
    if (!p) return fail("cannot resolve " + describe(path) + ": " + last_error());
    return logical_of(*p);
  }

  bool can_read(std::string_view path) const override {
    Handle h(open_for_read(host(path)));
    return h.valid();
  }
  bool can_write(std::string_view path) const override {
    const std::wstring p = host(path);
    const DWORD attrs = ::GetFileAttributesW(p.c_str());
    if (attrs == INVALID_FILE_ATTRIBUTES) return false;
    if ((attrs & FILE_ATTRIBUTE_DIRECTORY) == 0 && (attrs & FILE_ATTRIBUTE_READONLY) != 0) {
      return false;
    }
    Handle h(open_for_read(p, GENERIC_WRITE));
    return h.valid();
  }

 protected:
  virtual std::wstring host(std::string_view path) const = 0;
  virtual std::string describe(std::string_view path) const = 0;
  // A host path (from GetFinalPathNameByHandleW) as this file system names it.
  virtual std::string logical_of(const std::string& host_path) const = 0;

  static std::string last_error() { return error_message(::GetLastError()); }

 private:
  std::string too_big(std::string_view path, std::optional<uint64_t> size, size_t max) const {
    std::string msg = "cannot read " + describe(path) + ": file is ";
    msg += size ? std::to_string(*size) + " bytes" : "larger than the limit";
    msg += " (limit " + std::to_string(max) + " bytes)";
    return msg;
  }
};

class RealFileSystem final : public WinFileSystemBase {
 public:
  std::string host_path(std::string_view path) const override { return std::string(path); }
  bool is_rooted() const override { return false; }

 protected:
  std::wstring host(std::string_view path) const override { return win32::native_path(path); }
  std::string describe(std::string_view path) const override { return std::string(path); }
  std::string logical_of(const std::string& host_path) const override { return host_path; }
};

// "C:\a\b", "c:/a/b", "\a\b", "/a/b" -> "/a/b" (drive C: is the root); "D:\x" stays
// outside (nullopt). ".." stops at the root.
std::optional<std::string> rooted_logical(std::string_view path) {
  std::string p(path);
  std::replace(p.begin(), p.end(), '\\', '/');
  if (p.size() >= 2 && p[1] == ':') {
    const char drive = static_cast<char>(p[0] | 0x20);
    if (drive != 'c') return std::nullopt;
    p = p.substr(2);
  }
  std::vector<std::string> parts;
  for (auto& part : split(p, '/')) {
    if (part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(std::move(part));
  }
  return "/" + join(parts, "/");
}

class RootedFileSystem final : public WinFileSystemBase {
 public:
  explicit RootedFileSystem(std::string root) : root_(std::move(root)) {
    std::replace(root_.begin(), root_.end(), '/', '\\');
    while (root_.size() > 3 && root_.back() == '\\') root_.pop_back();
  }

  std::string host_path(std::string_view path) const override { return win32::narrow(host(path)); }
  bool is_rooted() const override { return true; }

 protected:
  std::wstring host(std::string_view path) const override {
    auto logical = rooted_logical(path);
    // Another drive than C: does not exist under the root: a name that cannot exist.
    if (!logical)
      return win32::widen(root_ + "\\<no drive " + std::string(path.substr(0, 2)) + ">");
    return win32::native_path(root_ + *logical);
  }
  std::string describe(std::string_view path) const override {
    return std::string(path) + " (under root " + root_ + ")";
  }
  std::string logical_of(const std::string& host_path) const override {
    // Case-insensitive prefix match of the root (GetFinalPathNameByHandleW normalises case).
    std::string root_final = root_;
    Handle h(open_for_read(win32::native_path(root_), 0));
    if (h.valid()) {
      if (auto f = final_path(h.get())) root_final = *f;
    }
    if (host_path.size() >= root_final.size() &&
        to_lower(host_path.substr(0, root_final.size())) == to_lower(root_final)) {
      std::string rest = host_path.substr(root_final.size());
      std::replace(rest.begin(), rest.end(), '\\', '/');
      return rest.empty() ? "/" : (rest.front() == '/' ? rest : "/" + rest);
    }
    return host_path;  // outside the root (a link pointing out): shown as it is
  }

 private:
  std::string root_;
};

}  // namespace

std::unique_ptr<FileSystem> make_real_filesystem() {
  return std::make_unique<RealFileSystem>();
}

std::unique_ptr<FileSystem> make_rooted_filesystem(std::string root) {
  return std::make_unique<RootedFileSystem>(std::move(root));
}

}  // namespace dlenv
