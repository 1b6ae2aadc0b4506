// Transaction: a sequence of FileWriter steps that is undone unless committed,
// and, when given a journal file, survives a crash (kill -9, power loss) at any
// point: `recover_transaction` then finishes it or rolls it back exactly.
//
// Write-ahead journal (docs/install-transactions.md): one JSON record per line,
// each appended and fsync'd (append_durably) BEFORE the step it describes runs:
//   {"op":"begin","journal":"dlenv.journal/1","kind":"cudnn-install","what":"...","pid":N}
//   {"op":"make_dir","path":P,"mode":M}    {"op":"write","path":P,"mode":M}
//   {"op":"symlink","path":P,"target":T}   {"op":"rename","from":A,"to":B}
//   {"op":"remove_dir","path":P,"mode":M}
//   {"op":"commit","remove":[paths deleted after the commit]}
//   {"op":"undone","step":I}               (rollback progress: step I is undone)
// Steps are numbered from 0 in the order of their records (begin, commit and
// undone records are not steps). The FileWriter fsyncs each file before it
// returns and each directory after an entry in it changed, so every step whose
// record precedes another record is on disk.
//
// Recovery: no complete begin record -> nothing happened, the journal goes. A
// commit record -> the change stands: the listed removals are done (those still
// there) and the journal goes. Otherwise every step not yet undone is undone,
// newest first, each followed by an "undone" record. Only the newest step not
// yet undone can have been interrupted, so its undo looks at the disk to see
// whether it ran (a rename is undone only when its destination is there and its
// source is not; a write or make_dir only when its path is there; a remove_dir
// only when its path is gone). A torn last line (no newline, or not JSON) is a
// record that was being written: its step never started.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actions/file_writer.h"

namespace dlenv {

class FileSystem;

class Transaction {
 public:
  // In memory only: undone on failure, but not across a crash (env --persist).
  explicit Transaction(FileWriter& writer) : w_(writer) {}
  // Journaled in `journal` (whose directory must exist; the file must not).
  Transaction(FileWriter& writer, std::string journal) : w_(writer), journal_(std::move(journal)) {}
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  // Journaled: creates the journal with its begin record (`kind`: "cudnn-install",
  // `what`: "cuDNN 9.1.0.70"). Error when a journal is already there.
  Result<void> begin(const std::string& kind, const std::string& what);

  Result<void> make_dir(const std::string& path, uint32_t mode = 0755);
  // make_dir for `path` and every missing parent (exists(): a directory already there).
  Result<void> make_dirs(const std::string& path,
                         const std::function<bool(const std::string&)>& exists);
  Result<void> write_new_file(const std::string& path, std::string_view data, uint32_t mode);
  // A new file written in pieces (FileWriter::create_new_file), journaled as a write.
  Result<std::unique_ptr<NewFile>> create_new_file(const std::string& path, uint32_t mode,
                                                   uint64_t size);
  Result<void> make_symlink(const std::string& path, const std::string& target);
  Result<void> rename(const std::string& from, const std::string& to);
  // Removes an empty directory (undo: creates it again with `mode`).
  Result<void> remove_dir(const std::string& path, uint32_t mode = 0755);
  // An irreversible removal, run only by commit() (after everything else worked).
  void remove_on_commit(const std::string& path) { on_commit_.push_back(path); }

  // Keeps every change: journals the commit, runs the deferred removals, deletes the
  // journal. Error when the commit record cannot be written (then nothing is kept:
  // the caller rolls back). Otherwise the removals (or journal deletion) that failed,
  // as text; the change itself stands.
  Result<std::vector<std::string>> commit();
  // Undoes every step done so far, newest first. Returns the steps that could not
  // be undone (empty: the previous state is back exactly).
  std::vector<std::string> rollback();
  size_t steps() const { return steps_.size(); }

  // One journal record; public for recovery.
  struct Step {
    enum Kind { make_dir, write, symlink, rename, remove_dir } kind;
    std::string a, b;  // path / from, to / path, target
    uint32_t mode = 0755;
  };

 private:
  // Journals `s` (durably, when journaled) and remembers it; the step runs after.
  Result<void> record(Step s);
  Result<void> create(Step s, const std::function<Result<void>()>& run);
  FileWriter& w_;
  std::string journal_;
  bool begun_ = false;
  std::vector<Step> steps_;
  std::vector<std::string> on_commit_;
  bool done_ = false;
};

struct RecoveryResult {
  enum class Outcome { nothing, discarded, finished, rolled_back } outcome = Outcome::nothing;
  std::string kind;  // from the begin record
  std::string what;
  long long pid = 0;
  size_t steps = 0;                   // steps the journal held
  size_t undone = 0;                  // undone now (rolled_back)
  std::vector<std::string> problems;  // empty: exact
};
const char* recovery_outcome_name(RecoveryResult::Outcome o);

// What the journal at `journal` says, without changing anything (nullopt: none).
std::optional<RecoveryResult> read_pending_transaction(const FileSystem& fs,
                                                       const std::string& journal);

// Finishes or rolls back the transaction journaled at `journal` (see above) and
// deletes the journal. Outcome::nothing when there is none. The caller holds the lock.
Result<RecoveryResult> recover_transaction(const FileSystem& fs, FileWriter& writer,
                                           const std::string& journal);

}  // namespace dlenv
