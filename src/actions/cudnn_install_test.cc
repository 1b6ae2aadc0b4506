#include "actions/cudnn_install.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "actions/cudnn_test_support.h"
#include "binfmt/pe_test_builder.h"
#include "platform/env.h"
#include "platform/filesystem.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using testing::ArchiveFormat;
using testing::TempDir;
namespace sfs = std::filesystem;

std::shared_ptr<const Kb> kb() {
  static auto k = Kb::load_embedded();
  return *k;
}

// The paths whose state differs between two snapshots ("" when equal).
std::string diff(const std::map<std::string, std::string>& a,
                 const std::map<std::string, std::string>& b) {
  std::string o;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end())
      o += "- " + k + "\n";
    else if (it->second != v)
      o += "~ " + k + "\n";
  }
  for (const auto& [k, v] : b) {
    if (!a.count(k)) o += "+ " + k + "\n";
  }
  return o;
}

std::string joined(const std::vector<std::string>& v) {
  std::string o;
  for (const auto& s : v) o += s + "\n";
  return o;
}

// A sysroot with a CUDA toolkit holding an older cuDNN 9.0.0, and a cuDNN 9.1.0.70 archive.
struct Fixture {
  TempDir root;
  TempDir dl{"download"};
  std::string archive;
  std::unique_ptr<FileSystem> fs;
  std::unique_ptr<Env> env = make_map_env({});
  std::string tk = "/usr/local/cuda-12.4";

  explicit Fixture(const std::string& cuda_version = "12.4.1", int archive_cuda = 12,
                   bool runpath = true, bool in_memory = false)
      : root("tkroot", in_memory) {
    tk = testing::write_toolkit_with_cudnn_9_0(root.path(), cuda_version, archive_cuda);
    const std::string name =
        "cudnn-linux-x86_64-9.1.0.70_cuda" + std::to_string(archive_cuda) + "-archive";
    archive = dl.at(name + ".tar.xz");
    testing::write_archive(archive, ArchiveFormat::tar_xz,
                           testing::fake_cudnn9_linux(name, 1, 0, archive_cuda, runpath));
    fs = make_rooted_filesystem(root.path());
  }
  ProbeContext ctx() const { return ProbeContext{*fs, *env, *kb(), Os::linux, false, "test"}; }
  // Installs the archive (as planned now) with the real writer.
  bool install() const {
    auto src = open_cudnn_source(archive);
    if (!src) return false;
    auto c = ctx();
    auto plan = plan_cudnn_install(c, **src, {});
    auto writer = make_file_writer(root.path());
    return plan && plan->ok() && execute_cudnn_install(c, **src, *plan, *writer).installed;
  }
};

TEST(CudnnInstall, RoundTripRestoresTheToolkitExactly) {
  Fixture f;
  auto before = testing::snapshot(f.root.path());
  auto src = open_cudnn_source(f.archive);
  ASSERT_TRUE(src) << src.error().message;
  auto ctx = f.ctx();
  auto plan = plan_cudnn_install(ctx, **src, {});
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_TRUE(plan->ok()) << joined(plan->blockers);
  EXPECT_EQ(plan->toolkit, f.tk);
  EXPECT_EQ(plan->previous_cudnn, "9.0.0");
  // The plan names each replaced file with both versions.
  auto so9 = std::find_if(plan->steps.begin(), plan->steps.end(),
                          [&](const auto& s) { return s.dest == f.tk + "/lib64/libcudnn.so.9"; });
  ASSERT_NE(so9, plan->steps.end());
  EXPECT_TRUE(so9->replaces);
  EXPECT_EQ(so9->old_what, "link -> libcudnn.so.9.0.0");
  EXPECT_EQ(so9->new_what, "link -> libcudnn.so.9.1.0");
  std::string text = render_install_plan_text(*plan, Os::linux);
  EXPECT_NE(
      text.find("replace /usr/local/cuda-12.4/include/cudnn_version.h  [was: cuDNN 9.0.0 (the "
                "toolkit's header); now: cuDNN 9.1.0.70]"),
      std::string::npos)
      << text;

  auto writer = make_file_writer(f.root.path());
  auto r = execute_cudnn_install(ctx, **src, *plan, *writer);
  ASSERT_TRUE(r.installed) << r.failure << joined(r.rollback_problems);
  EXPECT_TRUE(std::any_of(r.verified.begin(), r.verified.end(), [](const std::string& s) {
    return s.find("loader model: 8 cuDNN objects resolve") != std::string::npos;
  })) << joined(r.verified);
  const std::string lib = f.root.at("usr/local/cuda-12.4/lib64/");
  EXPECT_EQ(sfs::read_symlink(lib + "libcudnn.so.9"), "libcudnn.so.9.1.0");
  EXPECT_TRUE(sfs::exists(lib + "libcudnn_heuristic.so.9.1.0"));
  EXPECT_EQ(sfs::status(lib + "libcudnn_ops.so.9.1.0").permissions() & sfs::perms::owner_exec,
            sfs::perms::owner_exec);
  EXPECT_TRUE(sfs::exists(lib + "libcudnn.so.9.0.0"));  // not replaced: kept
  EXPECT_TRUE(sfs::exists(f.root.at("usr/local/cuda-12.4/.dlenv/cudnn-9.1.0.70.json")));
  EXPECT_FALSE(sfs::exists(f.root.at("usr/local/cuda-12.4/.dlenv/staging-cudnn-9.1.0.70")));
  EXPECT_EQ(testing::read_host_file(f.root.at("usr/local/cuda-12.4/include/cudnn_version.h")),
            testing::version_header(9, 1, 0));
  EXPECT_FALSE(sfs::exists(f.root.at("usr/local/cuda-12.4/LICENSE")));
  // Installing again is refused while this one is there.
  auto again = plan_cudnn_install(ctx, **src, {});
  ASSERT_TRUE(again);
  EXPECT_NE(joined(again->blockers).find("already installed cuDNN 9.1.0.70"), std::string::npos);

  auto u = uninstall_cudnn(ctx, "9.1", "", *writer);
  ASSERT_TRUE(u.removed) << u.failure;
  EXPECT_EQ(u.version, "9.1.0.70");
  EXPECT_EQ(diff(before, testing::snapshot(f.root.path())), "");
}

TEST(CudnnInstall, AFailureAtEveryStepRestoresTheExactPreviousState) {
  Fixture f("12.4.1", 12, true, /*in_memory=*/true);
  auto src = open_cudnn_source(f.archive);
  ASSERT_TRUE(src);
  auto ctx = f.ctx();
  auto plan = plan_cudnn_install(ctx, **src, {});
  ASSERT_TRUE(plan && plan->ok());
  auto before = testing::snapshot(f.root.path());
  auto real = make_file_writer(f.root.path());
  // How many steps a clean install takes.
  int total = 0;
  {
    FaultInjectingWriter counting(*real, 0);
    auto r = execute_cudnn_install(ctx, **src, *plan, counting);
    ASSERT_TRUE(r.installed) << r.failure;
    total = counting.calls();
    auto u = uninstall_cudnn(ctx, "9.1.0.70", f.tk, *real);
    ASSERT_TRUE(u.removed) << u.failure;
    ASSERT_EQ(diff(before, testing::snapshot(f.root.path())), "");
  }
  ASSERT_GT(total, 60);  // staging 24 files + renames + manifest, each journaled first
  // The last call deletes the journal after the commit: a failure there keeps the
  // install, and the next recovery deletes the committed journal.
  {
    FaultInjectingWriter faulty(*real, total);
    auto r = execute_cudnn_install(ctx, **src, *plan, faulty);
    ASSERT_TRUE(r.installed) << r.failure;
    EXPECT_NE(joined(r.notes).find("injected failure at step"), std::string::npos);
    auto rec = recover_toolkit(ctx, *real, f.tk);
    ASSERT_TRUE(rec) << rec.error().message;
    EXPECT_EQ(rec->outcome, RecoveryResult::Outcome::finished);
    EXPECT_FALSE(sfs::exists(f.root.at("usr/local/cuda-12.4/.dlenv/journal")));
    auto u = uninstall_cudnn(ctx, "9.1.0.70", f.tk, *real);
    ASSERT_TRUE(u.removed) << u.failure;
    ASSERT_EQ(diff(before, testing::snapshot(f.root.path())), "");
  }
  for (int k = 1; k < total; ++k) {
    FaultInjectingWriter faulty(*real, k);
    auto r = execute_cudnn_install(ctx, **src, *plan, faulty);
    ASSERT_FALSE(r.installed) << "step " << k;
    EXPECT_NE(r.failure.find("injected failure at step " + std::to_string(k)), std::string::npos)
        << r.failure;
    EXPECT_TRUE(r.rollback_problems.empty()) << k << ": " << joined(r.rollback_problems);
    ASSERT_EQ(diff(before, testing::snapshot(f.root.path())), "")
        << "after a failure at step " << k;
  }
  // Uninstall: a failure at any step leaves the installed state exactly.
  auto r = execute_cudnn_install(ctx, **src, *plan, *real);
  ASSERT_TRUE(r.installed);
  auto installed = testing::snapshot(f.root.path());
  int utotal = 0;
  for (int k = 1;; ++k) {
    FaultInjectingWriter faulty(*real, k);
    auto u = uninstall_cudnn(ctx, "9.1.0.70", f.tk, faulty);
    if (u.removed) {
      utotal = k;
      break;
    }
    EXPECT_TRUE(u.rollback_problems.empty()) << joined(u.rollback_problems);
    ASSERT_EQ(diff(installed, testing::snapshot(f.root.path())), "")
        << "uninstall failed at step " << k;
  }
  // The last "successful" run's injected failure hit only the final clean-up at most.
  EXPECT_GT(utotal, 20);
}

TEST(CudnnInstall, VerificationFailureUndoesEverything) {
  // libcudnn_ops needs CUDA's libcublasLt.so.12, which this toolkit lacks: verification
  // fails naming it and where it comes from, and everything is undone.
  Fixture f;
  const std::string name = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive";
  testing::write_archive(f.archive, ArchiveFormat::tar_xz,
                         testing::fake_cudnn9_linux(name, 1, 0, 12, true, "libcublasLt.so.12"));
  auto src = open_cudnn_source(f.archive);
  ASSERT_TRUE(src);
  auto ctx = f.ctx();
  auto plan = plan_cudnn_install(ctx, **src, {});
  ASSERT_TRUE(plan && plan->ok()) << joined(plan->blockers);
  auto before = testing::snapshot(f.root.path());
  auto writer = make_file_writer(f.root.path());
  auto r = execute_cudnn_install(ctx, **src, *plan, *writer);
  EXPECT_FALSE(r.installed);
  EXPECT_NE(r.failure.find("verification"), std::string::npos) << r.failure;
  const std::string errors = joined(r.verify_errors);
  EXPECT_NE(errors.find("libcublasLt.so.12 (needed by libcudnn_ops.so.9) is found nowhere"),
            std::string::npos)
      << errors;
  EXPECT_NE(errors.find("it is CUDA 12's cublasLt library"), std::string::npos) << errors;
  EXPECT_EQ(diff(before, testing::snapshot(f.root.path())), "");
  // With cuBLASLt in the toolkit's own lib64 (not on any loader path), it installs.
  testing::write_file(f.root.at("usr/local/cuda-12.4/lib64/libcublasLt.so.12"),
                      testing::fake_cudnn_elf("libcublasLt.so.12", 0, 12), 0755);
  r = execute_cudnn_install(ctx, **src, *plan, *writer);
  EXPECT_TRUE(r.installed) << r.failure;
}

TEST(CudnnInstall, LibrariesWithoutRunpathResolveFromTheToolkitsLibDir) {
  // No RUNPATH $ORIGIN and no ld.so.cache entry: the sub-libraries are still found,
  // as verification puts the toolkit's lib64 first (the real load's LD_LIBRARY_PATH).
  Fixture f("12.4.1", 12, /*runpath=*/false);
  ASSERT_TRUE(f.install());
  EXPECT_TRUE(sfs::exists(f.root.at("usr/local/cuda-12.4/.dlenv/cudnn-9.1.0.70.json")));
}

TEST(CudnnInstall, CudaMajorMismatchIsRefusedUnlessForced) {
  Fixture f("13.0.2", 12);
  auto src = open_cudnn_source(f.archive);
  ASSERT_TRUE(src);
  auto ctx = f.ctx();
  // No CUDA 12 toolkit at all.
  auto plan = plan_cudnn_install(ctx, **src, {});
  ASSERT_TRUE(plan);
  EXPECT_NE(joined(plan->blockers).find("no toolkit for CUDA 12 was found"), std::string::npos)
      << joined(plan->blockers);
  // Naming the CUDA 13 toolkit explains why it does not fit.
  CudnnInstallOptions o;
  o.cuda = Version{13, 0};
  plan = plan_cudnn_install(ctx, **src, o);
  ASSERT_TRUE(plan);
  ASSERT_FALSE(plan->ok());
  EXPECT_NE(joined(plan->blockers).find("was built for CUDA 12"), std::string::npos);
  EXPECT_NE(joined(plan->blockers).find("--force"), std::string::npos);
  auto writer = make_file_writer(f.root.path());
  auto before = testing::snapshot(f.root.path());
  auto r = execute_cudnn_install(ctx, **src, *plan, *writer);
  EXPECT_FALSE(r.installed);
  EXPECT_EQ(diff(before, testing::snapshot(f.root.path())), "");
  o.force = true;
  plan = plan_cudnn_install(ctx, **src, o);
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->ok()) << joined(plan->blockers);
  EXPECT_NE(joined(plan->warnings).find("installing anyway"), std::string::npos);
}

TEST(CudnnInstall, ProcessesMappingReplacedFilesAreNamed) {
  Fixture f;
  testing::write_file(f.root.at("proc/4242/maps"),
                      "7f0000000000-7f0000100000 r-xp 00000000 08:01 123 "
                      "/usr/local/cuda-12.4/lib64/libcudnn.so.9.0.0\n"
                      "7f0000200000-7f0000300000 r--p 00000000 08:01 124 /usr/lib/libc.so.6\n");
  testing::write_file(f.root.at("proc/4242/comm"), "python3\n");
  testing::write_file(f.root.at("proc/77/maps"), "00400000-00401000 r-xp 0 0:0 0 /bin/sleep\n");
  auto src = open_cudnn_source(f.archive);
  ASSERT_TRUE(src);
  auto ctx = f.ctx();
  auto plan = plan_cudnn_install(ctx, **src, {});
  ASSERT_TRUE(plan && plan->ok());
  ASSERT_EQ(plan->busy.size(), 1u);
  EXPECT_EQ(plan->busy[0].pid, 4242);
  EXPECT_EQ(plan->busy[0].command, "python3");
  EXPECT_NE(joined(plan->warnings).find("process 4242 (python3)"), std::string::npos);
}

TEST(CudnnInstall, NoWritePermissionIsReportedBeforeAnythingIsTouched) {
  if (::geteuid() == 0) GTEST_SKIP() << "root may write anywhere";
  Fixture f;
  sfs::permissions(f.root.at("usr/local/cuda-12.4/lib64"), sfs::perms(0555));
  auto src = open_cudnn_source(f.archive);
  ASSERT_TRUE(src);
  auto ctx = f.ctx();
  auto plan = plan_cudnn_install(ctx, **src, {});
  sfs::permissions(f.root.at("usr/local/cuda-12.4/lib64"), sfs::perms(0755));
  ASSERT_TRUE(plan);
  EXPECT_NE(joined(plan->blockers).find("no permission to write in /usr/local/cuda-12.4/lib64"),
            std::string::npos)
      << joined(plan->blockers);
}

TEST(CudnnInstall, WindowsLayoutRoundTrip) {
  TempDir root("winroot"), dl("windl");
  const std::string tk = "/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.8";
  testing::write_file(root.at(tk.substr(1) + "/version.json"),
                      "{\"cuda\": {\"version\": \"11.8.0\"}}");
  testing::write_file(root.at(tk.substr(1) + "/include/cuda.h"), "");
  testing::write_file(root.at(tk.substr(1) + "/bin/cudart64_110.dll"), "MZ");
  // cuDNN 8 imports cuBLASLt: the toolkit has it, as every CUDA 11 toolkit does.
  auto dll = [](const std::string& name, const std::string& export_name) {
    testbuild::PeSpec spec;
    spec.export_name = name;
    spec.exports = {{export_name, ""}};
    const auto pe = testbuild::build_pe(spec);
    return std::string(pe.bytes.begin(), pe.bytes.end());
  };
  testing::write_file(root.at(tk.substr(1) + "/bin/cublasLt64_11.dll"),
                      dll("cublasLt64_11.dll", "cublasLtCreate"));
  const std::string name = "cudnn-windows-x86_64-8.5.0.96_cuda11-archive";
  testing::write_archive(dl.at(name + ".zip"), ArchiveFormat::zip,
                         testing::fake_cudnn8_windows(name, 11));
  auto fs = make_rooted_filesystem(root.path());
  auto env =
      make_map_env({{"CUDA_PATH", "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8"}});
  ProbeContext ctx{*fs, *env, *kb(), Os::windows, false, "test"};
  auto src = open_cudnn_source(dl.at(name + ".zip"));
  ASSERT_TRUE(src) << src.error().message;
  auto plan = plan_cudnn_install(ctx, **src, {});
  ASSERT_TRUE(plan);
  ASSERT_TRUE(plan->ok()) << joined(plan->blockers);
  EXPECT_EQ(plan->steps.size(), 30u);  // everything but the license
  EXPECT_EQ(display_path(plan->toolkit, Os::windows),
            "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8");
  auto writer = make_file_writer(root.path());
  // cuDNN 8.5's cudnn_ops_infer64_8.dll loads zlibwapi.dll, which is in none of Windows,
  // CUDA or the zip: without it the install is not verified, and undone.
  auto before = testing::snapshot(root.path());
  auto r = execute_cudnn_install(ctx, **src, *plan, *writer);
  EXPECT_FALSE(r.installed);
  const std::string errors = joined(r.verify_errors);
  EXPECT_NE(errors.find("zlibwapi.dll (loaded at run time by cudnn_ops_infer64_8.dll) is found "
                        "nowhere on the search path"),
            std::string::npos)
      << errors;
  EXPECT_NE(errors.find("put its zlibwapi.dll in C:\\Program Files\\NVIDIA GPU Computing "
                        "Toolkit\\CUDA\\v11.8\\bin"),
            std::string::npos)
      << errors;
  EXPECT_EQ(diff(before, testing::snapshot(root.path())), "");
  // With zlibwapi.dll in the toolkit's bin (as NVIDIA's guide says), it installs.
  testing::write_file(root.at(tk.substr(1) + "/bin/zlibwapi.dll"), dll("zlibwapi.dll", "inflate"));
  before = testing::snapshot(root.path());
  r = execute_cudnn_install(ctx, **src, *plan, *writer);
  ASSERT_TRUE(r.installed) << r.failure;
  EXPECT_TRUE(sfs::exists(root.at(tk.substr(1) + "/bin/cudnn_adv_train64_8.dll")));
  EXPECT_TRUE(sfs::exists(root.at(tk.substr(1) + "/lib/x64/cudnn64_8.lib")));
  EXPECT_TRUE(sfs::exists(root.at(tk.substr(1) + "/include/cudnn_version.h")));
  EXPECT_TRUE(std::any_of(r.verified.begin(), r.verified.end(), [](const std::string& s) {
    return s.find("cudnn64_8.dll: 8.5.0.96") != std::string::npos;
  })) << joined(r.verified);
  auto u = uninstall_cudnn(ctx, "8.5.0.96", "", *writer);
  ASSERT_TRUE(u.removed) << u.failure;
  EXPECT_EQ(diff(before, testing::snapshot(root.path())), "");
}

TEST(CudnnInstall, TamperedManifestIsNotFollowed) {
  Fixture f;
  ASSERT_TRUE(f.install());
  auto ctx = f.ctx();
  auto writer = make_file_writer(f.root.path());
  std::string m = f.root.at("usr/local/cuda-12.4/.dlenv/cudnn-9.1.0.70.json");
  std::string text = testing::read_host_file(m);
  auto pos = text.find("/usr/local/cuda-12.4/include/cudnn.h");
  ASSERT_NE(pos, std::string::npos);
  text.replace(pos, 36, "/etc/passwd");
  testing::write_file(m, text);
  auto snap = testing::snapshot(f.root.path());
  auto u = uninstall_cudnn(ctx, "9.1.0.70", "", *writer);
  EXPECT_FALSE(u.removed);
  EXPECT_NE(u.failure.find("outside the toolkit"), std::string::npos) << u.failure;
  EXPECT_EQ(diff(snap, testing::snapshot(f.root.path())), "");
}

// setuid/setgid/sticky and world-writable members are installed 0755/0644 (as NVIDIA's
// packages install them), and the plan says so.
TEST(CudnnInstall, HostileModesAreSanitised) {
  Fixture f;
  const std::string name = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive";
  auto entries = testing::fake_cudnn9_linux(name, 1, 0, 12);
  for (auto& e : entries) {
    if (e.path == name + "/lib/libcudnn_ops.so.9.1.0") e.mode = 04755;  // setuid
    if (e.path == name + "/include/cudnn.h") e.mode = 0777;
    if (e.path == name + "/include/cudnn_ops.h") e.mode = 02666;  // setgid, world-writable
  }
  testing::write_archive(f.archive, ArchiveFormat::tar_xz, entries);
  auto src = open_cudnn_source(f.archive);
  ASSERT_TRUE(src) << src.error().message;
  auto ctx = f.ctx();
  auto plan = plan_cudnn_install(ctx, **src, {});
  ASSERT_TRUE(plan && plan->ok()) << joined(plan->blockers);
  EXPECT_NE(joined(plan->warnings).find("lib/libcudnn_ops.so.9.1.0 has mode 4755"),
            std::string::npos)
      << joined(plan->warnings);
  auto writer = make_file_writer(f.root.path());
  ASSERT_TRUE(execute_cudnn_install(ctx, **src, *plan, *writer).installed);
  auto mode = [&](const std::string& rel) {
    struct stat st {};
    ::lstat(f.root.at("usr/local/cuda-12.4/" + rel).c_str(), &st);
    return st.st_mode & 07777;
  };
  EXPECT_EQ(mode("lib64/libcudnn_ops.so.9.1.0"), 0755u);
  EXPECT_EQ(mode("include/cudnn.h"), 0755u);
  EXPECT_EQ(mode("include/cudnn_ops.h"), 0644u);
  EXPECT_EQ(mode("include/cudnn_adv.h"), 0644u);
}

// --root with a .dlenv that is a link out of the root: refused in the plan, and the
// writer would refuse it too; nothing lands outside.
TEST(CudnnInstall, SymlinkedDlenvUnderRootIsRefused) {
  Fixture f;
  TempDir outside("host");
  sfs::create_directory_symlink(outside.path(), f.root.at("usr/local/cuda-12.4/.dlenv"));
  auto src = open_cudnn_source(f.archive);
  ASSERT_TRUE(src);
  auto ctx = f.ctx();
  auto before = testing::snapshot(f.root.path());
  auto plan = plan_cudnn_install(ctx, **src, {});
  ASSERT_TRUE(plan);
  EXPECT_NE(joined(plan->blockers).find(".dlenv is not a directory (a link?)"), std::string::npos)
      << joined(plan->blockers);
  // Even a plan made before the swap cannot write through it.
  sfs::remove(f.root.at("usr/local/cuda-12.4/.dlenv"));
  auto good = plan_cudnn_install(ctx, **src, {});
  ASSERT_TRUE(good && good->ok());
  sfs::create_directory_symlink(outside.path(), f.root.at("usr/local/cuda-12.4/.dlenv"));
  auto writer = make_file_writer(f.root.path());
  auto r = execute_cudnn_install(ctx, **src, *good, *writer);
  EXPECT_FALSE(r.installed);
  EXPECT_NE(r.failure.find("is a symbolic link, and dlenv never writes through one"),
            std::string::npos)
      << r.failure;
  EXPECT_TRUE(sfs::is_empty(outside.path()));
  EXPECT_EQ(diff(before, testing::snapshot(f.root.path())), "");
}

// Uninstall's progress: every item counted, first none, last `done` with all of them.
TEST(CudnnInstall, UninstallReportsItsProgress) {
  Fixture f;
  ASSERT_TRUE(f.install());
  auto c = f.ctx();
  auto plan = plan_cudnn_uninstall(c, "9.1.0.70", f.tk);
  ASSERT_TRUE(plan.ok()) << plan.failure;
  std::vector<SourceProgress> seen;
  auto writer = make_file_writer(f.root.path());
  auto r = execute_cudnn_uninstall(c, plan, *writer,
                                   [&](const SourceProgress& p) { seen.push_back(p); });
  EXPECT_TRUE(r.removed) << r.failure;
  ASSERT_GE(seen.size(), 3U);
  EXPECT_EQ(seen.front().files, 0U);
  EXPECT_FALSE(seen.front().done);
  EXPECT_TRUE(seen.back().done);
  EXPECT_EQ(seen.back().files, plan.items.size());
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].total_files, plan.items.size());
    if (i > 0) {
      EXPECT_GE(seen[i].files, seen[i - 1].files);
    }
  }
}

// A toolkit whose lib64/ or include/ is a link out of it (libraries moved to another disk,
// distro layouts): followed when it leads to a directory of a CUDA installation, refused
// when it leads anywhere else (here: a link to /etc). Nothing is written outside.
TEST(CudnnInstall, LinkedLib64AndIncludeMustLeadToCudaDirectories) {
  Fixture f;
  const std::string lib64 = f.root.at("usr/local/cuda-12.4/lib64");
  sfs::create_directories(f.root.at("data/cuda-12.4"));
  sfs::rename(lib64, f.root.at("data/cuda-12.4/lib64"));
  sfs::create_directory_symlink("/data/cuda-12.4/lib64", lib64);
  {
    auto src = open_cudnn_source(f.archive);
    ASSERT_TRUE(src);
    auto c = f.ctx();
    auto plan = plan_cudnn_install(c, **src, {});
    ASSERT_TRUE(plan) << plan.error().message;
    EXPECT_TRUE(plan->ok()) << joined(plan->blockers);
    EXPECT_NE(joined(plan->warnings)
                  .find("/usr/local/cuda-12.4/lib64 is a link to /data/cuda-12.4/lib64: the "
                        "files for lib64 go there"),
              std::string::npos)
        << joined(plan->warnings);
  }
  ASSERT_TRUE(f.install());
  EXPECT_TRUE(sfs::exists(f.root.at("data/cuda-12.4/lib64/libcudnn.so.9.1.0")));
  auto writer = make_file_writer(f.root.path());
  auto c = f.ctx();
  EXPECT_TRUE(uninstall_cudnn(c, "9.1.0.70", f.tk, *writer).removed);
  EXPECT_FALSE(sfs::exists(f.root.at("data/cuda-12.4/lib64/libcudnn.so.9.1.0")));

  // include/ -> /etc: refused, naming the link and where it leads.
  testing::write_file(f.root.at("etc/passwd"), "root:x:0:0::/root:/bin/sh\n");
  const std::string inc = f.root.at("usr/local/cuda-12.4/include");
  sfs::remove_all(inc);
  sfs::create_directory_symlink("/etc", inc);
  auto before = testing::snapshot(f.root.path());
  auto src = open_cudnn_source(f.archive);
  ASSERT_TRUE(src);
  auto plan = plan_cudnn_install(c, **src, {});
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_FALSE(plan->ok());
  EXPECT_NE(joined(plan->blockers)
                .find("/usr/local/cuda-12.4/include is a link to /etc, out of the toolkit, and "
                      "that directory holds none of CUDA's files"),
            std::string::npos)
      << joined(plan->blockers);
  EXPECT_FALSE(execute_cudnn_install(c, **src, *plan, *writer).installed);
  EXPECT_EQ(diff(before, testing::snapshot(f.root.path())), "");
}

// A path the manifest names that became a link after the install (or lies under a
// directory swapped for a link) stops the uninstall, naming it; nothing is touched.
TEST(CudnnInstall, UninstallStopsAtAManifestPathThatBecameALink) {
  Fixture f;
  TempDir outside("victim");
  testing::write_file(outside.at("precious.h"), "keep me");
  ASSERT_TRUE(f.install());
  auto ctx = f.ctx();
  auto writer = make_file_writer(f.root.path());
  const std::string h = f.root.at("usr/local/cuda-12.4/include/cudnn_adv.h");
  sfs::remove(h);
  sfs::create_symlink(outside.at("precious.h"), h);
  auto snap = testing::snapshot(f.root.path());
  auto u = uninstall_cudnn(ctx, "9.1.0.70", f.tk, *writer);
  EXPECT_FALSE(u.removed);
  EXPECT_NE(u.failure.find("/usr/local/cuda-12.4/include/cudnn_adv.h changed since the install: "
                           "it was a file and is now a link"),
            std::string::npos)
      << u.failure;
  EXPECT_EQ(diff(snap, testing::snapshot(f.root.path())), "");
  EXPECT_EQ(testing::read_host_file(outside.at("precious.h")), "keep me");
  // The include directory itself swapped for a link to a copy elsewhere.
  sfs::remove(h);
  testing::write_file(h, "restored");
  const std::string inc = f.root.at("usr/local/cuda-12.4/include");
  sfs::rename(inc, outside.at("include"));
  sfs::create_directory_symlink(outside.at("include"), inc);
  u = uninstall_cudnn(ctx, "9.1.0.70", f.tk, *writer);
  EXPECT_FALSE(u.removed);
  EXPECT_NE(u.failure.find("/usr/local/cuda-12.4/include is a link now"), std::string::npos)
      << u.failure;
  EXPECT_TRUE(sfs::exists(outside.at("include/cudnn_adv.h")));
}

// `dlenv cudnn list --os windows --root`: the Windows probe's copies (toolkit bin, the
// cuDNN 9 installer layout, CUDNN_HOME, PATH) and a pip wheel's, each with who loads it.
TEST(CudnnList, WindowsCopiesWithWhoLoadsThem) {
  TempDir root("winlist");
  auto put = [&](const std::string& logical, const std::string& bytes) {
    testing::write_file(root.at(logical.substr(1)), bytes);
  };
  const uint16_t v8[4] = {8, 5, 0, 96}, v9[4] = {9, 1, 0, 70};
  const std::string tk = "/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.8";
  put(tk + "/version.json", "{\"cuda\": {\"version\": \"11.8.0\"}}");
  put(tk + "/bin/cudart64_110.dll", "MZ");
  for (std::string l : {"cudnn", "cudnn_ops_infer", "cudnn_ops_train", "cudnn_cnn_infer",
                        "cudnn_cnn_train", "cudnn_adv_infer", "cudnn_adv_train"}) {
    put(tk + "/bin/" + l + "64_8.dll", testing::fake_cudnn_dll(l + "64_8.dll", 11, v8));
  }
  put(tk + "/include/cudnn_version.h", testing::version_header(8, 5, 0));
  // A second cuDNN 8 earlier on PATH (only the main DLL: incomplete).
  put("/tools/cudnn/bin/cudnn64_8.dll", testing::fake_cudnn_dll("cudnn64_8.dll", 11, v8));
  // The cuDNN 9 graphical installer's layout.
  put("/Program Files/NVIDIA/CUDNN/v9.1/bin/12.4/cudnn64_9.dll",
      testing::fake_cudnn_dll("cudnn64_9.dll", 12, v9));
  // A Python on PATH with NVIDIA's cuDNN wheel.
  put("/Python311/python.exe", "MZ");
  put("/Python311/Lib/site-packages/nvidia/cudnn/bin/cudnn64_9.dll",
      testing::fake_cudnn_dll("cudnn64_9.dll", 12, v9));
  auto fs = make_rooted_filesystem(root.path());
  auto env = make_map_env(
      {{"PATH",
        "C:\\tools\\cudnn\\bin;C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\\bin;"
        "C:\\Python311"},
       {"CUDA_PATH", "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8"}});
  ProbeContext ctx{*fs, *env, *kb(), Os::windows, false, "test"};
  auto list = list_cudnn(ctx);
  auto find = [&](const std::string& dir) -> const CudnnListEntry* {
    for (const auto& e : list) {
      if (to_lower(e.copy.dir) == to_lower(dir)) return &e;
    }
    return nullptr;
  };
  std::string dirs;
  for (const auto& e : list) dirs += e.copy.dir + "; ";
  const auto* t = find(tk + "/bin");
  ASSERT_NE(t, nullptr) << dirs;
  EXPECT_EQ(t->copy.major, 8);
  ASSERT_TRUE(t->copy.library_version);
  EXPECT_EQ(t->copy.library_version->str(), "8.5.0");
  EXPECT_EQ(t->complete, "complete");
  EXPECT_NE(joined(t->loaded_by).find("nobody by PATH"), std::string::npos) << joined(t->loaded_by);
  const auto* first = find("/tools/cudnn/bin");
  ASSERT_NE(first, nullptr) << dirs;
  EXPECT_NE(joined(first->loaded_by).find("LoadLibrary(\"cudnn64_8.dll\")"), std::string::npos)
      << joined(first->loaded_by);
  EXPECT_NE(first->complete.find("missing 6 of 7"), std::string::npos) << first->complete;
  const auto* inst = find("/Program Files/NVIDIA/CUDNN/v9.1/bin/12.4");
  ASSERT_NE(inst, nullptr) << dirs;
  EXPECT_EQ(inst->copy.major, 9);
  const auto* wheel = find("/Python311/Lib/site-packages/nvidia/cudnn/bin");
  ASSERT_NE(wheel, nullptr) << dirs;
  EXPECT_EQ(wheel->copy.found_via, std::vector<std::string>{"pip wheel nvidia-cudnn"});
  EXPECT_NE(joined(wheel->loaded_by).find("Python frameworks in C:\\Python311\\Lib\\site-packages"),
            std::string::npos)
      << joined(wheel->loaded_by);
  EXPECT_TRUE(wheel->copy.toolkit_root.empty());
  EXPECT_EQ(list.size(), 4u) << dirs;
}

}  // namespace
}  // namespace dlenv
