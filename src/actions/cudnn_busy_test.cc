// Which processes hold a DLL the install would replace (Windows: that blocks it).
#include <gtest/gtest.h>

#include "actions/cudnn_install.h"

namespace dlenv {
namespace {

TEST(CudnnBusy, LoadedDllsMatchCaseInsensitivelyWithEitherSeparator) {
  ModuleScan scan;
  scan.processes.push_back(
      {4242,
       "python.exe",
       {"C:\\Windows\\System32\\KERNEL32.DLL",
        "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.7\\bin\\CUDNN64_8.DLL",
        "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.7\\bin\\cudnn64_8.dll"}});
  scan.processes.push_back({77, "explorer.exe", {"C:\\Windows\\explorer.exe"}});
  scan.processes.push_back(
      {9,
       "trainer.exe",
       {"c:/program files/nvidia gpu computing toolkit/cuda/v11.7/bin/cudnn_ops_infer64_8.dll"}});
  const std::string bin = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.7\\bin\\";
  auto busy = busy_from_modules(scan, {bin + "cudnn64_8.dll", bin + "cudnn_ops_infer64_8.dll",
                                       bin + "cudnn_cnn_infer64_8.dll"});
  ASSERT_EQ(busy.size(), 2u);  // one entry per process and file, not per spelling
  EXPECT_EQ(busy[0].pid, 4242);
  EXPECT_EQ(busy[0].command, "python.exe");
  EXPECT_NE(busy[0].path.find("CUDNN64_8.DLL"), std::string::npos);  // as the OS reports it
  EXPECT_EQ(busy[1].pid, 9);
  EXPECT_TRUE(busy_from_modules(scan, {}).empty());
  EXPECT_TRUE(busy_from_modules(ModuleScan{}, {bin + "cudnn64_8.dll"}).empty());
}

}  // namespace
}  // namespace dlenv
