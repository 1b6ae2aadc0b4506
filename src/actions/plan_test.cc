// Table-driven tests of `dlenv plan` over the real (embedded) knowledge base, plus
// goldens of the text form in tests/golden/plan/ (DLENV_UPDATE_GOLDENS=1 rewrites them).
#include "actions/plan.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace dlenv {
namespace {

const Kb& kb() {
  static auto k = Kb::load_embedded();
  return **k;
}

struct Ask {
  std::vector<std::string> frameworks;
  std::string cc;  // "" unknown
  std::string driver;
  PlanOs os = PlanOs::linux;
  std::string python;
};

Plan plan_for(const Ask& a) {
  PlanInputs in;
  for (const auto& f : a.frameworks) {
    auto s = parse_framework_spec(f);
    EXPECT_TRUE(s.has_value()) << f;
    if (s) in.frameworks.push_back(*s);
  }
  if (!a.cc.empty()) {
    in.cc = Version::parse(a.cc);
    in.cc_source = "--cc";
  }
  if (!a.driver.empty()) {
    in.driver = Version::parse(a.driver);
    in.driver_source = "--driver";
  }
  in.os = a.os;
  in.os_source = "--os";
  if (!a.python.empty()) {
    in.python = Version::parse(a.python);
    in.python_source = "--python";
  }
  auto p = make_plan(in, kb());
  EXPECT_TRUE(p.has_value()) << (p ? "" : p.error().message);
  return p ? *p : Plan{};
}

std::string all_conflicts(const Plan& p) {
  std::string s;
  for (const auto& c : p.conflicts) s += c + "\n";
  return s;
}

// --- spec parsing ---------------------------------------------------------------

TEST(PlanSpec, ParsesNamesOperatorsAndVersions) {
  auto s = parse_framework_spec("torch==1.13.1");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->name, "torch");
  EXPECT_EQ(s->op, "==");
  EXPECT_EQ(*s->version, (Version{1, 13, 1}));
  s = parse_framework_spec("tensorflow>=2.10");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->op, ">=");
  s = parse_framework_spec("paddlepaddle-gpu==2.4");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->name, "paddlepaddle-gpu");
  s = parse_framework_spec("PyTorch");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->name, "torch");
  EXPECT_FALSE(s->version);
  EXPECT_FALSE(parse_framework_spec("mxnet"));
  EXPECT_FALSE(parse_framework_spec("torch~2"));
  EXPECT_FALSE(parse_framework_spec("torch==abc"));
}

// --- table-driven: what the best combination is ------------------------------------

struct BestCase {
  const char* name;
  Ask ask;
  std::string framework_version;  // of the first framework
  std::string build;
  std::string cuda;   // option CUDA (major.minor)
  std::string cudnn;  // first framework's cuDNN (prefix match)
  bool needs_toolkit;
  std::string toolkit;     // when needed
  std::string min_driver;  // "" not checked
  bool conflicts;
};

class PlanBest : public ::testing::TestWithParam<BestCase> {};

TEST_P(PlanBest, Chooses) {
  const auto& c = GetParam();
  Plan p = plan_for(c.ask);
  ASSERT_FALSE(p.options.empty()) << all_conflicts(p);
  const auto& b = p.options.front();
  ASSERT_FALSE(b.frameworks.empty());
  EXPECT_EQ(b.frameworks[0].version, c.framework_version);
  EXPECT_EQ(b.frameworks[0].build, c.build);
  EXPECT_EQ(b.cuda.str(), c.cuda);
  EXPECT_TRUE(b.frameworks[0].cudnn.starts_with(c.cudnn)) << b.frameworks[0].cudnn;
  EXPECT_EQ(b.needs_toolkit, c.needs_toolkit);
  if (c.needs_toolkit) {
    EXPECT_EQ(b.toolkit, c.toolkit);
  }
  if (!c.min_driver.empty()) {
    EXPECT_EQ(b.min_driver.str(), c.min_driver);
  }
  EXPECT_EQ(!p.conflicts.empty(), c.conflicts) << all_conflicts(p);
}

INSTANTIATE_TEST_SUITE_P(
    Kb, PlanBest,
    ::testing::Values(
        // torch 1.13: the PyPI default cu117 wheel, cuDNN 8.5 bundled; 11.x minor compat floor.
        BestCase{"torch113",
                 {{"torch==1.13.1"}, "", "", PlanOs::linux, ""},
                 "1.13.1",
                 "cu117",
                 "11.7",
                 "8.5.0.96",
                 false,
                 "",
                 "450.80.02",
                 false},
        // RTX 4090 (8.9): torch 1.13 has only cu116/cu117 -> torch 2.0 with cu118.
        BestCase{"rtx4090_torch113",
                 {{"torch==1.13.1"}, "8.9", "535.104.05", PlanOs::linux, ""},
                 "2.0",
                 "cu118",
                 "11.8",
                 "8.7",
                 false,
                 "",
                 "",
                 true},
        // TensorFlow 2.10 on native Windows: toolkit 11.2 + cuDNN 8.1 installed separately.
        BestCase{"tf210_windows",
                 {{"tensorflow==2.10"}, "8.6", "", PlanOs::windows, ""},
                 "2.10.0",
                 "cuda11.2",
                 "11.2",
                 "8.1",
                 true,
                 "11.2",
                 "452.39",
                 false},
        // TensorFlow >= 2.11 on Windows: no native GPU build -> 2.10.
        BestCase{"tf211_windows",
                 {{"tensorflow>=2.11"}, "", "", PlanOs::windows, ""},
                 "2.10.0",
                 "cuda11.2",
                 "11.2",
                 "8.1",
                 true,
                 "11.2",
                 "",
                 true},
        // ... while under WSL2 the Linux builds apply (newest TF, pip wheels bring CUDA).
        BestCase{"tf_wsl2",
                 {{"tensorflow>=2.11"}, "", "", PlanOs::wsl2, ""},
                 "2.21.0",
                 "cuda12.5",
                 "12.5",
                 "9.3",
                 false,
                 "",
                 "",
                 false},
        // paddlepaddle-gpu 2.4 on Windows: the post117 build (others.json row, unconfirmed).
        BestCase{"paddle24_windows",
                 {{"paddlepaddle-gpu==2.4"}, "8.6", "", PlanOs::windows, ""},
                 "2.4.x",
                 "post117",
                 "11.7",
                 "8.4.1",
                 true,
                 "11.7",
                 "",
                 false},
        // Python 3.12 rules out torch 2.1-2.3 (<= 3.11; 3.12 only experimental) -> torch 2.4.
        BestCase{"python312_torch21",
                 {{"torch==2.1"}, "", "", PlanOs::linux, "3.12"},
                 "2.4",
                 "cu121",
                 "12.1",
                 "9.1",
                 false,
                 "",
                 "",
                 true},
        // Driver 470 runs CUDA 11.x wheels (minor-version compatibility), not CUDA 12.
        BestCase{"driver470_torch",
                 {{"torch"}, "8.6", "470.82.01", PlanOs::linux, ""},
                 "2.7",
                 "cu118",
                 "11.8",
                 "9.1",
                 false,
                 "",
                 "450.80.02",
                 false}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

// --- conflicts in one sentence, with the way out ----------------------------------------

TEST(PlanConflict, Rtx4090WithTorch113NamesTheCudaFloorAndTheWayOut) {
  Plan p = plan_for({{"torch==1.13.1"}, "8.9", "535.104.05", PlanOs::linux, ""});
  ASSERT_EQ(p.conflicts.size(), 1u);
  const auto& c = p.conflicts[0];
  EXPECT_NE(c.find("cu116/cu117"), std::string::npos) << c;
  EXPECT_NE(c.find("compute capability 8.9 needs CUDA >= 11.8"), std::string::npos) << c;
  EXPECT_NE(c.find("-> torch >= 2.0 with cu118"), std::string::npos) << c;
  ASSERT_EQ(p.relaxed_to.size(), 1u);
  EXPECT_EQ(p.relaxed_to[0], "torch>=2.0");
}

TEST(PlanConflict, EveryLimitIsNamedInTheSentence) {
  Plan p = plan_for({{"torch==1.13.1"}, "8.9", "535.104.05", PlanOs::linux, "3.11"});
  ASSERT_EQ(p.conflicts.size(), 1u);
  EXPECT_NE(p.conflicts[0].find("supports Python >=3.7, <=3.10, not 3.11"), std::string::npos)
      << p.conflicts[0];
  EXPECT_NE(p.conflicts[0].find("needs CUDA >= 11.8"), std::string::npos) << p.conflicts[0];
  EXPECT_NE(p.conflicts[0].find("-> torch >= 2.0 with cu118"), std::string::npos);
}

TEST(PlanConflict, TensorflowNewerThan210OnWindowsOffersWsl2) {
  Plan p = plan_for({{"tensorflow>=2.11"}, "", "", PlanOs::windows, ""});
  ASSERT_EQ(p.conflicts.size(), 1u);
  EXPECT_NE(p.conflicts[0].find("no native Windows GPU build"), std::string::npos);
  EXPECT_NE(p.conflicts[0].find("CUDA 11.2 + cuDNN 8.1"), std::string::npos);
  EXPECT_NE(p.conflicts[0].find("WSL2"), std::string::npos);
}

TEST(PlanConflict, DriverTooOldForEveryBuildGivesTheMinimumDriver) {
  // torch 2.8 has only CUDA 12 builds; driver 470 is below the 12.x floor 525.60.13.
  Plan p = plan_for({{"torch==2.8"}, "", "470.82.01", PlanOs::linux, ""});
  ASSERT_EQ(p.conflicts.size(), 1u) << all_conflicts(p);
  EXPECT_NE(p.conflicts[0].find("too old"), std::string::npos) << p.conflicts[0];
  EXPECT_NE(p.conflicts[0].find("install driver >= 525.60.13"), std::string::npos)
      << p.conflicts[0];
  ASSERT_FALSE(p.options.empty());
  EXPECT_EQ(p.options[0].min_driver.str(), "525.60.13");
}

TEST(PlanConflict, JaxHasNoWindowsBuild) {
  Plan p = plan_for({{"jax"}, "", "", PlanOs::windows, ""});
  EXPECT_TRUE(p.options.empty());
  ASSERT_EQ(p.conflicts.size(), 1u);
  EXPECT_NE(p.conflicts[0].find("no native Windows GPU wheels"), std::string::npos)
      << p.conflicts[0];
  EXPECT_NE(p.conflicts[0].find("-> use WSL2"), std::string::npos) << p.conflicts[0];
}

TEST(PlanConflict, UnknownVersionIsAConflictNotAnError) {
  Plan p = plan_for({{"torch==0.4"}, "", "", PlanOs::linux, ""});
  EXPECT_TRUE(p.options.empty());
  ASSERT_EQ(p.conflicts.size(), 1u);
  EXPECT_NE(p.conflicts[0].find("lists no such torch"), std::string::npos);
}

// --- driver 470: what still runs and what does not -----------------------------------------

TEST(PlanDriver, Driver470RunsCuda11WheelsButNotCuda12) {
  struct Row {
    const char* spec;
    bool runs;
  };
  for (const Row& r : {Row{"torch==1.13", true}, Row{"torch==2.3", true}, Row{"torch==2.8", false},
                       Row{"tensorflow==2.14", true}, Row{"tensorflow==2.15", false},
                       Row{"jax", false}, Row{"cupy", true}}) {
    Plan p = plan_for({{r.spec}, "", "470.82.01", PlanOs::linux, ""});
    EXPECT_EQ(p.conflicts.empty(), r.runs) << r.spec << ": " << all_conflicts(p);
    if (r.runs) {
      ASSERT_FALSE(p.options.empty()) << r.spec;
      EXPECT_EQ(p.options[0].cuda.major(), 11) << r.spec;
      // 470 is below the toolkit's own floor for 11.7+: minor-version compatibility.
      EXPECT_LE(p.options[0].min_driver, (Version{470, 82, 1})) << r.spec;
    }
  }
}

// --- several frameworks in one environment --------------------------------------------------

TEST(PlanShared, SeveralFrameworksShareOneCudaMajorAndCudnnMajor) {
  Plan p = plan_for({{"torch", "tensorflow", "onnxruntime-gpu"}, "8.6", "", PlanOs::linux, ""});
  ASSERT_FALSE(p.options.empty()) << all_conflicts(p);
  for (const auto& o : p.options) {
    ASSERT_EQ(o.frameworks.size(), 3u);
    int cuda_major = o.cuda.major();
    for (const auto& f : o.frameworks) {
      auto v = Version::parse(f.cuda);
      ASSERT_TRUE(v) << f.cuda;
      EXPECT_EQ(v->major(), cuda_major) << f.framework << " " << f.build;
      auto cd = Version::parse(f.cudnn);
      ASSERT_TRUE(cd) << f.framework << " " << f.cudnn;
      EXPECT_EQ(cd->major(), o.cudnn_major) << f.framework << " " << f.cudnn;
    }
  }
  // onnxruntime-gpu does not bring its runtime: the option needs a toolkit + cuDNN.
  EXPECT_TRUE(p.options[0].needs_toolkit);
}

TEST(PlanShared, Torch113AndTf210ShareCuda11AndCudnn8) {
  Plan p = plan_for({{"torch==1.13", "tensorflow==2.10"}, "", "", PlanOs::linux, ""});
  ASSERT_FALSE(p.options.empty()) << all_conflicts(p);
  const auto& b = p.options[0];
  EXPECT_EQ(b.cuda.major(), 11);
  EXPECT_EQ(b.cudnn_major, 8);
  EXPECT_TRUE(b.needs_toolkit);  // TF 2.10 needs CUDA 11.2 + cuDNN 8.1 installed
  EXPECT_EQ(b.toolkit, "11.2");
  EXPECT_EQ(b.cudnn, "8.1");
}

TEST(PlanShared, CudnnMajorsThatDifferAreAConflict) {
  // torch 2.4+ wheels carry cuDNN 9; TensorFlow 2.10 needs cuDNN 8 (and CUDA 11.2).
  Plan p = plan_for({{"torch==2.5", "tensorflow==2.10"}, "", "", PlanOs::linux, ""});
  EXPECT_TRUE(p.options.empty());
  ASSERT_EQ(p.conflicts.size(), 1u);
  EXPECT_NE(p.conflicts[0].find("share no CUDA major and cuDNN major"), std::string::npos);
}

// --- confidence, install commands, container ------------------------------------------------

TEST(PlanConfidence, UnconfirmedRowsLowerConfidenceAndSaySo) {
  Plan p = plan_for({{"torch==2.12"}, "", "", PlanOs::linux, ""});
  ASSERT_FALSE(p.options.empty());
  EXPECT_FALSE(p.options[0].confident);
  ASSERT_FALSE(p.options[0].unconfirmed.empty());
  EXPECT_NE(p.options[0].unconfirmed[0].find("pytorch.json torch 2.12"), std::string::npos);
  EXPECT_NE(render_plan_text(p).find("lower confidence"), std::string::npos);
  Plan q = plan_for({{"torch==2.4"}, "", "", PlanOs::linux, ""});
  ASSERT_FALSE(q.options.empty());
  EXPECT_TRUE(q.options[0].confident);
}

TEST(PlanInstall, CommandsCarryTheRightIndex) {
  Plan p = plan_for({{"torch==2.4.1"}, "9.0", "", PlanOs::linux, ""});
  ASSERT_FALSE(p.options.empty());
  EXPECT_EQ(p.options[0].frameworks[0].install.at(0),
            "pip install torch==2.4.1 --index-url https://download.pytorch.org/whl/" +
                p.options[0].frameworks[0].build);
  Plan q = plan_for({{"torch==1.13.1"}, "", "", PlanOs::linux, ""});
  EXPECT_EQ(
      q.options.at(0).frameworks[0].install.at(0),
      "pip install torch==1.13.1+cu117 --extra-index-url https://download.pytorch.org/whl/cu117");
  Plan w = plan_for({{"tensorflow==2.10"}, "", "", PlanOs::windows, ""});
  const auto& cmds = w.options.at(0).frameworks[0].install;
  ASSERT_EQ(cmds.size(), 2u);
  EXPECT_EQ(cmds[0], "conda install -c conda-forge cudatoolkit=11.2 cudnn=8.1");
  EXPECT_EQ(cmds[1], "pip install \"tensorflow==2.10.*\"");
  Plan pd = plan_for({{"paddlepaddle-gpu==2.4"}, "", "", PlanOs::windows, ""});
  EXPECT_EQ(pd.options.at(0).frameworks[0].install.at(0),
            "python -m pip install paddlepaddle-gpu==2.4.2.post117 -f "
            "https://www.paddlepaddle.org.cn/whl/windows/mkl/avx/stable.html");
}

TEST(PlanContainer, ImageTagFollowsNvidiaNaming) {
  Plan p = plan_for({{"torch==1.13.1"}, "", "", PlanOs::linux, ""});
  EXPECT_EQ(p.options.at(0).container_image, "nvidia/cuda:11.7.1-cudnn8-runtime-ubuntu22.04");
  EXPECT_FALSE(p.options.at(0).container_confirmed);
  Plan q = plan_for({{"tensorflow==2.10"}, "", "", PlanOs::linux, ""});
  EXPECT_EQ(q.options.at(0).container_image, "nvidia/cuda:11.2.2-cudnn8-runtime-ubuntu20.04");
}

TEST(PlanInputs, FilledFromFactsOnlyWhereMissing) {
  Facts f;
  GpuFacts g;
  g.name = Fact<std::string>::known("NVIDIA H200", "NVML");
  g.compute_capability = Fact<Version>::known(Version{9, 0}, "NVML");
  f.gpus.push_back(g);
  f.driver.nvml_driver_version = Fact<std::string>::known("580.95.05", "NVML");
  f.host.os = Fact<std::string>::known("linux", "uname");
  f.host.wsl2 = Fact<bool>::known(true, "/proc/version");
  PythonEnv py;
  py.version = Fact<std::string>::known("3.11.7", "pyvenv.cfg");
  f.python.push_back(py);
  PlanInputs in;
  in.driver = Version{535, 104, 5};
  plan_inputs_from_facts(f, false, in);
  EXPECT_EQ(in.cc->str(), "9.0");
  EXPECT_EQ(in.driver->str(), "535.104.5");  // kept
  EXPECT_EQ(in.os, PlanOs::wsl2);
  EXPECT_EQ(in.python->str(), "3.11");
  PlanInputs in2;
  in2.os = PlanOs::windows;
  plan_inputs_from_facts(f, true, in2);
  EXPECT_EQ(in2.os, PlanOs::windows);
  EXPECT_EQ(in2.driver->str(), "580.95.05");
}

TEST(PlanJson, SchemaFields) {
  Plan p = plan_for({{"torch==1.13.1"}, "8.9", "535.104.05", PlanOs::linux, ""});
  auto j = nlohmann::json::parse(render_plan_json(p));
  EXPECT_EQ(j["schema"], "dlenv.plan/1");
  EXPECT_EQ(j["inputs"]["compute_capability"], "8.9");
  EXPECT_EQ(j["conflicts"].size(), 1u);
  EXPECT_EQ(j["relaxed_to"][0], "torch>=2.0");
  ASSERT_TRUE(j["best"].is_object());
  EXPECT_EQ(j["best"]["frameworks"][0]["build"], "cu118");
  EXPECT_EQ(j["best"]["needs_toolkit"], false);
  EXPECT_TRUE(j["best"]["toolkit"].is_null());
  EXPECT_EQ(j["best"]["container_image"]["confirmed"], false);
  EXPECT_TRUE(j["best"]["decisions"].is_array());
  EXPECT_TRUE(j["alternatives"].is_array());
}

// --- goldens of the text form ---------------------------------------------------------------

void check_golden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(DLENV_SOURCE_DIR) + "/tests/golden/plan/" + name;
  const char* update = std::getenv("DLENV_UPDATE_GOLDENS");
  if (update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing golden " << path << " (run with DLENV_UPDATE_GOLDENS=1)";
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), actual) << "golden " << path
                              << " differs (DLENV_UPDATE_GOLDENS=1 rewrites it)";
}

TEST(PlanGolden, Rtx4090Torch113) {
  Plan p = plan_for({{"torch==1.13.1"}, "8.9", "535.104.05", PlanOs::linux, ""});
  check_golden("rtx4090-torch113.txt", render_plan_text(p));
}
TEST(PlanGolden, Tf210Windows) {
  Plan p = plan_for({{"tensorflow==2.10"}, "8.6", "531.14", PlanOs::windows, "3.10"});
  check_golden("tf210-windows.txt", render_plan_text(p));
}
TEST(PlanGolden, Paddle24Windows) {
  Plan p = plan_for({{"paddlepaddle-gpu==2.4"}, "8.6", "", PlanOs::windows, ""});
  check_golden("paddle24-windows.txt", render_plan_text(p));
}
TEST(PlanGolden, Driver470Torch28) {
  Plan p = plan_for({{"torch==2.8"}, "8.6", "470.82.01", PlanOs::linux, ""});
  check_golden("driver470-torch28.txt", render_plan_text(p));
}
TEST(PlanGolden, TorchTensorflowShared) {
  Plan p = plan_for({{"torch", "tensorflow"}, "9.0", "580.95.05", PlanOs::linux, "3.11"});
  check_golden("torch-tensorflow-h200.txt", render_plan_text(p));
}
TEST(PlanGolden, JsonRtx4090Torch113) {
  Plan p = plan_for({{"torch==1.13.1"}, "8.9", "535.104.05", PlanOs::linux, ""});
  check_golden("rtx4090-torch113.json", render_plan_json(p));
}

}  // namespace
}  // namespace dlenv
