// The kill-point harness (docs/install-transactions.md): `dlenv cudnn install` and
// `uninstall` run in a child process that SIGKILLs itself at its N-th mutating
// file-system call (DLENV_KILL_AT=N, cli/kill_point.h), once for every N, then
// `dlenv cudnn recover --no-wait` runs (the dead child's lock must be free) and the
// toolkit tree (paths, bytes, modes, link targets) must be exactly the state before
// or after. And two installs at once into one toolkit: the lock serialises them.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "actions/cudnn_test_support.h"
#include "actions/file_writer.h"
#include "cli/cli.h"
#include "cli/cli_test_support.h"
#include "util/sanitizer_build.h"

namespace dlenv {
namespace {

using testing::run_cli;
using testing::TempDir;
namespace sfs = std::filesystem;
using Snapshot = std::map<std::string, std::string>;

struct Child {
  pid_t pid = -1;
  std::string out_file, err_file;
};

// Runs the CLI in a forked child (DLENV_KILL_AT=kill_at when > 0), its output into files.
Child start_child(const std::vector<std::string>& args, int kill_at, const std::string& logs) {
  Child c;
  c.out_file = logs + ".out";
  c.err_file = logs + ".err";
  std::fflush(nullptr);
  c.pid = ::fork();
  if (c.pid == 0) {
    if (kill_at > 0) ::setenv("DLENV_KILL_AT", std::to_string(kill_at).c_str(), 1);
    std::vector<const char*> argv = {"dlenv"};
    for (const auto& a : args) argv.push_back(a.c_str());
    int code = 3;
    {
      std::ofstream out(c.out_file), err(c.err_file);
      code = cli_main(static_cast<int>(argv.size()), argv.data(), out, err, false);
    }
    ::_exit(code);
  }
  return c;
}

struct Ended {
  bool killed = false;
  int code = -1;
  std::string out, err;
};

Ended wait_child(const Child& c) {
  int status = 0;
  ::waitpid(c.pid, &status, 0);
  Ended e;
  e.killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  e.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  e.out = testing::read_host_file(c.out_file);
  e.err = testing::read_host_file(c.err_file);
  return e;
}

void copy_tree(const std::string& from, const std::string& to) {
  sfs::copy(from, to, sfs::copy_options::recursive | sfs::copy_options::copy_symlinks);
}

// A sysroot with a CUDA 12.4 toolkit holding cuDNN 9.0.0, and a cuDNN 9.1.0.70 archive.
struct Harness {
  TempDir work{"killpoints", /*in_memory=*/true};
  std::string pristine = work.at("pristine");
  std::string archive = work.at("cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz");
  std::string tk;
  int copies = 0;
  Harness() {
    tk = testing::write_toolkit_with_cudnn_9_0(pristine, "12.4.1", 12);
    testing::write_archive(
        archive, testing::ArchiveFormat::tar_xz,
        testing::fake_cudnn9_linux("cudnn-linux-x86_64-9.1.0.70_cuda12-archive", 1, 0, 12));
  }
  // A fresh copy of `tree` (under the work directory).
  std::string copy_of(const std::string& tree) {
    std::string dir = work.at("run-" + std::to_string(copies++));
    copy_tree(tree, dir);
    return dir;
  }
  std::vector<std::string> install(const std::string& root) const {
    return {"cudnn", "install", archive, "--root", root, "--yes"};
  }
  std::vector<std::string> uninstall(const std::string& root) const {
    return {"cudnn", "uninstall", "9.1.0.70", "--root", root, "--yes"};
  }
};

struct KillPointRun {
  int points = 0;  // kill points exercised
  int before = 0, after = 0, broken = 0;
};

// Every kill point in the ci build; under the sanitizers, where one run takes ~10 times as
// long (the whole sweep there was 270 s of CI's 60 min), every fourth and then every one of
// the last four (the few after the commit record are there).
constexpr int kKillPointStride = kSanitizerBuild ? 4 : 1;

// Kills `args` at every mutating call in turn (see kKillPointStride), recovering after each.
KillPointRun every_kill_point(Harness& s, const std::string& tree, const Snapshot& before,
                              const Snapshot& after,
                              const std::function<std::vector<std::string>(std::string)>& args) {
  KillPointRun k;
  // Kills the run at mutating call n; false when it had fewer (it completed).
  auto kill_at = [&](int n) {
    const std::string root = s.copy_of(tree);
    EXPECT_EQ(testing::snapshot(root), before);
    Ended e = wait_child(start_child(args(root), n, root + "-log"));
    if (!e.killed) {
      EXPECT_EQ(e.code, 0) << e.out << e.err;
      EXPECT_EQ(testing::snapshot(root), after);
      sfs::remove_all(root);
      return false;
    }
    ++k.points;
    auto rec = run_cli({"cudnn", "recover", "--root", root, "--no-wait"});
    EXPECT_EQ(rec.code, 0) << "kill point " << n << ": " << rec.out << rec.err;
    Snapshot now = testing::snapshot(root);
    if (now == before) {
      ++k.before;
    } else if (now == after) {
      ++k.after;
    } else {
      ++k.broken;
      ADD_FAILURE() << "kill point " << n << " left a state that is neither before nor after\n"
                    << rec.out << rec.err;
    }
    sfs::remove_all(root);
    return true;
  };
  int n = 1;
  while (n < 2000 && kill_at(n)) n += kKillPointStride;
  // The points the stride stepped over at the end, before the completed run.
  for (int m = std::max(n - kKillPointStride + 1, 1); m < n; ++m) kill_at(m);
  return k;
}

TEST(CudnnKillPoints, InstallAndUninstallKilledAtEveryMutatingCallRecoverExactly) {
  Harness s;
  const Snapshot before = testing::snapshot(s.pristine);
  // The installed state, from a clean run.
  const std::string installed = s.copy_of(s.pristine);
  auto r = run_cli(s.install(installed));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const Snapshot after = testing::snapshot(installed);
  ASSERT_NE(before, after);

  KillPointRun ins = every_kill_point(s, s.pristine, before, after,
                                      [&](const std::string& root) { return s.install(root); });
  KillPointRun un = every_kill_point(s, installed, after, before,
                                     [&](const std::string& root) { return s.uninstall(root); });
  std::printf(
      "[ kill points ] install: %d exercised (%d recovered to before, %d to after), "
      "uninstall: %d exercised (%d to installed, %d to removed); broken: %d\n",
      ins.points, ins.before, ins.after, un.points, un.before, un.after, ins.broken + un.broken);
  EXPECT_EQ(ins.broken + un.broken, 0);
  // Every step of both is journaled first: well over one kill point per file.
  EXPECT_GT(ins.points * kKillPointStride, 60);
  EXPECT_GT(un.points * kKillPointStride, 40);
  EXPECT_GT(ins.before, 0);
  EXPECT_GT(ins.after, 0);  // killed after the commit record: recovery finishes it
  EXPECT_GT(un.before, 0);
  EXPECT_GT(un.after, 0);
}

TEST(CudnnKillPoints, TwoInstallsAtOnceAreSerialisedByTheLock) {
  Harness s;
  const Snapshot before = testing::snapshot(s.pristine);
  const std::string installed = s.copy_of(s.pristine);
  ASSERT_EQ(run_cli(s.install(installed)).code, 0);
  const Snapshot after = testing::snapshot(installed);

  const std::string root = s.copy_of(s.pristine);
  auto holder = make_file_writer(root);
  auto lock = holder->lock_dir(s.tk, false);
  ASSERT_TRUE(lock && *lock);
  // --no-wait fails at once and changes nothing.
  auto nw = run_cli({"cudnn", "install", s.archive, "--root", root, "--yes", "--no-wait"});
  EXPECT_EQ(nw.code, 1);
  EXPECT_NE(nw.err.find("another dlenv process is changing /usr/local/cuda-12.4"),
            std::string::npos)
      << nw.err;
  EXPECT_EQ(testing::snapshot(root), before);
  // Two installs wait for the lock (each says so), then run one after the other.
  Child a = start_child(s.install(root), 0, root + "-a");
  Child b = start_child(s.install(root), 0, root + "-b");
  auto waiting = [](const Child& c) {
    return testing::read_host_file(c.err_file).find("waiting for it to finish") !=
           std::string::npos;
  };
  for (int i = 0; i < 600 && !(waiting(a) && waiting(b)); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(waiting(a) && waiting(b));
  EXPECT_EQ(testing::snapshot(root), before);  // nothing happened while they waited
  lock->reset();
  Ended ea = wait_child(a), eb = wait_child(b);
  EXPECT_FALSE(ea.killed || eb.killed);
  EXPECT_EQ((ea.code == 0) + (eb.code == 0), 1) << ea.out << ea.err << eb.out << eb.err;
  const Ended& second = ea.code == 0 ? eb : ea;
  EXPECT_NE(second.out.find("already installed cuDNN 9.1.0.70"), std::string::npos)
      << second.out << second.err;
  EXPECT_EQ(testing::snapshot(root), after);
}

// Whether the child has ended (without reaping it: wait_child still can).
bool has_ended(const Child& c) {
  siginfo_t info{};
  info.si_pid = 0;
  return ::waitid(P_PID, static_cast<id_t>(c.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == c.pid;
}

// Two installs at once, the first killed at each of its mutating calls in turn: the second
// waits for the toolkit's lock (the kernel frees it when the first dies), recovers what the
// first left, and installs -- or, when the first was past its commit record and recovery
// finished it, says it is installed. No `recover` by hand: the toolkit ends exactly installed.
TEST(CudnnKillPoints, TwoInstallsAtOnceTheFirstKilledAtEveryMutatingCall) {
  Harness s;
  const std::string installed = s.copy_of(s.pristine);
  ASSERT_EQ(run_cli(s.install(installed)).code, 0);
  const Snapshot after = testing::snapshot(installed);
  int points = 0, second_installed = 0, second_found_it_done = 0, broken = 0;
  // Kills the first install at mutating call n; false when it had fewer (it completed).
  auto kill_first_at = [&](int n) {
    const std::string root = s.copy_of(s.pristine);
    Child a = start_child(s.install(root), n, root + "-a");
    // The second starts once the first holds the lock (or is gone already).
    auto probe = make_file_writer(root);
    while (!has_ended(a)) {
      auto l = probe->lock_dir(s.tk, false);
      if (l && !*l) break;  // held: by the first install (else ours, let go at once)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    Child b = start_child(s.install(root), 0, root + "-b");
    Ended ea = wait_child(a), eb = wait_child(b);
    const Snapshot now = testing::snapshot(root);
    sfs::remove_all(root);
    if (!ea.killed) {  // past its last mutating call: it completed, the second found it done
      EXPECT_EQ(ea.code, 0) << ea.out << ea.err;
      EXPECT_EQ(eb.code, 1) << eb.out << eb.err;
      EXPECT_EQ(now, after);
      return false;
    }
    ++points;
    if (eb.code == 0) {
      ++second_installed;
    } else if (eb.out.find("already installed cuDNN 9.1.0.70") != std::string::npos) {
      ++second_found_it_done;
    }
    if (now != after || (eb.code != 0 && eb.code != 1)) {
      ++broken;
      ADD_FAILURE() << "kill point " << n << ": the second install left a state that is not "
                    << "the installed one (exit " << eb.code << ")\n"
                    << eb.out << eb.err;
    }
    return true;
  };
  int n = 1;
  while (n < 2000 && kill_first_at(n)) n += kKillPointStride;
  // The points the stride stepped over at the end (the one after the commit record is there).
  for (int m = std::max(n - kKillPointStride + 1, 1); m < n; ++m) kill_first_at(m);
  std::printf(
      "[ kill points ] two installs at once, the first killed: %d exercised (the second "
      "installed after a roll-back %d times, found it finished %d times); broken: %d\n",
      points, second_installed, second_found_it_done, broken);
  EXPECT_EQ(broken, 0);
  EXPECT_EQ(second_installed + second_found_it_done, points);
  EXPECT_GT(points * kKillPointStride, 60);
  EXPECT_GT(second_installed, 0);
  EXPECT_GT(second_found_it_done, 0);
}

TEST(CudnnKillPoints, ListReportsAnInterruptedInstallWithTheRecoverCommand) {
  Harness s;
  const std::string root = s.copy_of(s.pristine);
  Ended e = wait_child(start_child(s.install(root), 40, root + "-log"));
  ASSERT_TRUE(e.killed);
  auto l = run_cli({"cudnn", "list", "--root", root});
  EXPECT_EQ(l.code, 1);
  EXPECT_NE(l.out.find("interrupted: cudnn-install of cuDNN 9.1.0.70"), std::string::npos) << l.out;
  EXPECT_NE(l.out.find("Fix: dlenv cudnn recover --toolkit /usr/local/cuda-12.4"),
            std::string::npos)
      << l.out;
  auto j = run_cli({"cudnn", "list", "--root", root, "--json"});
  EXPECT_NE(j.out.find("\"recovery\": \"rolled-back\""), std::string::npos) << j.out;
  // doctor: a finding whose fix is the recover command.
  auto doc = run_cli({"doctor", "--root", root, "--json"});
  auto report = nlohmann::json::parse(doc.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << doc.out << doc.err;
  const nlohmann::json* interrupted = nullptr;
  for (const auto& f : report["findings"]) {
    if (f["id"] == "toolkit-change-interrupted") interrupted = &f;
  }
  ASSERT_NE(interrupted, nullptr) << doc.out;
  EXPECT_EQ((*interrupted)["severity"], "error");
  EXPECT_NE((*interrupted)["title"].get<std::string>().find("cudnn-install of cuDNN 9.1.0.70"),
            std::string::npos);
  EXPECT_NE((*interrupted)["fix"].dump().find("dlenv cudnn recover --toolkit /usr/local/cuda-12.4"),
            std::string::npos)
      << interrupted->dump();
  EXPECT_EQ(doc.code, 1);
  // A dry run names the recovery too; a real install recovers first, then installs.
  auto d = run_cli({"cudnn", "install", s.archive, "--root", root, "--dry-run"});
  EXPECT_EQ(d.code, 1);
  EXPECT_NE(d.out.find("an interrupted dlenv transaction is journaled"), std::string::npos)
      << d.out;
  auto i = run_cli(s.install(root));
  EXPECT_EQ(i.code, 0) << i.out << i.err;
  EXPECT_NE(i.err.find("rolled back cudnn-install of cuDNN 9.1.0.70"), std::string::npos) << i.err;
  l = run_cli({"cudnn", "list", "--root", root});
  EXPECT_EQ(l.out.find("interrupted"), std::string::npos) << l.out;
  doc = run_cli({"doctor", "--root", root, "--json"});
  EXPECT_EQ(doc.out.find("toolkit-change-interrupted"), std::string::npos);
}

}  // namespace
}  // namespace dlenv
