// Unit tests of the Windows path helpers and probes over small drive-C: trees.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "binfmt/pe_test_builder.h"
#include "probe/windows_probes.h"
#include "util/strings.h"
#include "util/temp_dir_test_support.h"

namespace dlenv {
namespace {

namespace fs = std::filesystem;

class Tree {
 public:
  Tree() {
    root_ = testing::make_unique_temp_dir("winprobe");
    fs_ = make_rooted_filesystem(root_.string());
    kb_ = *Kb::load_embedded();
  }
  ~Tree() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  void file(const std::string& logical, const std::string& content = "") {
    fs::path p = root_ / logical.substr(1);
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
  }
  void dll(const std::string& logical, uint16_t a, uint16_t b, uint16_t c, uint16_t d) {
    testbuild::PeSpec spec;
    spec.version_resource = true;
    spec.file_version[0] = a;
    spec.file_version[1] = b;
    spec.file_version[2] = c;
    spec.file_version[3] = d;
    auto img = testbuild::build_pe(spec);
    file(logical, std::string(reinterpret_cast<const char*>(img.bytes.data()), img.bytes.size()));
  }
  ProbeContext ctx(std::map<std::string, std::string> vars) {
    env_ = make_map_env(std::move(vars));
    return ProbeContext{*fs_, *env_, *kb_, Os::windows, false, "test"};
  }

 private:
  fs::path root_;
  std::unique_ptr<FileSystem> fs_;
  std::unique_ptr<Env> env_;
  std::shared_ptr<const Kb> kb_;
};

TEST(WindowsPaths, DriverVersionFromFileVersion) {
  EXPECT_EQ(nvidia_driver_from_file_version("31.0.15.2849"), "528.49");
  EXPECT_EQ(nvidia_driver_from_file_version("32.0.15.6094"), "560.94");
  EXPECT_EQ(nvidia_driver_from_file_version("31.0.15.1694"), "516.94");
  EXPECT_EQ(nvidia_driver_from_file_version("30.0.14.9649"), "496.49");
  EXPECT_EQ(nvidia_driver_from_file_version("32.0.15.123"), "501.23");  // 4-digit padding
  EXPECT_FALSE(nvidia_driver_from_file_version("8.9.7"));
  EXPECT_FALSE(nvidia_driver_from_file_version("a.b.c.d"));
  EXPECT_FALSE(nvidia_driver_from_file_version("1.0.0.99999"));
}

TEST(WindowsPaths, LogicalPathsUnderRootAndCaseInsensitiveLookup) {
  Tree t;
  t.file("/Program Files/NVIDIA Corporation/NVSMI/nvml.dll");
  auto ctx = t.ctx(
      {{"Path", "C:\\A;\"C:\\Program Files\\X\";;D:\\tools"}, {"USERPROFILE", "C:\\Users\\ann"}});
  EXPECT_EQ(win_logical(ctx, "C:\\Program Files\\NVIDIA"), "/Program Files/NVIDIA");
  EXPECT_EQ(win_logical(ctx, "c:/x/../y"), "/y");
  EXPECT_EQ(win_logical(ctx, "\"C:\\Quoted Dir\""), "/Quoted Dir");
  EXPECT_EQ(win_logical(ctx, "D:\\tools"), "");  // other drives are not under --root
  EXPECT_EQ(win_logical(ctx, "\\\\server\\share"), "");
  EXPECT_EQ(win_find(ctx.fs, "/program files/nvidia corporation/nvsmi/NVML.DLL"),
            "/Program Files/NVIDIA Corporation/NVSMI/nvml.dll");
  EXPECT_FALSE(win_find(ctx.fs, "/program files/none"));
  // The rooted file system itself reads drive-C: paths (as other probes pass them on).
  EXPECT_TRUE(ctx.fs.is_file("C:\\Program Files\\NVIDIA Corporation\\NVSMI\\nvml.dll"));
  EXPECT_TRUE(ctx.fs.is_file("c:/Program Files/NVIDIA Corporation/NVSMI/nvml.dll"));
  EXPECT_FALSE(ctx.fs.exists("D:\\Program Files\\NVIDIA Corporation\\NVSMI\\nvml.dll"));
  EXPECT_EQ(win_env(ctx, "PATH"), "C:\\A;\"C:\\Program Files\\X\";;D:\\tools");
  EXPECT_EQ(win_path_entries(*win_env(ctx, "PATH")),
            (std::vector<std::string>{"C:\\A", "C:\\Program Files\\X", "D:\\tools"}));
  EXPECT_EQ(win_expand(ctx, "%USERPROFILE%\\bin;%NOPE%\\x;100%"),
            "C:\\Users\\ann\\bin;%NOPE%\\x;100%");
  EXPECT_EQ(win_system32(ctx), "/Windows/System32");  // not on disk: the default spelling
}

TEST(WindowsDriver, VersionFromNvcudaElseNvmlAndGpusFromRegistry) {
  Tree t;
  t.dll("/WINDOWS/system32/NVCUDA.DLL", 31, 0, 15, 2849);
  auto ctx = t.ctx({{"SystemRoot", "C:\\Windows"}});
  ctx.registry = [](RegistryHive h, std::string_view key,
                    std::string_view value) -> std::optional<std::string> {
    if (h != RegistryHive::local_machine || !ends_with(key, "\\0001")) return std::nullopt;
    if (value == "DriverDesc") return "NVIDIA GeForce RTX 4090";
    return std::nullopt;
  };
  ctx.registry_source = "test";
  WindowsFacts w;
  DriverFacts d;
  std::vector<GpuFacts> gpus;
  probe_windows_driver(ctx, w, d, gpus);
  ASSERT_EQ(w.nvcuda.size(), 1u);
  EXPECT_EQ(w.nvcuda[0].path, "/WINDOWS/system32/NVCUDA.DLL");
  EXPECT_EQ(w.driver_version.value, "528.49");
  ASSERT_TRUE(d.version());
  EXPECT_EQ(d.version()->str(), "528.49");
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(*gpus[0].name, "NVIDIA GeForce RTX 4090");
  EXPECT_EQ(gpus[0].compute_capability->str(), "8.9");

  Tree nvsmi_only;  // an old driver: nvml.dll only in NVSMI, a corrupt nvcuda.dll
  nvsmi_only.file("/Windows/System32/nvcuda.dll", "MZ garbage");
  nvsmi_only.dll("/Program Files/NVIDIA Corporation/NVSMI/nvml.dll", 26, 21, 14, 4575);
  auto c2 = nvsmi_only.ctx({});
  WindowsFacts w2;
  DriverFacts d2;
  probe_windows_driver(c2, w2, d2, gpus);
  EXPECT_EQ(w2.driver_version.value, "445.75");
  EXPECT_FALSE(w2.nvcuda[0].version.ok());
}

}  // namespace
}  // namespace dlenv
