#include "actions/transaction.h"

#include <gtest/gtest.h>

#include <functional>

#include "actions/cudnn_test_support.h"
#include "platform/filesystem.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using testing::TempDir;
namespace sfs = std::filesystem;

// A process that dies: the first `alive` mutating calls go through, every later
// one changes nothing and fails (as if the process had been killed before it).
class DiesAfter : public FileWriter {
 public:
  DiesAfter(FileWriter& inner, int alive) : inner_(inner), alive_(alive) {}
  Result<void> make_dir(const std::string& p, uint32_t m) override {
    return live() ? inner_.make_dir(p, m) : dead();
  }
  Result<std::unique_ptr<NewFile>> create_new_file(const std::string& p, uint32_t m,
                                                   uint64_t size) override {
    if (!live()) return fail("the process is dead");
    return inner_.create_new_file(p, m, size);
  }
  Result<void> make_symlink(const std::string& p, const std::string& t) override {
    return live() ? inner_.make_symlink(p, t) : dead();
  }
  Result<void> rename(const std::string& a, const std::string& b) override {
    return live() ? inner_.rename(a, b) : dead();
  }
  Result<void> replace_file(const std::string& a, const std::string& b) override {
    return live() ? inner_.replace_file(a, b) : dead();
  }
  Result<void> remove(const std::string& p) override { return live() ? inner_.remove(p) : dead(); }
  Result<void> append_durably(const std::string& p, std::string_view d) override {
    return live() ? inner_.append_durably(p, d) : dead();
  }
  bool exists(const std::string& p) const override { return inner_.exists(p); }
  std::string host_path(const std::string& p) const override { return inner_.host_path(p); }
  Result<std::unique_ptr<FileLock>> lock_dir(const std::string& d, bool w) override {
    return inner_.lock_dir(d, w);
  }
  bool died() const { return calls_ > alive_; }

 private:
  bool live() { return ++calls_ <= alive_; }
  static Result<void> dead() { return fail("the process is dead"); }
  FileWriter& inner_;
  int alive_;
  int calls_ = 0;
};

// A toolkit-like tree: /tk with lib/libx.so.1 (to be replaced) and lib/libx.so -> libx.so.1.
struct Tree {
  TempDir root{"txn", /*in_memory=*/true};
  std::unique_ptr<FileSystem> fs = make_rooted_filesystem(root.path());
  const std::string journal = "/tk/.dlenv/journal";
  Tree() {
    testing::write_file(root.at("tk/lib/libx.so.1"), "old library", 0755);
    testing::write_file(root.at("tk/include/x.h"), "old header");
    sfs::create_directories(root.at("tk/.dlenv"));
    sfs::create_symlink("libx.so.1", root.at("tk/lib/libx.so"));
    testing::write_file(root.at("tk/share/obsolete.txt"), "to be deleted on commit");
  }
};

// Replaces libx.so.1 and x.h, adds a link and a directory, deletes a file on commit:
// every kind of step. Returns the first failure.
Result<std::vector<std::string>> change(FileWriter& w, const std::string& journal) {
  Transaction tx(w, journal);
  auto go = [&]() -> Result<void> {
    if (auto r = tx.begin("test", "a change"); !r) return r;
    if (auto r = tx.make_dir("/tk/.dlenv/stage", 0700); !r) return r;
    if (auto r = tx.write_new_file("/tk/.dlenv/stage/libx", "new library", 0755); !r) return r;
    if (auto r = tx.write_new_file("/tk/.dlenv/stage/x.h", "new header", 0644); !r) return r;
    if (auto r = tx.make_symlink("/tk/.dlenv/stage/link", "libx.so.2"); !r) return r;
    if (auto r = tx.make_dir("/tk/.dlenv/backup", 0700); !r) return r;
    if (auto r = tx.make_dir("/tk/lib/sub"); !r) return r;
    if (auto r = tx.rename("/tk/lib/libx.so.1", "/tk/.dlenv/backup/libx"); !r) return r;
    if (auto r = tx.rename("/tk/.dlenv/stage/libx", "/tk/lib/libx.so.1"); !r) return r;
    if (auto r = tx.rename("/tk/include/x.h", "/tk/.dlenv/backup/x.h"); !r) return r;
    if (auto r = tx.rename("/tk/.dlenv/stage/x.h", "/tk/include/x.h"); !r) return r;
    if (auto r = tx.rename("/tk/.dlenv/stage/link", "/tk/lib/libx.so.2"); !r) return r;
    if (auto r = tx.remove_dir("/tk/.dlenv/stage", 0700); !r) return r;
    if (auto r = tx.rename("/tk/share/obsolete.txt", "/tk/.dlenv/trash"); !r) return r;
    tx.remove_on_commit("/tk/.dlenv/trash");
    return {};
  };
  if (auto r = go(); !r) {
    tx.rollback();
    return std::unexpected(r.error());
  }
  return tx.commit();
}

std::map<std::string, std::string> state(const Tree& t) {
  return testing::snapshot(t.root.path());
}

TEST(Transaction, CommitKeepsEverythingAndDeletesTheJournal) {
  Tree t;
  auto before = state(t);
  auto w = make_file_writer(t.root.path());
  auto r = change(*w, t.journal);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->empty());
  auto after = state(t);
  EXPECT_NE(before, after);
  EXPECT_EQ(testing::read_host_file(t.root.at("tk/lib/libx.so.1")), "new library");
  EXPECT_EQ(sfs::read_symlink(t.root.at("tk/lib/libx.so.2")), "libx.so.2");
  EXPECT_EQ(sfs::status(t.root.at("tk/lib/libx.so.1")).permissions(), sfs::perms(0755));
  EXPECT_FALSE(sfs::exists(t.root.at("tk/share/obsolete.txt")));
  EXPECT_FALSE(sfs::exists(t.root.at("tk/.dlenv/journal")));
  EXPECT_FALSE(sfs::exists(t.root.at("tk/.dlenv/trash")));
  // Nothing to recover afterwards.
  auto rec = recover_transaction(*t.fs, *w, t.journal);
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->outcome, RecoveryResult::Outcome::nothing);
}

// What a crash sweep saw: the mutating calls of the whole change, and how many crashes
// recovery rolled back or finished.
struct CrashSweep {
  int calls = 0;
  int rolled_back = 0;
  int finished = 0;
};

// Runs `change(writer, journal)` once whole on a fresh Tree (`check_after` then sees that
// Tree), then, for every N, on a fresh Tree with a process that dies before its N-th
// mutating call: recovery then leaves exactly the state before or after, says which (as
// read_pending_transaction predicted), and removes the journal.
template <class Change>
CrashSweep crash_at_every_call(Change change, const std::function<void(const Tree&)>& check_after) {
  CrashSweep sweep;
  std::map<std::string, std::string> before, after;
  {
    Tree t;
    before = state(t);
    auto real = make_file_writer(t.root.path());
    FaultInjectingWriter counting(*real, 0);
    auto r = change(counting, t.journal);
    EXPECT_TRUE(r) << r.error().message;
    if (!r) return sweep;
    sweep.calls = counting.calls();
    after = state(t);
    check_after(t);
  }
  for (int k = 0; k < sweep.calls; ++k) {
    Tree t;
    auto real = make_file_writer(t.root.path());
    {
      DiesAfter dying(*real, k);
      (void)change(dying, t.journal);
      EXPECT_TRUE(dying.died()) << k;
    }
    auto pending = read_pending_transaction(*t.fs, t.journal);
    auto rec = recover_transaction(*t.fs, *real, t.journal);
    EXPECT_TRUE(rec) << k << ": " << rec.error().message;
    if (!rec) continue;
    EXPECT_TRUE(rec->problems.empty()) << k << ": " << join(rec->problems, "; ");
    const bool finished = rec->outcome == RecoveryResult::Outcome::finished;
    ++(finished ? sweep.finished : sweep.rolled_back);
    EXPECT_EQ(state(t), finished ? after : before) << "crash before call " << k + 1;
    if (pending) {
      EXPECT_EQ(pending->outcome, rec->outcome) << k;
    }
    EXPECT_FALSE(sfs::exists(t.root.at("tk/.dlenv/journal")));
  }
  return sweep;
}

// The process dies before its N-th mutating call, for every N: recovery then leaves
// exactly the state before or after, and says which.
TEST(Transaction, RecoveryAfterACrashAtEveryCallIsExact) {
  const CrashSweep sweep = crash_at_every_call(change, [](const Tree&) {});
  ASSERT_GT(sweep.calls, 25);
  EXPECT_GT(sweep.rolled_back, 20);
  EXPECT_GT(sweep.finished, 0);  // after the commit record: the deferred removal, the journal
}

// Paths that are not UTF-8 (a Latin-1 or Shift-JIS directory name) go through the journal
// byte for byte: a crash at any call is still recovered exactly (json_text /
// parse_json_text; nlohmann's own dump() threw on them).
TEST(Transaction, PathsThatAreNotUtf8AreJournaledByteForByte) {
  const std::string odd = "/tk/lib/lib\xff\xfe\x1b.so";
  auto change_odd = [&](FileWriter& w, const std::string& journal) -> Result<void> {
    Transaction tx(w, journal);
    auto go = [&]() -> Result<void> {
      if (auto r = tx.begin("test", "odd names"); !r) return r;
      if (auto r = tx.write_new_file("/tk/.dlenv/new\xe9", "new", 0644); !r) return r;
      if (auto r = tx.rename("/tk/lib/libx.so.1", odd); !r) return r;
      if (auto r = tx.rename("/tk/.dlenv/new\xe9", "/tk/lib/libx.so.1"); !r) return r;
      return {};
    };
    if (auto r = go(); !r) {
      tx.rollback();
      return std::unexpected(r.error());
    }
    if (auto r = tx.commit(); !r) return std::unexpected(r.error());
    return {};
  };
  const CrashSweep sweep = crash_at_every_call(change_odd, [&](const Tree& t) {
    EXPECT_EQ(testing::read_host_file(t.root.path() + odd), "old library");
  });
  EXPECT_GT(sweep.calls, 0);
}

// A step fails (rollback starts), the process dies during that rollback, then dies
// again during the first recovery: the second recovery still restores the exact
// previous state (each undo is journaled, so no undo runs twice on a changed disk).
TEST(Transaction, CrashesDuringRollbackAndRecoveryStillEndExact) {
  int total = 0;
  {
    Tree t;
    auto real = make_file_writer(t.root.path());
    FaultInjectingWriter counting(*real, 0);
    ASSERT_TRUE(change(counting, t.journal));
    total = counting.calls();
  }
  int cases = 0;
  for (int fault : {12, 20, total - 4}) {
    for (int die = 1; die < 12; die += 2) {
      for (int die2 : {1, 3, 6}) {
        Tree t;
        auto before = state(t);
        auto real = make_file_writer(t.root.path());
        {
          FaultInjectingWriter faulty(*real, fault);
          DiesAfter dying(faulty, fault + die);
          (void)change(dying, t.journal);
        }
        {
          DiesAfter dying(*real, die2);
          (void)recover_transaction(*t.fs, dying, t.journal);
        }
        auto rec = recover_transaction(*t.fs, *real, t.journal);
        ASSERT_TRUE(rec) << rec.error().message;
        EXPECT_TRUE(rec->problems.empty()) << join(rec->problems, "; ");
        EXPECT_EQ(state(t), before) << "fault " << fault << ", died " << die << ", then " << die2;
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 54);
}

TEST(Transaction, AFailedStepIsUndoneAtOnceAndTheJournalGoes) {
  Tree t;
  auto before = state(t);
  auto real = make_file_writer(t.root.path());
  FaultInjectingWriter faulty(*real, 15);
  auto r = change(faulty, t.journal);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("injected failure at step 15"), std::string::npos);
  EXPECT_EQ(state(t), before);
}

TEST(Transaction, ATornOrForeignJournal) {
  Tree t;
  auto before = state(t);
  auto real = make_file_writer(t.root.path());
  // Only a torn begin record: nothing had started.
  testing::write_file(t.root.at("tk/.dlenv/journal"), "\n{\"op\":\"begin\",\"jour", 0600);
  auto rec = recover_transaction(*t.fs, *real, t.journal);
  ASSERT_TRUE(rec) << rec.error().message;
  EXPECT_EQ(rec->outcome, RecoveryResult::Outcome::discarded);
  EXPECT_EQ(state(t), before);
  // Not a dlenv journal: refused, untouched.
  testing::write_file(t.root.at("tk/.dlenv/journal"), "{\"op\":\"rename\",\"from\":\"/a\"}\n");
  rec = recover_transaction(*t.fs, *real, t.journal);
  ASSERT_FALSE(rec);
  EXPECT_NE(rec.error().message.find("begin record"), std::string::npos) << rec.error().message;
  EXPECT_TRUE(sfs::exists(t.root.at("tk/.dlenv/journal")));
  sfs::remove(t.root.at("tk/.dlenv/journal"));
  // A journal that is a link is never read through.
  sfs::create_symlink("/etc/passwd", t.root.at("tk/.dlenv/journal"));
  rec = recover_transaction(*t.fs, *real, t.journal);
  ASSERT_FALSE(rec);
  EXPECT_NE(rec.error().message.find("not a regular file"), std::string::npos);
}

TEST(Transaction, ASecondTransactionWaitsForTheJournalToBeRecovered) {
  Tree t;
  auto real = make_file_writer(t.root.path());
  testing::write_file(t.root.at("tk/.dlenv/journal"),
                      "\n{\"op\":\"begin\",\"journal\":\"dlenv.journal/1\",\"kind\":\"x\"}", 0600);
  Transaction tx(*real, t.journal);
  auto r = tx.begin("test", "second");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("must be recovered first"), std::string::npos);
}

TEST(FileWriterPosix, NeverWritesThroughALinkedDirectory) {
  Tree t;
  TempDir outside("outside");
  sfs::remove_all(t.root.at("tk/.dlenv"));
  sfs::create_directory_symlink(outside.path(), t.root.at("tk/.dlenv"));
  auto real = make_file_writer(t.root.path());
  auto r = real->write_new_file("/tk/.dlenv/x", "data", 0644);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("is a symbolic link"), std::string::npos) << r.error().message;
  EXPECT_FALSE(real->append_durably("/tk/.dlenv/journal", "x"));
  EXPECT_FALSE(real->make_dir("/tk/.dlenv/d", 0755));
  EXPECT_TRUE(sfs::is_empty(outside.path()));
  // The link itself may be renamed or removed (never its target).
  EXPECT_TRUE(real->remove("/tk/.dlenv"));
  EXPECT_TRUE(sfs::exists(outside.path()));
}

TEST(FileWriterPosix, ModesAreExactAndRenamesNeverReplace) {
  Tree t;
  auto real = make_file_writer(t.root.path());
  ::umask(077);
  ASSERT_TRUE(real->write_new_file("/tk/f", "x", 0644));
  ASSERT_TRUE(real->make_dir("/tk/d", 0755));
  ::umask(022);
  EXPECT_EQ(sfs::status(t.root.at("tk/f")).permissions(), sfs::perms(0644));
  EXPECT_EQ(sfs::status(t.root.at("tk/d")).permissions(), sfs::perms(0755));
  auto r = real->rename("/tk/f", "/tk/include/x.h");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("destination exists"), std::string::npos);
  EXPECT_EQ(testing::read_host_file(t.root.at("tk/include/x.h")), "old header");
  EXPECT_FALSE(real->write_new_file("/tk/f", "y", 0644));  // never overwrites
}

// A file written in pieces holds exactly the bytes its creator declared: one more is
// refused, one fewer fails at finish(), and an unfinished file does not stay.
TEST(FileWriterPosix, NewFilesHoldExactlyTheDeclaredBytes) {
  Tree t;
  auto real = make_file_writer(t.root.path());
  {
    auto f = real->create_new_file("/tk/big", 0644, 8);
    ASSERT_TRUE(f) << f.error().message;
    ASSERT_TRUE((*f)->write("1234"));
    auto over = (*f)->write("56789");
    ASSERT_FALSE(over);
    EXPECT_NE(over.error().message.find("more than the 8 bytes"), std::string::npos);
    ASSERT_TRUE((*f)->write("5678"));
    ASSERT_TRUE((*f)->finish());
  }
  EXPECT_EQ(testing::read_host_file(t.root.at("tk/big")), "12345678");
  {
    auto f = real->create_new_file("/tk/short", 0644, 8);
    ASSERT_TRUE(f);
    ASSERT_TRUE((*f)->write("123"));
    auto done = (*f)->finish();
    ASSERT_FALSE(done);
    EXPECT_NE(done.error().message.find("3 bytes were written, 8 were declared"), std::string::npos)
        << done.error().message;
  }
  EXPECT_FALSE(sfs::exists(t.root.at("tk/short")));  // not finished: removed
}

TEST(FileWriterPosix, TheLockIsExclusiveAndGoesWithItsHolder) {
  Tree t;
  auto a = make_file_writer(t.root.path());
  auto b = make_file_writer(t.root.path());
  auto held = a->lock_dir("/tk", false);
  ASSERT_TRUE(held && *held);
  auto second = b->lock_dir("/tk", false);
  ASSERT_TRUE(second);
  EXPECT_EQ(*second, nullptr);  // busy
  held->reset();
  second = b->lock_dir("/tk", false);
  ASSERT_TRUE(second && *second);
}

}  // namespace
}  // namespace dlenv
