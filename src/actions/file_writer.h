// FileWriter: every change `cudnn install/uninstall` and `env --persist` make to
// the disk goes through this interface, on logical paths (under `--root DIR`
// when given, like FileSystem). Each call is one small step that can be undone
// by another (write <-> remove, rename <-> rename back, make_dir <-> remove), so
// a Transaction can restore the exact previous state after a failure at any
// step; tests wrap it in a fake that fails the N-th call.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace dlenv {

class FileWriter {
 public:
  virtual ~FileWriter() = default;
  // Creates one directory (its parent must exist); Error when it already exists.
  virtual Result<void> make_dir(const std::string& path, uint32_t mode) = 0;
  // Creates a new regular file with `data` and permission bits `mode`; Error when
  // something already exists at `path` (never overwrites).
  virtual Result<void> write_new_file(const std::string& path, std::string_view data,
                                      uint32_t mode) = 0;
  virtual Result<void> make_symlink(const std::string& path, const std::string& target) = 0;
  // Renames within one file system; Error when `to` exists.
  virtual Result<void> rename(const std::string& from, const std::string& to) = 0;
  // Removes a file, a symlink (not its target) or an empty directory.
  virtual Result<void> remove(const std::string& path) = 0;
  // Whether anything (a link included) is at `path`; never fails, never writes.
  virtual bool exists(const std::string& path) const = 0;
  // Where a logical path lives on this machine (for messages and real loads).
  virtual std::string host_path(const std::string& path) const = 0;
};

// Writes under `root` ("" or "/": the real file system).
std::unique_ptr<FileWriter> make_file_writer(const std::string& root);

// A sequence of steps that undoes itself unless committed: each do_* call runs
// one FileWriter step and remembers its inverse; rollback() runs the inverses in
// reverse order. The first failure is returned by the do_* call; the caller then
// calls rollback() (the destructor does too, when not committed).
class Transaction {
 public:
  explicit Transaction(FileWriter& writer) : w_(writer) {}
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  Result<void> make_dir(const std::string& path, uint32_t mode = 0755);
  // make_dir for `path` and every missing parent (exists(): a directory already there).
  Result<void> make_dirs(const std::string& path,
                         const std::function<bool(const std::string&)>& exists);
  Result<void> write_new_file(const std::string& path, std::string_view data, uint32_t mode);
  Result<void> make_symlink(const std::string& path, const std::string& target);
  Result<void> rename(const std::string& from, const std::string& to);
  // Removes an empty directory (undo: creates it again with `mode`).
  Result<void> remove_dir(const std::string& path, uint32_t mode = 0755);
  // An irreversible removal, run only by commit() (after everything else worked).
  void remove_on_commit(const std::string& path) { on_commit_.push_back(path); }

  // Keeps every change; runs the deferred removals. Returns the ones that failed
  // (already reported as text; the change itself stands).
  std::vector<std::string> commit();
  // Undoes every step done so far, newest first. Returns the steps that could not
  // be undone (empty: the previous state is back exactly).
  std::vector<std::string> rollback();
  size_t steps() const { return undo_.size(); }

 private:
  struct Undo {
    enum Kind { remove_path, rename_back, recreate_dir } kind;
    std::string a, b;  // remove a / rename a -> b / make_dir a
    uint32_t mode = 0755;
  };
  FileWriter& w_;
  std::vector<Undo> undo_;
  std::vector<std::string> on_commit_;
  bool done_ = false;
};

}  // namespace dlenv
