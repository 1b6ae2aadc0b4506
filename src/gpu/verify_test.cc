// Drives the whole verify pipeline (symbol tables, copies, GEMM, checks, problems)
// against host-side fakes of libcuda and cuBLAS compiled at test time.
#include "gpu/verify.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>

#include "platform/process.h"

namespace dlenv {
namespace {

namespace fs = std::filesystem;

bool has_problem(const VerifyResult& r, const std::string& id, const std::string& text = "") {
  for (const auto& p : r.problems) {
    if (p.id == id && p.text.find(text) != std::string::npos) return true;
  }
  return false;
}

class FakeGpu : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* base = std::getenv("DLENV_TEST_TMP");
    dir_ = (fs::path(base && *base ? base : "/tmp") / ("verify-fakes-" + std::to_string(getpid())))
               .string();
    fs::create_directories(dir_);
    std::string src = std::string(DLENV_SOURCE_DIR) + "/tests/fixtures/fake_cuda_compute.c";
    auto build = [&](const std::string& def, const std::string& out, const std::string& soname) {
      auto r = run_process({DLENV_CXX_COMPILER, "-x", "c", "-shared", "-fPIC", "-O1", def,
                            "-Wl,-soname," + soname, "-o", dir_ + "/" + out, src, "-lm"});
      ASSERT_TRUE(r) << r.error().message;
      ASSERT_EQ(r->exit_code, 0) << r->err;
    };
    build("-DFAKE_CUDA", "libcuda.so.1", "libcuda.so.1");
    build("-DFAKE_CUBLAS", "libcublas.so.13", "libcublas.so.13");
    build("-DFAKE_CUBLASLT", "libcublasLt.so.13", "libcublasLt.so.13");
    std::string dnn_src = std::string(DLENV_SOURCE_DIR) + "/tests/fixtures/fake_cudnn.c";
    auto r =
        run_process({DLENV_CXX_COMPILER, "-x", "c", "-shared", "-fPIC", "-O2",
                     "-Wl,-soname,libcudnn.so.9", "-o", dir_ + "/libcudnn.so.9", dnn_src, "-lm"});
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(r->exit_code, 0) << r->err;
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  VerifyOptions options() const {
    VerifyOptions o;
    o.cuda_candidates = {dir_ + "/libcuda.so.1"};
    o.cublas_dir = dir_;
    o.gemm_n = 48;
    o.copy_bytes = 1 << 20;
    o.cpu_gemm_n = 32;
    o.cudnn_path = dir_;
    o.small_dnn = true;
    return o;
  }
  static std::string dir_;
};
std::string FakeGpu::dir_;

TEST_F(FakeGpu, CorrectFp32AndTf32ResultsPassAndUnsupportedTypesAreNamed) {
  setenv("FAKE_MODE", "ok", 1);
  VerifyResult r = run_verify(options());
  EXPECT_FALSE(r.no_gpu);
  EXPECT_EQ(r.cuda_library, dir_ + "/libcuda.so.1");
  EXPECT_EQ(r.cublas_library, dir_ + "/libcublas.so.13");
  EXPECT_EQ(r.cublas_version, 130100);
  ASSERT_EQ(r.devices.size(), 1u);
  const DeviceResult& d = r.devices[0];
  EXPECT_EQ(d.name, "Fake GPU");
  EXPECT_EQ(d.compute_capability.str(), "9.0");
  ASSERT_EQ(d.bandwidth.size(), 5u);
  for (const auto& b : d.bandwidth) {
    EXPECT_TRUE(b.error.empty()) << b.name << ": " << b.error;
    EXPECT_GT(b.gbs, 0) << b.name;
  }
  ASSERT_EQ(d.gemm.size(), 5u);
  for (int i : {0, 1}) {
    EXPECT_TRUE(d.gemm[i].error.empty()) << d.gemm[i].error;
    EXPECT_TRUE(d.gemm[i].small_check.ok()) << d.gemm[i].small_check.first_bad;
    EXPECT_EQ(d.gemm[i].small_check.checked, 192u * 160u);
    EXPECT_TRUE(d.gemm[i].large_check.ok());
    EXPECT_GT(d.gemm[i].tflops, 0);
  }
  for (int i : {2, 3})
    EXPECT_NE(d.gemm[i].error.find("CUBLAS_STATUS_NOT_SUPPORTED"), std::string::npos);
  // fp8 runs through cuBLASLt ("TN" E4M3 inputs, bf16 output) and is checked like the rest.
  const GemmResult& f8 = d.gemm[4];
  EXPECT_EQ(f8.type, DType::fp8);
  EXPECT_EQ(f8.out_type, DType::bf16);
  EXPECT_EQ(f8.library, "cublasLtMatmul");
  EXPECT_TRUE(f8.skipped.empty()) << f8.skipped;
  EXPECT_TRUE(f8.error.empty()) << f8.error;
  EXPECT_TRUE(f8.small_check.ok()) << f8.small_check.first_bad;
  EXPECT_EQ(f8.small_check.checked, 192u * 160u);
  EXPECT_TRUE(f8.large_check.ok()) << f8.large_check.first_bad;
  EXPECT_GT(f8.tflops, 0);
  EXPECT_EQ(d.pci_bus_id, "0000:3B:00.0");
  EXPECT_GT(r.cpu_gemm_gflops, 0);
  // JSON and text render every part.
  EXPECT_NE(render_verify_json(r).find("\"dlenv.verify/1\""), std::string::npos);
  EXPECT_NE(render_verify_text(r).find("GEMM fp32"), std::string::npos);
}

TEST_F(FakeGpu, WrongResultsAreAnErrorNotANumber) {
  setenv("FAKE_MODE", "wrong", 1);
  VerifyResult r = run_verify(options());
  bool wrong = false;
  for (const auto& p : r.problems) wrong |= p.id == "verify-wrong-result" && p.severity == "error";
  EXPECT_TRUE(wrong);
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_FALSE(r.devices[0].gemm[0].small_check.ok());
  ASSERT_EQ(r.devices[0].gemm.size(), 5u);
  EXPECT_FALSE(r.devices[0].gemm[4].small_check.ok());  // a wrong fp8 element is caught too
  EXPECT_TRUE(has_problem(r, "verify-wrong-result", "GEMM fp8"));
  setenv("FAKE_MODE", "ok", 1);
}

TEST_F(FakeGpu, NoDeviceIsACleanNoGpuResult) {
  setenv("FAKE_MODE", "nodevice", 1);
  VerifyResult r = run_verify(options());
  EXPECT_TRUE(r.no_gpu);
  EXPECT_TRUE(r.devices.empty());
  ASSERT_FALSE(r.problems.empty());
  EXPECT_NE(r.problems[0].text.find("CUDA_ERROR_NO_DEVICE"), std::string::npos)
      << r.problems[0].text;
  setenv("FAKE_MODE", "ok", 1);
}

TEST_F(FakeGpu, CudnnConvolutionsActivationsAndRnnsRunAndAreChecked) {
  setenv("FAKE_MODE", "ok", 1);
  VerifyOptions o = options();
  o.full = true;  // every direction x layout x type, algorithms found by measuring
  VerifyResult r = run_verify(o);
  EXPECT_EQ(r.cudnn_library, dir_ + "/libcudnn.so.9");
  EXPECT_EQ(r.cudnn_version, 91900u);
  ASSERT_EQ(r.devices.size(), 1u);
  const auto& dnn = r.devices[0].dnn;
  ASSERT_EQ(dnn.size(), 12u + 12u + 4u);
  int convs = 0, acts = 0, rnns = 0;
  for (const auto& d : dnn) {
    EXPECT_TRUE(d.error.empty()) << d.op << " " << d.layout << ": " << d.error;
    EXPECT_TRUE(d.check.ok()) << d.op << " " << d.layout << " " << dtype_name(d.type) << ": "
                              << d.check.first_bad;
    EXPECT_GT(d.ms, 0) << d.op;
    if (d.op.starts_with("conv")) {
      ++convs;
      EXPECT_EQ(d.sublibrary, "libcudnn_cnn.so.9");
      EXPECT_EQ(d.algo, d.op == "conv forward" ? "IMPLICIT_PRECOMP_GEMM" : "ALGO_1");
      EXPECT_GT(d.tflops, 0);
    } else if (d.op.find("LSTM") != std::string::npos || d.op.find("GRU") != std::string::npos) {
      ++rnns;
      EXPECT_EQ(d.sublibrary, "libcudnn_adv.so.9");
      // The small problem is checked whole: 6 steps x 3 batches x 32 units, and more.
      EXPECT_GT(d.check.checked, 6u * 3u * 32u);
    } else {
      ++acts;
      EXPECT_EQ(d.sublibrary, "libcudnn_ops.so.9");
      EXPECT_GT(d.gbs, 0);
    }
  }
  EXPECT_EQ(convs, 12);
  EXPECT_EQ(acts, 12);
  EXPECT_EQ(rnns, 4);
  for (const auto& p : r.problems) EXPECT_EQ(p.id.find("cudnn"), std::string::npos) << p.text;
  std::string json = render_verify_json(r);
  EXPECT_NE(json.find("\"conv backward-filter\""), std::string::npos);
  EXPECT_NE(json.find("\"cudnn_version\": 91900"), std::string::npos);
  std::string text = render_verify_text(r);
  EXPECT_NE(text.find("LSTM forward fp16"), std::string::npos) << text;
  EXPECT_NE(text.find("conv forward NHWC fp16"), std::string::npos) << text;
}

TEST_F(FakeGpu, QuickModeRunsEachCudnnSublibraryOnce) {
  setenv("FAKE_MODE", "ok", 1);
  VerifyResult r = run_verify(options());
  ASSERT_EQ(r.devices.size(), 1u);
  // conv fwd/bwd-data/bwd-filter NHWC fp16 + fwd NCHW fp32, relu fwd/bwd, LSTM.
  EXPECT_EQ(r.devices[0].dnn.size(), 4u + 2u + 1u);
  for (const auto& d : r.devices[0].dnn) EXPECT_TRUE(d.error.empty() && d.check.ok()) << d.op;
}

TEST_F(FakeGpu, EveryAnnouncedStepIsTimedInOrderAndStillReachesTheCaller) {
  setenv("FAKE_MODE", "ok", 1);
  VerifyOptions o = options();
  std::vector<std::string> seen;
  o.progress = [&seen](const std::string& step) { seen.push_back(step); };
  VerifyResult r = run_verify(o);
  ASSERT_EQ(r.step_ms.size(), seen.size());
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(r.step_ms[i].first, seen[i]);
    EXPECT_GE(r.step_ms[i].second, 0.0) << seen[i];
  }
  auto at = [&seen](const std::string& step) {
    return std::find(seen.begin(), seen.end(), step) - seen.begin();
  };
  ASSERT_LT(at("GPU 0: cuBLAS handle"), static_cast<long>(seen.size()));
  EXPECT_EQ(seen.front(), "loading cuBLAS");
  EXPECT_GT(r.cpu_gemm_gflops, 0);  // measured alongside, waited for
  EXPECT_EQ(r.timing_ms.count("cpu_gemm_done_after"), 1u);
  EXPECT_LT(at("loading cuBLAS"), at("GPU 0: context"));
  EXPECT_LT(at("GPU 0: context"), at("GPU 0: copies"));
  EXPECT_LT(at("GPU 0: cuBLAS handle"), at("GPU 0: GEMM inputs"));
  EXPECT_LT(at("GPU 0: GEMM inputs"), at("GPU 0: GEMM fp32"));
  EXPECT_LT(at("GPU 0: GEMM fp32"), at("GPU 0: cuDNN handle"));
  double steps = 0;
  for (const auto& s : r.step_ms) steps += s.second;
  EXPECT_LE(steps, r.wall_ms + 1.0);
  EXPECT_NE(render_verify_json(r).find("\"step_ms\""), std::string::npos);
}

TEST_F(FakeGpu, WrongCudnnResultsAreErrorsNamingTheOperation) {
  setenv("FAKE_MODE", "dnn-wrong", 1);
  VerifyOptions o = options();
  o.full = true;  // GRU runs in --full only
  VerifyResult r = run_verify(o);
  setenv("FAKE_MODE", "ok", 1);
  EXPECT_TRUE(has_problem(r, "verify-wrong-result", "conv forward NHWC fp16"));
  EXPECT_TRUE(has_problem(r, "verify-wrong-result", "LSTM forward fp16"));
  EXPECT_TRUE(has_problem(r, "verify-wrong-result", "GRU forward fp16"));
  EXPECT_FALSE(has_problem(r, "verify-wrong-result", "relu forward"));
}

TEST_F(FakeGpu, MissingCnnSublibraryIsNamedAndTheRestStillRuns) {
  setenv("FAKE_MODE", "dnn-nocnn", 1);
  VerifyResult r = run_verify(options());
  setenv("FAKE_MODE", "ok", 1);
  EXPECT_TRUE(has_problem(r, "cudnn-sublibrary-missing", "libcudnn_cnn.so.9"));
  ASSERT_EQ(r.devices.size(), 1u);
  for (const auto& d : r.devices[0].dnn) {
    if (d.op.starts_with("conv")) {
      EXPECT_NE(d.error.find("CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED"), std::string::npos)
          << d.error;
    } else {
      EXPECT_TRUE(d.error.empty()) << d.op << ": " << d.error;
    }
  }
}

TEST_F(FakeGpu, CudnnThatCannotInitialiseOrLoadIsExplained) {
  setenv("FAKE_MODE", "dnn-noinit", 1);
  VerifyResult r = run_verify(options());
  setenv("FAKE_MODE", "ok", 1);
  EXPECT_TRUE(has_problem(r, "cudnn-status-not-initialized", "cudnnCreate"));

  VerifyOptions o = options();
  o.cudnn_path = dir_ + "/nonexistent";
  r = run_verify(o);
  EXPECT_TRUE(has_problem(r, "verify-cudnn-not-loadable", "libcudnn.so.9"));
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_TRUE(r.devices[0].dnn.empty());
  EXPECT_FALSE(r.devices[0].gemm.empty());  // GEMMs still ran

  o.skip_dnn = true;
  r = run_verify(o);
  EXPECT_FALSE(has_problem(r, "verify-cudnn-not-loadable"));
}

TEST(Verify, NoDriverAtAllIsAnExplainedNoGpuResult) {
  VerifyOptions o;
  o.cuda_candidates = {"/nonexistent/libcuda.so.1"};
  o.cpu_gemm_n = 32;
  VerifyResult r = run_verify(o);
  EXPECT_TRUE(r.no_gpu);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].id, "no-nvidia-driver");
  EXPECT_NE(r.problems[0].text.find("/nonexistent/libcuda.so.1"), std::string::npos);
  EXPECT_GT(r.cpu_gemm_gflops, 0);
}

TEST_F(FakeGpu, MissingRequiredSymbolIsNamed) {
  VerifyOptions o = options();
  o.cuda_candidates = {dir_ + "/libcublasLt.so.13"};  // a library without the driver API
  VerifyResult r = run_verify(o);
  ASSERT_FALSE(r.problems.empty());
  EXPECT_NE(r.problems[0].text.find("cuInit"), std::string::npos) << r.problems[0].text;
}

}  // namespace
}  // namespace dlenv

namespace dlenv {
namespace {

TEST_F(FakeGpu, Fp8IsSkippedBeforeSm89AndAMissingAlgorithmIsAnError) {
  setenv("FAKE_MODE", "ampere", 1);
  VerifyResult r = run_verify(options());
  ASSERT_EQ(r.devices.size(), 1u);
  ASSERT_EQ(r.devices[0].gemm.size(), 5u);
  const GemmResult& f8 = r.devices[0].gemm[4];
  EXPECT_NE(f8.skipped.find("compute capability 8.9"), std::string::npos) << f8.skipped;
  EXPECT_FALSE(has_problem(r, "verify-cuda-error", "fp8"));  // skipped is not a failure
  EXPECT_NE(render_verify_text(r).find("GEMM fp8→bf16"), std::string::npos);
  EXPECT_NE(render_verify_text(r).find("skipped: FP8 tensor cores need"), std::string::npos);

  setenv("FAKE_MODE", "nofp8", 1);
  r = run_verify(options());
  ASSERT_EQ(r.devices.size(), 1u);
  const GemmResult& g = r.devices[0].gemm[4];
  EXPECT_NE(g.error.find("cublasLtMatmulAlgoGetHeuristic: CUBLAS_STATUS_NOT_SUPPORTED"),
            std::string::npos)
      << g.error;
  EXPECT_TRUE(has_problem(r, "verify-cuda-error", "GEMM fp8"));
  setenv("FAKE_MODE", "ok", 1);
}

TEST_F(FakeGpu, NvmlHealthBeforeAndAfterTheRun) {
  setenv("FAKE_MODE", "ok", 1);
  VerifyOptions o = options();
  o.skip_dnn = true;
  int calls = 0;
  std::string seen_bus;
  o.health = [&](const std::string& bus, int index) -> std::optional<GpuHealth> {
    seen_bus = bus;
    EXPECT_EQ(index, 0);
    GpuHealth h;
    h.compute_mode = "default";
    h.compute_processes = 0;
    h.ecc_enabled = true;
    h.ecc_uncorrected_volatile = calls == 0 ? 0u : 2u;  // two new during the run
    h.ecc_corrected_volatile = calls == 0 ? 5u : 5u;
    h.remap_pending = false;
    h.source = "NVML (fake)";
    ++calls;
    return h;
  };
  VerifyResult r = run_verify(o);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(seen_bus, "0000:3B:00.0");
  EXPECT_TRUE(has_problem(r, "verify-ecc-errors", "2 new uncorrectable ECC error(s)"));
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_TRUE(r.devices[0].health_after.has_value());
  EXPECT_NE(render_verify_text(r).find("(this run: +2/+0)"), std::string::npos)
      << render_verify_text(r);
  EXPECT_NE(render_verify_json(r).find("\"ecc_uncorrected_volatile\": 2"), std::string::npos);

  // A clean GPU: no health problem at all.
  calls = 0;
  o.health = [&](const std::string&, int) -> std::optional<GpuHealth> {
    GpuHealth h;
    h.compute_mode = "default";
    h.ecc_enabled = true;
    h.ecc_uncorrected_volatile = 0u;
    h.ecc_corrected_volatile = 0u;
    ++calls;
    return h;
  };
  r = run_verify(o);
  EXPECT_EQ(calls, 2);
  EXPECT_FALSE(has_problem(r, "verify-ecc-errors"));
  EXPECT_FALSE(has_problem(r, "exclusive-compute-mode-busy"));
}

TEST_F(FakeGpu, ExclusiveModeHeldByAnotherProcessIsNamedBeforeTheContextFails) {
  setenv("FAKE_MODE", "exclusive", 1);
  VerifyOptions o = options();
  o.health = [](const std::string&, int) -> std::optional<GpuHealth> {
    GpuHealth h;
    h.compute_mode = "exclusive-process";
    h.compute_processes = 1;
    h.source = "NVML (fake)";
    return h;
  };
  VerifyResult r = run_verify(o);
  EXPECT_TRUE(has_problem(r, "exclusive-compute-mode-busy", "1 process(es) already hold it"));
  // The context failure itself (CUDA error 46) maps to the same id.
  EXPECT_TRUE(has_problem(r, "exclusive-compute-mode-busy", "context"));
  setenv("FAKE_MODE", "ok", 1);
}

}  // namespace
}  // namespace dlenv
