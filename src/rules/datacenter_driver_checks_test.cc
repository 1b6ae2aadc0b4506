// Unit tests of rules/datacenter_driver_checks.cc and of the --deep error texts that map to its
// ids (CUDA errors 802 and 804 as torch and CuPy print them).
#include <gtest/gtest.h>

#include "rules/rules.h"

namespace dlenv {
namespace {

const Kb& kb() {
  static auto k = Kb::load_embedded();
  return **k;
}

const Finding* find(const std::vector<Finding>& v, std::string_view id) {
  for (const auto& f : v) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

Facts machine(const std::string& gpu_name) {
  Facts f;
  f.host.container = Fact<std::string>::known("none", "test");
  f.driver.kernel_module_version =
      Fact<std::string>::known("535.183.01", "/proc/driver/nvidia/version");
  GpuFacts g;
  g.index = 0;
  g.name = Fact<std::string>::known(gpu_name, "NVML");
  f.gpus.push_back(g);
  f.gpu_count = Fact<int>::known(1, "NVML");
  return f;
}

// A --deep result of `framework` that failed with `error`.
PythonEnv deep_env(const std::string& framework, const std::string& error) {
  PythonEnv e;
  e.interpreter = Fact<std::string>::known("/opt/venv/bin/python3", "PATH");
  DeepProbe d;
  d.status = Fact<std::string>::known("ok", "python3 -c <probe>");
  DeepFramework df;
  df.name = framework;
  df.imported = true;
  df.version = "1";
  df.gpu_available = Fact<bool>::known(false, "probe");
  df.error = error;
  d.frameworks.push_back(df);
  e.deep = d;
  return e;
}

TEST(CatalogRules, DeepErrorTexts802And804MapToTheirIds) {
  Facts f = machine("NVIDIA H100 80GB HBM3");
  f.python.push_back(deep_env(
      "torch",
      "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions "
      "before calling NumCudaDevices() that might have already set an error? Error 802: system "
      "not yet initialized"));
  f.python.push_back(
      deep_env("cupy",
               "CUDARuntimeError: cudaErrorCompatNotSupportedOnDevice: forward compatibility was "
               "attempted on non supported HW"));
  f.python[1].interpreter = Fact<std::string>::known("/opt/other/bin/python3", "PATH");
  auto out = run_rules(f, kb(), Os::linux);
  const Finding* x = find(out, "fabric-manager-missing-802");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->severity, Severity::error);
  EXPECT_NE(x->title.find("torch"), std::string::npos) << x->title;
  x = find(out, "forward-compat-unsupported-804");
  ASSERT_NE(x, nullptr);
  EXPECT_NE(x->title.find("cupy"), std::string::npos) << x->title;
  EXPECT_EQ(find(out, "python-framework-gpu-unavailable"), nullptr);
}

Facts compat_on_path(const std::string& gpu_name) {
  Facts f = machine(gpu_name);
  auto& fc = f.system.forward_compat;
  fc.libcuda = Fact<std::string>::known("/usr/local/cuda-12.8/compat/libcuda.so.1",
                                        "loader model (libcuda.so.1): LD_LIBRARY_PATH");
  fc.rule = "LD_LIBRARY_PATH";
  fc.version = "570.124.06";
  fc.compat = true;
  return f;
}

TEST(CatalogRules, ForwardCompatByGpuFamily) {
  auto severity = [](const Facts& f) -> std::string {
    auto out = run_rules(f, kb(), Os::linux);
    const Finding* x = find(out, "forward-compat-unsupported-804");
    return x ? severity_name(x->severity) : "none";
  };
  EXPECT_EQ(severity(compat_on_path("NVIDIA GeForce RTX 4090")), "error");
  EXPECT_EQ(severity(compat_on_path("NVIDIA TITAN RTX")), "error");
  EXPECT_EQ(severity(compat_on_path("NVIDIA RTX A6000")), "warning");
  EXPECT_EQ(severity(compat_on_path("Some Future GPU 9000")), "warning");
  EXPECT_EQ(severity(compat_on_path("NVIDIA H100 80GB HBM3")), "none");
  EXPECT_EQ(severity(compat_on_path("NVIDIA A100-SXM4-80GB")), "none");
  EXPECT_EQ(severity(compat_on_path("Jetson AGX Orin")), "none");

  // Not newer than the kernel module: not forward compatibility.
  Facts older = compat_on_path("NVIDIA GeForce RTX 4090");
  older.system.forward_compat.version = "535.183.01";
  EXPECT_EQ(severity(older), "none");
  // The live probe loaded the driver's own libcuda: that decides.
  Facts live = compat_on_path("NVIDIA GeForce RTX 4090");
  live.driver.libcuda_library =
      Fact<std::string>::known("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "dlopen");
  EXPECT_EQ(severity(live), "none");
  // Windows has no cuda-compat package.
  auto out = run_rules(compat_on_path("NVIDIA GeForce RTX 4090"), kb(), Os::windows);
  EXPECT_EQ(find(out, "forward-compat-unsupported-804"), nullptr);
}

TEST(CatalogRules, FabricManagerNeedsSwitchEvidence) {
  Facts f = machine("NVIDIA H100 80GB HBM3");
  f.system.fabric.checked = true;
  auto out = run_rules(f, kb(), Os::linux);
  EXPECT_EQ(find(out, "fabric-manager-missing-802"), nullptr);
  f.system.fabric.nvswitch_evidence = {"/dev/nvidia-nvswitch0"};
  out = run_rules(f, kb(), Os::linux);
  const Finding* x = find(out, "fabric-manager-missing-802");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->severity, Severity::error);
  // Installed, running, version unknown (no package, not live): nothing to say.
  f.system.fabric.binary = "/usr/bin/nv-fabricmanager";
  f.system.fabric.running = Fact<bool>::known(true, "/proc/9/comm");
  out = run_rules(f, kb(), Os::linux);
  EXPECT_EQ(find(out, "fabric-manager-missing-802"), nullptr);
}

}  // namespace
}  // namespace dlenv
