// Rules over hand-built Facts: the live-only signals that a --root scenario
// cannot produce (NVML errors, the libcuda that really loaded, permissions).
#include "rules/rules.h"

#include <gtest/gtest.h>

#include <set>

namespace dlenv {
namespace {

std::shared_ptr<const Kb> kb() {
  static auto k = Kb::load_embedded();
  return *k;
}

Facts live_machine() {
  Facts f;
  f.driver.kernel_module_version =
      Fact<std::string>::known("580.95.05", "/proc/driver/nvidia/version");
  f.driver.nvml_driver_version = Fact<std::string>::known("580.95.05", "NVML");
  f.driver.cuda_driver_version = Fact<int>::known(13000, "cuDriverGetVersion");
  f.driver.nvidia_loaded = f.driver.nvidia_uvm_loaded = true;
  for (const char* n : {"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm"}) {
    DeviceNode d;
    d.path = n;
    d.present = d.readable = d.writable = true;
    d.mode = 0666;
    f.driver.device_nodes.push_back(d);
  }
  GpuFacts g;
  g.index = 0;
  g.name = Fact<std::string>::known("NVIDIA H200", "NVML");
  g.compute_capability = Fact<Version>::known(Version{9, 0}, "NVML");
  g.compute_mode = Fact<std::string>::known("default", "NVML");
  f.gpus.push_back(g);
  return f;
}

std::set<std::string> ids(const std::vector<Finding>& fs) {
  std::set<std::string> out;
  for (const auto& f : fs) out.insert(f.id);
  return out;
}

const Finding* find(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

TEST(Rules, HealthyLiveMachineHasNoFindings) {
  auto out = run_rules(live_machine(), *kb(), Os::linux);
  EXPECT_TRUE(out.empty()) << (out.empty() ? "" : out[0].id);
}

TEST(Rules, DeviceNodesNotAccessibleToThisUser) {
  Facts f = live_machine();
  f.driver.device_nodes[0].readable = f.driver.device_nodes[0].writable = false;
  f.driver.device_nodes[0].mode = 0660;
  f.driver.device_nodes[0].gid = 44;
  auto out = run_rules(f, *kb(), Os::linux);
  const Finding* x = find(out, "dev-nvidia-permissions");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->severity, Severity::error);
  EXPECT_NE(x->evidence[0].fact.find("0660"), std::string::npos) << x->evidence[0].fact;
}

TEST(Rules, NvmlReportsVersionMismatch) {
  Facts f = live_machine();
  f.driver.nvml_driver_version =
      Fact<std::string>::unknown(FactStatus::error, "init failed", "NVML");
  f.driver.nvml_error = Fact<std::string>::known(
      "Driver/library version mismatch (return code 18, NVML_ERROR_LIB_RM_VERSION_MISMATCH)",
      "nvmlInit_v2");
  auto out = run_rules(f, *kb(), Os::linux);
  ASSERT_TRUE(find(out, "nvml-driver-library-mismatch"));
  EXPECT_EQ(find(out, "nvml-driver-library-mismatch")->severity, Severity::error);
}

TEST(Rules, StubLibcudaReallyLoaded) {
  Facts f = live_machine();
  f.driver.libcuda_library =
      Fact<std::string>::known("/usr/local/cuda-13.0/lib64/stubs/libcuda.so", "dlopen");
  f.driver.libcuda_error = Fact<std::string>::known(
      "cuDriverGetVersion returned CUDA_ERROR_STUB_LIBRARY (34)", "libcuda");
  auto out = run_rules(f, *kb(), Os::linux);
  const Finding* x = find(out, "libcuda-stub-loaded");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->severity, Severity::error);
}

TEST(Rules, ProhibitedComputeModeIsAnError) {
  Facts f = live_machine();
  f.gpus[0].compute_mode = Fact<std::string>::known("prohibited", "NVML");
  auto out = run_rules(f, *kb(), Os::linux);
  ASSERT_TRUE(find(out, "exclusive-compute-mode-busy"));
  EXPECT_EQ(find(out, "exclusive-compute-mode-busy")->severity, Severity::error);
}

TEST(Rules, MissingDeviceNodesInAContainer) {
  Facts f = live_machine();
  for (auto& d : f.driver.device_nodes) d.present = false;
  f.host.container = Fact<std::string>::known("docker", "/.dockerenv");
  auto out = run_rules(f, *kb(), Os::linux);
  EXPECT_TRUE(ids(out).count("container-started-without-gpus")) << out.size();
}

TEST(Rules, FindingsComeSortedBySeverity) {
  Facts f = live_machine();
  f.gpus[0].compute_mode = Fact<std::string>::known("exclusive-process", "NVML");  // info
  f.driver.device_nodes[0].readable = false;                                       // error
  auto out = run_rules(f, *kb(), Os::linux);
  ASSERT_GE(out.size(), 2u);
  EXPECT_EQ(out.front().severity, Severity::error);
  EXPECT_EQ(out.back().severity, Severity::info);
}

// Found on the H200 machine: the CPU `onnxruntime` package reports no GPU under
// --deep. That is by design, not an error; a CUDA build that reports no GPU is.
TEST(Rules, CpuPackageWithoutGpuUnderDeepIsInfoAndCudaBuildIsError) {
  Facts f = live_machine();
  PythonEnv e;
  e.interpreter = Fact<std::string>::known("/opt/venv/bin/python3", "PATH");
  FrameworkFacts ort;
  ort.name = "onnxruntime";
  ort.package = "onnxruntime";
  ort.version = "1.30.0";
  ort.cuda_build = Fact<bool>::known(false, "METADATA");
  e.frameworks.push_back(ort);
  DeepProbe d;
  d.status = Fact<std::string>::known("ok", "python3 -c <probe>");
  DeepFramework df;
  df.name = "onnxruntime";
  df.imported = true;
  df.version = "1.30.0";
  df.gpu_available = Fact<bool>::known(false, "probe");
  d.frameworks.push_back(df);
  e.deep = d;
  f.python.push_back(e);
  auto out = run_rules(f, *kb(), Os::linux);
  const Finding* x = find(out, "python-framework-gpu-unavailable");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->severity, Severity::info);
  ASSERT_FALSE(x->fix.empty());
  EXPECT_NE(x->fix[0].command.find("onnxruntime-gpu"), std::string::npos) << x->fix[0].command;

  f.python[0].frameworks[0].cuda_build = Fact<bool>::known(true, "METADATA");
  out = run_rules(f, *kb(), Os::linux);
  x = find(out, "python-framework-gpu-unavailable");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->severity, Severity::error);
}

// One catalog (kb/findings.json): the generated FindingId table and the KB agree entry by
// entry, and every finding says what it means and how to fix it.
TEST(Rules, EveryFindingIdIsACatalogEntryWithItsMeaningAndFix) {
  ASSERT_EQ(kb()->findings().size(), kFindingCount);
  for (size_t i = 0; i < kFindingCount; ++i) {
    const FindingMeta& m = kFindingMeta[i];
    const FindingInfo* f = kb()->finding(m.id);
    ASSERT_NE(f, nullptr) << m.id;
    EXPECT_EQ(f->severity, severity_name(m.severity)) << m.id;
    EXPECT_EQ(f->layer, m.layer) << m.id;
    EXPECT_FALSE(f->title.empty() || f->cause.empty() || f->fix.empty()) << m.id;
    EXPECT_TRUE(explain_text(m.id, *kb()).has_value()) << m.id;
  }
  for (const auto& r : rule_table()) EXPECT_NE(kb()->finding(r.id), nullptr) << r.id;
  EXPECT_FALSE(explain_text("no-such-id", *kb()).has_value());
}

}  // namespace
}  // namespace dlenv
