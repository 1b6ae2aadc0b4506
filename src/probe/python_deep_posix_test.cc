// The parse side of --deep for a Windows interpreter: a fake interpreter (a shell
// script, hence POSIX only) prints what the probe script's Windows branch prints
// (module paths from EnumProcessModules + GetModuleFileNameW) and the paths come
// back as they were written. The Windows branch itself needs a Windows Python,
// which neither the build machine nor Wine has.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "platform/filesystem.h"
#include "probe/probe.h"
#include "util/temp_dir_test_support.h"

namespace dlenv {
namespace {

namespace fs = std::filesystem;

TEST(PythonDeepWindowsOutput, ModulePathsAndLoaderErrorsAreKeptAsReported) {
  const fs::path dir = testing::make_unique_temp_dir("deepwin");
  const fs::path py = dir / "python.exe";
  // What the script prints on Windows: backslash paths, JSON-escaped.
  std::ofstream(py) << R"SH(#!/bin/sh
echo 'import noise'
cat <<'END'
DLENV-DEEP-BEGIN
{"python": "3.11.9", "frameworks": [{"name": "torch", "imported": false, "error": "OSError: [WinError 126] The specified module could not be found. Error loading \"C:\\venv\\Lib\\site-packages\\torch\\lib\\cudnn_cnn_infer64_8.dll\" or one of its dependencies."}], "loaded": ["C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.7\\bin\\cudart64_110.dll", "C:\\Windows\\System32\\nvcuda.dll"]}
DLENV-DEEP-END
END
)SH";
  fs::permissions(py, fs::perms::owner_all);
  std::vector<PythonEnv> envs(1);
  envs[0].interpreter = Fact<std::string>::known(py.string(), "test");
  probe_python_deep(*make_real_filesystem(), envs, std::chrono::seconds(20));
  ASSERT_TRUE(envs[0].deep);
  const DeepProbe& d = *envs[0].deep;
  ASSERT_TRUE(d.status.value) << d.status.reason;
  EXPECT_EQ(*d.status.value, "ok");
  ASSERT_EQ(d.loaded_libraries.size(), 2u);
  EXPECT_EQ(d.loaded_libraries[0],
            "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.7\\bin\\cudart64_110.dll");
  EXPECT_EQ(d.loaded_libraries[1], "C:\\Windows\\System32\\nvcuda.dll");
  // Classified as `dlenv which` classifies a Windows process's modules (by path here:
  // these files do not exist on this machine).
  ASSERT_EQ(d.loaded.size(), 2u);
  EXPECT_EQ(d.loaded[0].library, "cudart");
  EXPECT_EQ(d.loaded[0].version, "11") << "the name's major only";
  EXPECT_EQ(d.loaded[0].origin, "CUDA toolkit");
  EXPECT_EQ(d.loaded[0].origin_detail,
            "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.7 (CUDA 11.7)");
  EXPECT_EQ(d.loaded[1].library, "cuda (driver)");
  EXPECT_EQ(d.loaded[1].origin, "driver");
  EXPECT_EQ(d.loaded[1].origin_detail, "C:\\Windows\\System32");
  ASSERT_EQ(d.frameworks.size(), 1u);
  EXPECT_NE(d.frameworks[0].error.find("[WinError 126]"), std::string::npos);
  EXPECT_NE(d.frameworks[0].error.find(
                "C:\\venv\\Lib\\site-packages\\torch\\lib\\cudnn_cnn_infer64_8.dll"),
            std::string::npos)
      << d.frameworks[0].error;
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace dlenv
