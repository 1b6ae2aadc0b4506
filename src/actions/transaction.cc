#include "actions/transaction.h"

#include <fmt/format.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <set>

#include "platform/filesystem.h"
#include "util/safe_text.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using nlohmann::json;

const char* const kJournalSchema = "dlenv.journal/1";

const char* step_op(Transaction::Step::Kind k) {
  switch (k) {
    case Transaction::Step::make_dir: return "make_dir";
    case Transaction::Step::write: return "write";
    case Transaction::Step::symlink: return "symlink";
    case Transaction::Step::rename: return "rename";
    case Transaction::Step::remove_dir: return "remove_dir";
  }
  return "?";
}

std::string step_record(const Transaction::Step& s) {
  json j{{"op", step_op(s.kind)}};
  switch (s.kind) {
    case Transaction::Step::rename:
      j["from"] = s.a;
      j["to"] = s.b;
      break;
    case Transaction::Step::symlink:
      j["path"] = s.a;
      j["target"] = s.b;
      break;
    default: j["path"] = s.a; j["mode"] = s.mode;
  }
  return "\n" + json_text(j);
}

// Undoes one step by what the disk shows (see transaction.h: only the newest step
// not yet undone can have been cut short, so this check is exact for it and a
// no-op repeat for a step whose undo ran but was not yet recorded).
Result<void> undo_step(FileWriter& w, const Transaction::Step& s) {
  switch (s.kind) {
    case Transaction::Step::make_dir:
    case Transaction::Step::write:
    case Transaction::Step::symlink:
      if (w.exists(s.a)) return w.remove(s.a);
      return {};
    case Transaction::Step::rename:
      if (w.exists(s.b) && !w.exists(s.a)) return w.rename(s.b, s.a);
      return {};
    case Transaction::Step::remove_dir:
      if (!w.exists(s.a)) return w.make_dir(s.a, s.mode);
      return {};
  }
  return {};
}

std::string undone_record(size_t i) {
  return "\n" + json_text(json{{"op", "undone"}, {"step", i}});
}

// Undoes steps[i] for every i not in `undone`, newest first, journaling each.
std::vector<std::string> undo_steps(FileWriter& w, const std::vector<Transaction::Step>& steps,
                                    const std::set<size_t>& undone, const std::string& journal,
                                    size_t* count) {
  std::vector<std::string> problems;
  for (size_t i = steps.size(); i-- > 0;) {
    if (undone.count(i)) continue;
    if (auto r = undo_step(w, steps[i]); !r) {
      problems.push_back(r.error().message);
      continue;
    }
    if (count) ++*count;
    if (!journal.empty()) {
      if (auto r = w.append_durably(journal, undone_record(i)); !r) {
        problems.push_back(r.error().message);
      }
    }
  }
  return problems;
}

struct ParsedJournal {
  bool begun = false;
  std::string kind, what;
  long long pid = 0;
  std::vector<Transaction::Step> steps;
  std::set<size_t> undone;
  std::optional<std::vector<std::string>> commit_removals;
};

Result<ParsedJournal> parse_journal(std::string_view text, const std::string& where) {
  ParsedJournal p;
  size_t line_no = 0;
  for (const auto& line : split(text, '\n', true)) {
    ++line_no;
    if (line.empty()) continue;
    json j = parse_json_text(line, false);
    auto str = [&](const char* k) {
      return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string();
    };
    // A record cut short (the process died, or the disk filled, while it was written):
    // its step never started, since a step runs only after its record is on disk.
    if (j.is_discarded() || !j.is_object() || !j.contains("op")) continue;
    const std::string op = str("op");
    if (!p.begun) {
      if (op != "begin" || str("journal") != kJournalSchema) {
        return fail(fmt::format("{} does not start with a {} begin record: nothing was changed",
                                where, kJournalSchema));
      }
      p.begun = true;
      p.kind = str("kind");
      p.what = str("what");
      p.pid = j.value("pid", 0LL);
      continue;
    }
    Transaction::Step s{};
    if (op == "make_dir" || op == "write" || op == "remove_dir") {
      s.kind = op == "make_dir" ? Transaction::Step::make_dir
               : op == "write"  ? Transaction::Step::write
                                : Transaction::Step::remove_dir;
      s.a = str("path");
      s.mode = j.value("mode", 0755u);
    } else if (op == "symlink") {
      s.kind = Transaction::Step::symlink;
      s.a = str("path");
      s.b = str("target");
    } else if (op == "rename") {
      s.kind = Transaction::Step::rename;
      s.a = str("from");
      s.b = str("to");
    } else if (op == "undone") {
      p.undone.insert(j.value("step", size_t{0}));
      continue;
    } else if (op == "commit") {
      std::vector<std::string> removals;
      if (j.contains("remove") && j["remove"].is_array()) {
        for (const auto& r : j["remove"]) {
          if (r.is_string()) removals.push_back(r.get<std::string>());
        }
      }
      p.commit_removals = std::move(removals);
      continue;
    } else {
      return fail(
          fmt::format("{} line {}: unknown step \"{}\": nothing was changed", where, line_no, op));
    }
    if (s.a.empty()) {
      return fail(
          fmt::format("{} line {}: a step without a path: nothing was changed", where, line_no));
    }
    p.steps.push_back(std::move(s));
  }
  return p;
}

Result<std::string> read_journal(const FileSystem& fs, const std::string& journal) {
  auto st = fs.lstat(journal);
  if (!st) return std::string();
  if (st->type != FileType::regular) {
    return fail(journal + " is not a regular file: dlenv never reads a journal through a link");
  }
  return fs.read_file(journal, 64u << 20);
}

}  // namespace

Transaction::~Transaction() {
  if (!done_) rollback();
}

Result<void> Transaction::begin(const std::string& kind, const std::string& what) {
  if (journal_.empty() || begun_) return {};
  if (w_.exists(journal_)) {
    return fail(journal_ + " exists: an interrupted transaction must be recovered first");
  }
  json j{{"op", "begin"},
         {"journal", kJournalSchema},
         {"kind", kind},
         {"what", what},
         {"pid", static_cast<long long>(::getpid())}};
  if (auto r = w_.append_durably(journal_, "\n" + json_text(j)); !r) {
    if (w_.exists(journal_)) (void)w_.remove(journal_);
    done_ = true;
    return r;
  }
  begun_ = true;
  return {};
}

Result<void> Transaction::record(Step s) {
  if (!journal_.empty()) {
    if (!begun_) return fail("internal: a journaled transaction step before begin()");
    auto r = w_.append_durably(journal_, step_record(s));
    // Kept even when its record failed: it is the newest step, whose undo checks the
    // disk, and the in-memory steps stay numbered as the journal's.
    steps_.push_back(std::move(s));
    return r;
  }
  steps_.push_back(std::move(s));
  return {};
}

Result<void> Transaction::create(Step s, const std::function<Result<void>()>& run) {
  // Never journal a path that is already there: recovery would remove it.
  if (w_.exists(s.a)) {
    return fail(fmt::format("cannot create {}: something is already there", w_.host_path(s.a)));
  }
  if (auto r = record(std::move(s)); !r) return r;
  return run();
}

Result<void> Transaction::make_dir(const std::string& path, uint32_t mode) {
  return create({Step::make_dir, path, "", mode}, [&] { return w_.make_dir(path, mode); });
}

Result<void> Transaction::make_dirs(const std::string& path,
                                    const std::function<bool(const std::string&)>& exists) {
  if (path.empty() || path == "/" || exists(path)) return {};
  auto parent = make_dirs(path_dirname(path), exists);
  if (!parent) return parent;
  return make_dir(path);
}

Result<void> Transaction::write_new_file(const std::string& path, std::string_view data,
                                         uint32_t mode) {
  auto f = create_new_file(path, mode, data.size());
  if (!f) return std::unexpected(f.error());
  if (auto w = (*f)->write(data); !w) return w;
  return (*f)->finish();
}

Result<std::unique_ptr<NewFile>> Transaction::create_new_file(const std::string& path,
                                                              uint32_t mode, uint64_t size) {
  std::unique_ptr<NewFile> file;
  auto r = create({Step::write, path, "", mode}, [&]() -> Result<void> {
    auto f = w_.create_new_file(path, mode, size);
    if (!f) return std::unexpected(f.error());
    file = std::move(*f);
    return {};
  });
  if (!r) return std::unexpected(r.error());
  return file;
}

Result<void> Transaction::make_symlink(const std::string& path, const std::string& target) {
  return create({Step::symlink, path, target, 0}, [&] { return w_.make_symlink(path, target); });
}

Result<void> Transaction::rename(const std::string& from, const std::string& to) {
  if (w_.exists(to)) {
    return fail(fmt::format("cannot move {} to {}: the destination exists", w_.host_path(from),
                            w_.host_path(to)));
  }
  if (auto r = record({Step::rename, from, to, 0}); !r) return r;
  return w_.rename(from, to);
}

Result<void> Transaction::remove_dir(const std::string& path, uint32_t mode) {
  if (auto r = record({Step::remove_dir, path, "", mode}); !r) return r;
  return w_.remove(path);
}

Result<std::vector<std::string>> Transaction::commit() {
  if (!journal_.empty() && begun_) {
    json j{{"op", "commit"}, {"remove", on_commit_}};
    if (auto r = w_.append_durably(journal_, "\n" + json_text(j)); !r) {
      return std::unexpected(r.error());
    }
  }
  done_ = true;
  steps_.clear();
  std::vector<std::string> failed;
  for (const auto& p : on_commit_) {
    if (auto r = w_.remove(p); !r) failed.push_back(r.error().message);
  }
  on_commit_.clear();
  if (!journal_.empty() && begun_) {
    if (auto r = w_.remove(journal_); !r) failed.push_back(r.error().message);
  }
  return failed;
}

std::vector<std::string> Transaction::rollback() {
  done_ = true;
  on_commit_.clear();
  const std::string journal = begun_ ? journal_ : std::string();
  auto problems = undo_steps(w_, steps_, {}, journal, nullptr);
  steps_.clear();
  if (!journal.empty() && problems.empty()) {
    if (auto r = w_.remove(journal); !r) problems.push_back(r.error().message);
  }
  return problems;
}

const char* recovery_outcome_name(RecoveryResult::Outcome o) {
  switch (o) {
    case RecoveryResult::Outcome::nothing: return "nothing";
    case RecoveryResult::Outcome::discarded: return "discarded";
    case RecoveryResult::Outcome::finished: return "finished";
    case RecoveryResult::Outcome::rolled_back: return "rolled-back";
  }
  return "?";
}

std::optional<RecoveryResult> read_pending_transaction(const FileSystem& fs,
                                                       const std::string& journal) {
  if (!fs.lstat(journal)) return std::nullopt;
  RecoveryResult r;
  auto text = read_journal(fs, journal);
  auto parsed =
      text ? parse_journal(*text, journal) : Result<ParsedJournal>(std::unexpected(text.error()));
  if (!parsed) {
    r.problems.push_back(parsed.error().message);
    return r;
  }
  r.kind = parsed->kind;
  r.what = parsed->what;
  r.pid = parsed->pid;
  r.steps = parsed->steps.size();
  r.outcome = !parsed->begun            ? RecoveryResult::Outcome::discarded
              : parsed->commit_removals ? RecoveryResult::Outcome::finished
                                        : RecoveryResult::Outcome::rolled_back;
  return r;
}

Result<RecoveryResult> recover_transaction(const FileSystem& fs, FileWriter& w,
                                           const std::string& journal) {
  RecoveryResult r;
  auto text = read_journal(fs, journal);
  if (!text) return std::unexpected(text.error());
  if (!fs.lstat(journal)) return r;
  auto parsed = parse_journal(*text, journal);
  if (!parsed) return std::unexpected(parsed.error());
  r.kind = parsed->kind;
  r.what = parsed->what;
  r.pid = parsed->pid;
  r.steps = parsed->steps.size();
  if (!parsed->begun) {
    r.outcome = RecoveryResult::Outcome::discarded;
  } else if (parsed->commit_removals) {
    r.outcome = RecoveryResult::Outcome::finished;
    for (const auto& p : *parsed->commit_removals) {
      if (!w.exists(p)) continue;
      if (auto x = w.remove(p); !x) r.problems.push_back(x.error().message);
    }
  } else {
    r.outcome = RecoveryResult::Outcome::rolled_back;
    r.problems = undo_steps(w, parsed->steps, parsed->undone, journal, &r.undone);
  }
  if (r.problems.empty()) {
    if (auto x = w.remove(journal); !x) r.problems.push_back(x.error().message);
  }
  return r;
}

}  // namespace dlenv
