// `dlenv cudnn ...` and `dlenv env` end to end, in-process, under --root.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "actions/cudnn_test_support.h"
#include "cli/cli_test_support.h"
#include "kb/kb.h"
#include "util/sha256.h"

namespace dlenv {
namespace {

using testing::ArchiveFormat;
using testing::run_cli;
using testing::TempDir;
namespace sfs = std::filesystem;

struct Toolkit {
  TempDir root{"clitk"};
  TempDir dl{"clidl"};
  std::string archive;
  Toolkit() {
    testing::write_file(root.at("usr/local/cuda-12.4/version.json"),
                        "{\"cuda\": {\"version\": \"12.4.1\"}}");
    testing::write_file(root.at("usr/local/cuda-12.4/bin/nvcc"), "", 0755);
    testing::write_file(root.at("usr/local/cuda-12.4/include/cuda.h"), "");
    sfs::create_directories(root.at("usr/local/cuda-12.4/lib64"));
    const std::string name = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive";
    archive = dl.at(name + ".tar.xz");
    testing::write_archive(archive, ArchiveFormat::tar_xz,
                           testing::fake_cudnn9_linux(name, 1, 0, 12));
  }
};

TEST(CudnnCli, InspectTextAndJson) {
  Toolkit t;
  auto r = run_cli({"cudnn", "inspect", t.archive});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("version:    9.1.0.70"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CUDA major: 12"), std::string::npos);
  EXPECT_NE(r.out.find("result: complete"), std::string::npos);
  const std::string sha = sha256_hex(testing::read_host_file(t.archive));
  EXPECT_NE(r.out.find("  sha256:     " + sha + "\n"), std::string::npos) << r.out;
  r = run_cli({"cudnn", "inspect", t.archive, "--json"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("\"schema\": \"dlenv.cudnn-inspect/1\""), std::string::npos);
  EXPECT_NE(r.out.find("\"sha256\": \"" + sha + "\""), std::string::npos);
  // install --sha256: a mismatch is refused before anything is read or written.
  auto before = testing::snapshot(t.root.path());
  std::string wrong = sha;
  wrong[0] = wrong[0] == '0' ? '1' : '0';
  r = run_cli({"cudnn", "install", t.archive, "--root", t.root.path(), "--yes", "--sha256", wrong});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("has SHA-256 " + sha + ", not the " + wrong), std::string::npos) << r.err;
  EXPECT_EQ(testing::snapshot(t.root.path()), before);
  r = run_cli(
      {"cudnn", "install", t.archive, "--root", t.root.path(), "--dry-run", "--sha256", sha});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  r = run_cli({"cudnn", "inspect", t.dl.at("missing.tar.xz")});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("no such file"), std::string::npos) << r.err;
}

// A copy of the embedded KB under `dir` whose cudnn_archives.json knows one archive.
std::string kb_knowing_archive(const TempDir& dir, const std::string& file,
                               const std::string& sha256, bool confirmed) {
  auto kb = Kb::load_embedded();
  EXPECT_TRUE(kb);
  for (const auto& name : (*kb)->file_names()) {
    testing::write_file(dir.at("kb/" + name), *(*kb)->file_text(name));
  }
  nlohmann::json doc{{"schema", 1},
                     {"archives",
                      {{{"file", file},
                        {"cudnn", "9.1.0.70"},
                        {"cuda_major", 12},
                        {"platform", "linux-x86_64"},
                        {"sha256", sha256},
                        {"source", "https://example.org/redistrib_9.1.0.json"},
                        {"confirmed", confirmed}}}}};
  testing::write_file(dir.at("kb/cudnn_archives.json"), doc.dump());
  return dir.at("kb");
}

// An archive carrying the name of one NVIDIA published: its digest is checked against the
// KB's, a match is shown, a mismatch is refused unless the user vouches with --sha256.
TEST(CudnnCli, KnownArchiveDigest) {
  Toolkit t;
  TempDir kbdir("clikb");
  const std::string sha = sha256_hex(testing::read_host_file(t.archive));
  const std::string name = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz";
  std::string kb = kb_knowing_archive(kbdir, name, sha, true);
  auto r = run_cli({"cudnn", "inspect", t.archive, "--kb", kb});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("= NVIDIA's " + name + " (https://example.org/redistrib_9.1.0.json)"),
            std::string::npos)
      << r.out;
  r = run_cli({"cudnn", "install", t.archive, "--root", t.root.path(), "--dry-run", "--kb", kb});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("SHA-256 " + sha + " is NVIDIA's " + name), std::string::npos) << r.out;

  std::string wrong = sha;
  wrong[5] = wrong[5] == 'f' ? 'e' : 'f';
  kb = kb_knowing_archive(kbdir, name, wrong, true);
  auto before = testing::snapshot(t.root.path());
  r = run_cli({"cudnn", "inspect", t.archive, "--kb", kb});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("error: the file carries the name of NVIDIA's " + name), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("result: damaged"), std::string::npos) << r.out;
  r = run_cli({"cudnn", "install", t.archive, "--root", t.root.path(), "--yes", "--kb", kb});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("its SHA-256 is " + sha + ", not the " + wrong), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("vouch for it with --sha256 " + sha), std::string::npos) << r.err;
  EXPECT_EQ(testing::snapshot(t.root.path()), before);
  // Vouched for: goes ahead, with the warning.
  r = run_cli({"cudnn", "install", t.archive, "--root", t.root.path(), "--dry-run", "--kb", kb,
               "--sha256", sha});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("warning: the file carries the name"), std::string::npos) << r.err;
  // An unconfirmed digest only warns.
  kb = kb_knowing_archive(kbdir, name, wrong, false);
  r = run_cli({"cudnn", "install", t.archive, "--root", t.root.path(), "--dry-run", "--kb", kb});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("has not confirmed"), std::string::npos) << r.err;
  EXPECT_EQ(testing::snapshot(t.root.path()), before);
}

TEST(CudnnCli, DryRunInstallUninstallListAndEnv) {
  Toolkit t;
  auto before = testing::snapshot(t.root.path());
  auto r = run_cli({"cudnn", "install", t.archive, "--root", t.root.path(), "--dry-run"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(
      r.out.find("into toolkit /usr/local/cuda-12.4 (CUDA 12.4.1; the only CUDA 12 toolkit found)"),
      std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find("add     /usr/local/cuda-12.4/lib64/libcudnn.so.9  [link -> libcudnn.so.9.1.0]"),
      std::string::npos);
  EXPECT_NE(r.out.find("dry run: nothing was changed."), std::string::npos);
  EXPECT_EQ(testing::snapshot(t.root.path()), before);
  // Not confirmed (no TTY, no --yes): nothing happens.
  r = run_cli({"cudnn", "install", t.archive, "--root", t.root.path()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("re-run with --yes"), std::string::npos);
  EXPECT_EQ(testing::snapshot(t.root.path()), before);

  r = run_cli({"cudnn", "install", t.archive, "--root", t.root.path(), "--yes"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("installed."), std::string::npos);
  EXPECT_NE(r.out.find("is not in /etc/ld.so.conf"), std::string::npos) << r.out;

  r = run_cli({"cudnn", "list", "--root", t.root.path()});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("/usr/local/cuda-12.4/lib64/libcudnn.so.9  cuDNN 9.1.0  CUDA 12  complete"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("installed by dlenv: /usr/local/cuda-12.4/.dlenv/cudnn-9.1.0.70.json"),
            std::string::npos);

  r = run_cli({"env", "--cuda", "12.4", "--shell", "bash", "--root", t.root.path()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("export CUDNN_HOME='/usr/local/cuda-12.4'"), std::string::npos) << r.out;

  // uninstall: a dry run shows what goes; without --yes (and no TTY) nothing happens.
  auto installed = testing::snapshot(t.root.path());
  r = run_cli({"cudnn", "uninstall", "9.1.0.70", "--root", t.root.path(), "--dry-run"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("uninstall cuDNN 9.1.0.70 from /usr/local/cuda-12.4"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  remove  /usr/local/cuda-12.4/lib64/libcudnn.so.9\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("dry run: nothing was changed."), std::string::npos);
  r = run_cli({"cudnn", "uninstall", "9.1.0.70", "--root", t.root.path()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("re-run with --yes"), std::string::npos) << r.err;
  EXPECT_EQ(testing::snapshot(t.root.path()), installed);
  r = run_cli({"cudnn", "uninstall", "9.1.0.70", "--root", t.root.path(), "--json", "--yes"});
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("\"removed\": true"), std::string::npos);
  EXPECT_EQ(testing::snapshot(t.root.path()), before);
  r = run_cli({"cudnn", "uninstall", "9.1.0.70", "--root", t.root.path(), "--yes"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("no dlenv install of cuDNN 9.1.0.70"), std::string::npos) << r.out;
}

TEST(EnvCli, PersistNeedsAFileAndUndoes) {
  Toolkit t;
  auto r = run_cli({"env", "--cuda", "12.4", "--persist", "--root", t.root.path()});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--persist-file"), std::string::npos) << r.err;
  testing::write_file(t.root.at("home/me/.bashrc"), "# mine\n");
  r = run_cli({"env", "--cuda", "12.4", "--persist", "--persist-file", "/home/me/.bashrc",
               "--shell", "bash", "--root", t.root.path()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(testing::read_host_file(t.root.at("home/me/.bashrc")).find("export CUDA_HOME"),
            std::string::npos);
  r = run_cli({"env", "--undo", "--persist-file", "/home/me/.bashrc", "--root", t.root.path()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(testing::read_host_file(t.root.at("home/me/.bashrc")), "# mine\n");
  r = run_cli({"env", "--cuda", "10.2", "--root", t.root.path()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("no CUDA 10.2 toolkit found"), std::string::npos);
}

}  // namespace
}  // namespace dlenv
