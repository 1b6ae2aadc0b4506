// FileSystem: every file read a probe does goes through this interface, so
// `--root DIR` can redirect them all to a sysroot and tests can build one.
// Paths are always the *logical* path ("/usr/local/cuda/version.json"); a rooted
// file system maps them under its root and resolves symlinks inside the root.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/bytes.h"
#include "util/result.h"

namespace dlenv {

enum class FileType { regular, directory, symlink, char_device, block_device, other };

struct FileStat {
  FileType type = FileType::other;
  uint64_t size = 0;
  uint32_t mode = 0;  // permission bits (07777)
  uint32_t uid = 0;
  uint32_t gid = 0;
  int64_t mtime = 0;       // seconds since the epoch
  int64_t mtime_nsec = 0;  // and the nanoseconds within that second
  // st_dev / st_ino: which file this is (hard links of one file share them); 0 where the
  // platform does not say (Windows), so that no two files are taken for one.
  uint64_t device = 0;
  uint64_t inode = 0;
};

struct DirEntry {
  std::string name;
  FileType type = FileType::other;  // lstat type (a symlink shows as symlink)
};

// A read-only memory mapping of a whole file (RAII). Falls back to reading into
// memory where mmap is unavailable.
class MappedFile {
 public:
  virtual ~MappedFile() = default;
  virtual ByteView bytes() const = 0;
  // Asks for `part` (a view into bytes()) to be read in now, in one call rather
  // than page by page on first touch; a hint: it may do nothing.
  virtual void prefetch(ByteView part) const { (void)part; }
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // Reads a whole file; fails (naming the path) when larger than max_bytes.
  virtual Result<std::string> read_file(std::string_view path,
                                        size_t max_bytes = 16u << 20) const = 0;
  virtual Result<std::unique_ptr<MappedFile>> map_file(std::string_view path) const = 0;
  // Reads up to buffer.size() bytes at `offset` into `buffer`; returns how many
  // (fewer at the end of the file, 0 past it). For headers: a loader candidate is
  // checked from its first 64 bytes, which costs less than mapping it.
  virtual Result<size_t> read_at(std::string_view path, uint64_t offset,
                                 std::span<char> buffer) const = 0;
  // Entries of a directory, sorted by name, without "." and "..".
  virtual Result<std::vector<DirEntry>> list_dir(std::string_view path) const = 0;
  // stat follows symlinks (inside the root); lstat does not.
  virtual std::optional<FileStat> stat(std::string_view path) const = 0;
  virtual std::optional<FileStat> lstat(std::string_view path) const = 0;
  virtual Result<std::string> read_link(std::string_view path) const = 0;
  // Logical canonical path with every symlink resolved (inside the root).
  virtual Result<std::string> real_path(std::string_view path) const = 0;
  // Whether the current user may read / write the path. Under a root this
  // answers for the file inside the root.
  virtual bool can_read(std::string_view path) const = 0;
  virtual bool can_write(std::string_view path) const = 0;
  // Where the file really lives on this machine (for dlopen of a probed file).
  virtual std::string host_path(std::string_view path) const = 0;
  // True for a --root file system: live probes must be skipped.
  virtual bool is_rooted() const = 0;

  // The first `max_bytes` of a file (fewer when it is shorter).
  Result<std::string> read_head(std::string_view path, size_t max_bytes) const {
    std::string data(max_bytes, '\0');
    auto n = read_at(path, 0, std::span<char>(data.data(), data.size()));
    if (!n) return std::unexpected(n.error());
    data.resize(*n);
    return data;
  }
  bool exists(std::string_view path) const { return lstat(path).has_value(); }
  bool is_dir(std::string_view path) const {
    auto s = stat(path);
    return s && s->type == FileType::directory;
  }
  bool is_file(std::string_view path) const {
    auto s = stat(path);
    return s && s->type == FileType::regular;
  }
};

std::unique_ptr<FileSystem> make_real_filesystem();
// Every logical path is read under `root` (which must exist: checked by the caller).
std::unique_ptr<FileSystem> make_rooted_filesystem(std::string root);

}  // namespace dlenv
