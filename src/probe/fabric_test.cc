// The dpkg database reader used by the Fabric Manager and WSL probes, and the
// Fabric Manager / forward-compatibility probes on small rooted trees.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "probe/system_probe.h"
#include "util/temp_dir_test_support.h"

namespace dlenv {
namespace {

namespace fs = std::filesystem;

struct Tree {
  fs::path root = testing::make_unique_temp_dir("fabric-probe");
  ~Tree() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  void file(const std::string& logical, const std::string& text = "") {
    fs::path p = root / logical.substr(1);
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
  }
};

TEST(Dpkg, UpstreamVersion) {
  EXPECT_EQ(dpkg_upstream_version("580.95.05-1"), "580.95.05");
  EXPECT_EQ(dpkg_upstream_version("1:580.95.05-0ubuntu1"), "580.95.05");
  EXPECT_EQ(dpkg_upstream_version("580.95.05"), "580.95.05");
  EXPECT_EQ(dpkg_upstream_version(""), "");
}

TEST(Dpkg, InstalledPackagesOnlyAndFiltered) {
  Tree t;
  t.file("/var/lib/dpkg/status",
         "Package: nvidia-fabricmanager-580\nStatus: install ok installed\nVersion: 580.95.05-1\n\n"
         "Package: nvidia-fabricmanager-570\nStatus: deinstall ok config-files\n"
         "Version: 570.86.15-1\n\n"
         "Package: libc6\nStatus: install ok installed\nVersion: 2.39-0ubuntu8\n"
         "Description: no blank line at the end");
  auto fsys = make_rooted_filesystem(t.root.string());
  auto pkgs = read_dpkg_status(
      *fsys, [](std::string_view n) { return n.starts_with("nvidia-fabricmanager"); });
  ASSERT_TRUE(pkgs.has_value());
  ASSERT_EQ(pkgs->size(), 1u);
  EXPECT_EQ((*pkgs)[0].name, "nvidia-fabricmanager-580");
  EXPECT_EQ((*pkgs)[0].version, "580.95.05-1");
  auto all = read_dpkg_status(*fsys, [](std::string_view) { return true; });
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->size(), 2u);  // the last record has no trailing blank line
}

TEST(Dpkg, NoDatabaseIsNullopt) {
  Tree t;
  auto fsys = make_rooted_filesystem(t.root.string());
  EXPECT_FALSE(read_dpkg_status(*fsys, [](std::string_view) { return true; }).has_value());
}

TEST(FabricProbe, GarbageFilesDoNotMatter) {
  Tree t;
  t.file("/proc/driver/nvidia/version", "NVRM version: garbage\n");
  // (A switch's directory is named by its PCI address; no ':' here, for Windows file systems.)
  t.file("/proc/driver/nvidia-nvswitch/devices/switch0/information", "");
  t.file("/proc/7/comm", std::string(5000, '\xff'));
  t.file("/proc/self/comm", "nv-fabricmanager\n");  // not a pid directory
  t.file("/var/lib/dpkg/status", "Package:\nStatus: installed\n\n\n:::\n");
  auto fsys = make_rooted_filesystem(t.root.string());
  auto env = make_map_env({});
  auto kb = Kb::load_embedded();
  ASSERT_TRUE(kb) << kb.error().message;
  ProbeContext ctx{*fsys, *env, **kb, Os::linux, false};
  Facts facts;
  FabricFacts out;
  probe_fabric(ctx, facts, out);
  EXPECT_TRUE(out.checked);
  ASSERT_EQ(out.nvswitch_evidence.size(), 1u);
  ASSERT_TRUE(out.running.ok());
  EXPECT_FALSE(*out.running);
  EXPECT_TRUE(out.binary.empty());
  EXPECT_FALSE(out.version.ok());
}

}  // namespace
}  // namespace dlenv
