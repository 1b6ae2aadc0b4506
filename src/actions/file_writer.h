// FileWriter: every change `cudnn install/uninstall/recover` and `env --persist`
// make to the disk goes through this interface, on logical paths (under
// `--root DIR` when given, like FileSystem). Each call is one small step that
// another can undo (write <-> remove, rename <-> rename back, make_dir <->
// remove), so a Transaction (transaction.h) can journal it first and restore the
// exact previous state after a failure or a crash at any step.
//
// The real writer (file_writer_posix.cc) is durable and never follows a link:
// every directory of a path is opened relative to its parent with O_NOFOLLOW
// (a symlinked component, e.g. a `.dlenv` swapped for a link under --root, is
// refused and names the path), new files are created with O_EXCL|O_NOFOLLOW,
// written, fsync'd and their directory fsync'd; renames never replace
// (RENAME_NOREPLACE) and fsync both directories. Windows (file_writer_win32.cc)
// uses the same calls through std::filesystem and LockFileEx.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "util/result.h"

namespace dlenv {

// An exclusive lock, held until destroyed (flock on the directory on Linux, so a
// dead holder's lock goes with its process; LockFileEx on Windows).
class FileLock {
 public:
  virtual ~FileLock() = default;
};

// A new regular file being written piece by piece (FileWriter::create_new_file), so
// that a large file never has to be in memory whole.
class NewFile {
 public:
  // Without finish(), the partial file is removed.
  virtual ~NewFile() = default;
  // Appends `data`; Error when it would go past the size promised at creation.
  virtual Result<void> write(std::string_view data) = 0;
  // Gives the file this owner (POSIX fchown; nothing on Windows), as the file it
  // will replace has: Error when this process may not.
  virtual Result<void> set_owner(uint32_t uid, uint32_t gid) = 0;
  // Checks that exactly the promised bytes were written, sets the mode and flushes
  // the file and its directory: only then is the file complete.
  virtual Result<void> finish() = 0;
};

class FileWriter {
 public:
  virtual ~FileWriter() = default;
  // Creates one directory (its parent must exist) with exactly `mode`; Error when it
  // already exists.
  virtual Result<void> make_dir(const std::string& path, uint32_t mode) = 0;
  // Creates a new regular file of exactly `size` bytes, written through the returned
  // NewFile, with permission bits `mode`; Error when something already exists at
  // `path` (never overwrites).
  virtual Result<std::unique_ptr<NewFile>> create_new_file(const std::string& path, uint32_t mode,
                                                           uint64_t size) = 0;
  // create_new_file + one write + finish: a new file with `data`, flushed to disk.
  Result<void> write_new_file(const std::string& path, std::string_view data, uint32_t mode);
  virtual Result<void> make_symlink(const std::string& path, const std::string& target) = 0;
  // Renames within one file system; Error when `to` exists.
  virtual Result<void> rename(const std::string& from, const std::string& to) = 0;
  // Renames `from` over the existing regular file `to` in one atomic step (readers
  // see the old or the new file, never none), then flushes the directory: the
  // atomic edit of a file (env --persist). Error when `to` is not a regular file.
  // Not undoable: a transaction does it last.
  virtual Result<void> replace_file(const std::string& from, const std::string& to) = 0;
  // Removes a file, a symlink (not its target) or an empty directory.
  virtual Result<void> remove(const std::string& path) = 0;
  // Appends `data` to a regular file (created 0600 when missing) and flushes it to
  // disk before returning: the journal's records.
  virtual Result<void> append_durably(const std::string& path, std::string_view data) = 0;
  // Whether anything (a link included) is at `path`; never fails, never writes.
  virtual bool exists(const std::string& path) const = 0;
  // Where a logical path lives on this machine (for messages and real loads).
  virtual std::string host_path(const std::string& path) const = 0;
  // An exclusive lock on the directory `dir`: nullptr (not an Error) when another
  // process holds it and `wait` is false; with `wait`, blocks until it is free.
  virtual Result<std::unique_ptr<FileLock>> lock_dir(const std::string& dir, bool wait) = 0;
};

// Writes under `root` ("" or "/": the real file system).
std::unique_ptr<FileWriter> make_file_writer(const std::string& root);

// Forwards to `inner`, counting the mutating calls (all but exists, host_path and
// lock_dir), and injects a fault at the `fault_at`-th (1-based; 0: never): a
// write or append first writes half of its bytes (what a full disk or a crash
// leaves), then `at_fault` runs (the CLI's kill-point hook raises SIGKILL there),
// then the call fails with "injected failure at step N: ...".
class FaultInjectingWriter : public FileWriter {
 public:
  FaultInjectingWriter(FileWriter& inner, int fault_at, std::function<void()> at_fault = {})
      : inner_(inner), fault_at_(fault_at), at_fault_(std::move(at_fault)) {}
  // Owning `inner`.
  FaultInjectingWriter(std::unique_ptr<FileWriter> inner, int fault_at,
                       std::function<void()> at_fault = {})
      : owned_(std::move(inner)),
        inner_(*owned_),
        fault_at_(fault_at),
        at_fault_(std::move(at_fault)) {}
  Result<void> make_dir(const std::string& path, uint32_t mode) override;
  Result<std::unique_ptr<NewFile>> create_new_file(const std::string& path, uint32_t mode,
                                                   uint64_t size) override;
  Result<void> make_symlink(const std::string& path, const std::string& target) override;
  Result<void> rename(const std::string& from, const std::string& to) override;
  Result<void> replace_file(const std::string& from, const std::string& to) override;
  Result<void> remove(const std::string& path) override;
  Result<void> append_durably(const std::string& path, std::string_view data) override;
  bool exists(const std::string& path) const override { return inner_.exists(path); }
  std::string host_path(const std::string& path) const override { return inner_.host_path(path); }
  Result<std::unique_ptr<FileLock>> lock_dir(const std::string& dir, bool wait) override {
    return inner_.lock_dir(dir, wait);
  }
  // Mutating calls so far (the fault's included).
  int calls() const { return calls_; }

 private:
  // The fault's Error when this call is the fault_at-th; `half` runs before at_fault.
  std::optional<Error> step(const std::string& what, const std::function<void()>& half = {});
  std::unique_ptr<FileWriter> owned_;
  FileWriter& inner_;
  int fault_at_;
  std::function<void()> at_fault_;
  int calls_ = 0;
};

}  // namespace dlenv
