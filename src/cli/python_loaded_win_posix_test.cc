// --deep for a Windows interpreter, end to end on a C: tree built here: the facts of
// `doctor --root DIR --os windows` (torch 2.5.1+cu124 with its own DLLs in torch\lib,
// the nvidia-cudnn-cu12 wheel, CUDA 12.4, the driver's nvcuda.dll, a conda env), a fake
// interpreter (a shell script, hence POSIX only) printing what the probe script's
// Windows branch prints (EnumProcessModules paths in mixed case and separators), then
// the rules and the text and JSON reports. --deep itself never runs an interpreter of a
// --root tree, so the test swaps the fake one in for the probe run only.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "binfmt/pe_test_builder.h"
#include "cli/cli_test_support.h"
#include "cli/setup.h"
#include "platform/filesystem.h"
#include "probe/probe.h"
#include "probe/process_maps.h"
#include "report/python_loaded.h"
#include "report/report.h"
#include "rules/rules.h"

namespace dlenv {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kSite = "/Python311/Lib/site-packages";
const std::string kCuda = "/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v12.4";

std::string pe(std::array<uint16_t, 4> v, bool dll = true) {
  return testbuild::pe_bytes(v, {}, true, dll);
}

class Tree : public testing::SysrootBase<Tree> {
 public:
  Tree() : SysrootBase("deepwin") {}
  Tree& dll(const std::string& path, std::array<uint16_t, 4> v = {0, 0, 0, 0}) {
    return file(path, pe(v));
  }
  Tree& wheel(const std::string& name, const std::string& version,
              const std::vector<std::string>& files) {
    std::string dir = kSite + "/" + name + "-" + version + ".dist-info";
    std::string dist = name;
    for (auto& c : dist) c = c == '_' ? '-' : c;
    std::string record;
    for (const auto& f : files) record += f + ",sha256=x,1\n";
    file(dir + "/METADATA",
         "Metadata-Version: 2.1\nName: " + dist + "\nVersion: " + version + "\n");
    return file(dir + "/RECORD", record);
  }
};

// The fake interpreter: prints the probe script's JSON (`body`), module paths as
// GetModuleFileNameW gave them (JSON-escaped backslashes).
std::string fake_python(const std::string& body) {
  return "#!/bin/sh\necho 'import noise'\ncat <<'END'\nDLENV-DEEP-BEGIN\n" + body +
         "\nDLENV-DEEP-END\nEND\n";
}

const char* kTorchOk =
    R"({"python": "3.11.9", "frameworks": [{"name": "torch", "imported": true, "version": "2.5.1+cu124", "gpu_available": true, "device_count": 1, "cuda": "12.4", "cudnn": "90100", "cudnn_compiled": "9.1.0", "gpu_op": "ok"}], "loaded": [
 "C:\\Python311\\Lib\\site-packages\\torch\\lib\\cudnn64_9.dll",
 "C:\\PYTHON311\\LIB\\SITE-PACKAGES\\NVIDIA\\CUDNN\\BIN\\CUDNN_OPS64_9.DLL",
 "C:/Python311/Lib/site-packages/torch/lib/cublasLt64_12.dll",
 "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4\\bin\\cudart64_12.dll",
 "\\\\?\\C:\\Windows\\System32\\nvcuda.dll",
 "C:\\Miniconda3\\Library\\bin\\zlibwapi.dll"]})";

struct DeepRun {
  std::vector<Finding> findings;
  std::string text;
  json report;
  std::vector<LoadedLibraryView> view;
};

DeepRun deep_doctor(Tree& t, const std::string& probe_output) {
  t.file("/env.txt",
         "PATH=C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4\\bin;"
         "C:\\Python311;C:\\Windows\\system32\nCUDA_PATH=C:\\Program Files\\NVIDIA GPU Computing "
         "Toolkit\\CUDA\\v12.4\n");
  auto view = open_system_view(t.root().string(), "windows", t.at("/env.txt").string(), "");
  EXPECT_TRUE(view) << view.error().message;
  if (!view) return {};
  ProbeContext ctx{*view->fs, *view->env, *view->kb, view->os, false, view->env_source};
  Facts facts = collect_facts(ctx, {});
  PythonEnv* env = nullptr;
  std::string found;
  for (auto& e : facts.python) {
    if (!e.interpreter.ok()) continue;
    found += *e.interpreter + "\n";
    if (*e.interpreter == "C:\\Python311/python.exe") env = &e;  // PATH entry + file name
  }
  EXPECT_TRUE(env) << "no environment for C:\\Python311/python.exe (PATH) among:\n" << found;
  if (!env) return {};
  // The probe run: the fake interpreter in place of the tree's python.exe.
  const fs::path script = t.root() / "fake-python";
  std::ofstream(script) << fake_python(probe_output);
  fs::permissions(script, fs::perms::owner_all);
  std::vector<PythonEnv> one = {*env};
  one[0].interpreter = Fact<std::string>::known(script.string(), "test");
  probe_python_deep(ctx.fs, one, std::chrono::seconds(20));
  env->deep = one[0].deep;
  auto findings = run_rules(facts, *view->kb, Os::windows);
  DeepRun r;
  r.text = render_text(facts, findings, {});
  r.report = json::parse(render_json(facts, findings));
  r.view = loaded_vs_installed(facts, *env);
  r.findings = findings;
  return r;
}

// torch 2.5.1+cu124 with its own DLLs in torch\lib, the nvidia-cudnn-cu12 9.3 wheel,
// CUDA 12.4, the driver, a conda env.
void torch_tree(Tree& t) {
  t.file("/Python311/python.exe", pe({3, 11, 9, 0}, false)).dll("/Python311/python311.dll");
  t.wheel("torch", "2.5.1+cu124",
          {"torch/version.py", "torch/lib/cudnn64_9.dll", "torch/lib/cudnn_ops64_9.dll",
           "torch/lib/cublasLt64_12.dll", "torch/lib/cublas64_12.dll"});
  t.file(kSite + "/torch/version.py",
         "__version__ = '2.5.1+cu124'\ndebug = False\ncuda = '12.4'\nhip = None\n");
  t.dll(kSite + "/torch/lib/cudnn64_9.dll", {9, 1, 0, 70})
      .dll(kSite + "/torch/lib/cudnn_ops64_9.dll", {9, 1, 0, 70})
      .dll(kSite + "/torch/lib/cublasLt64_12.dll", {12, 4, 5, 8})
      .dll(kSite + "/torch/lib/cublas64_12.dll", {12, 4, 5, 8});
  t.wheel("nvidia_cudnn_cu12", "9.3.0.75",
          {"nvidia/cudnn/bin/cudnn64_9.dll", "nvidia/cudnn/bin/cudnn_ops64_9.dll"});
  t.dll(kSite + "/nvidia/cudnn/bin/cudnn64_9.dll", {9, 3, 0, 75})
      .dll(kSite + "/nvidia/cudnn/bin/cudnn_ops64_9.dll", {9, 3, 0, 75});
  t.file(kCuda + "/version.json",
         "{\"cuda\": {\"name\": \"CUDA SDK\", \"version\": \"12.4.1\"}, \"cuda_cudart\": "
         "{\"version\": \"12.4.127\"}}\n")
      .file(kCuda + "/bin/nvcc.exe", pe({0, 0, 0, 0}, false))
      .dll(kCuda + "/bin/cudart64_12.dll")
      .dll("/Windows/System32/nvcuda.dll", {31, 0, 15, 5222})
      .file("/Miniconda3/conda-meta/history")
      .dll("/Miniconda3/Library/bin/zlibwapi.dll");
}

TEST(PythonDeepWindows, LoadedDllsNextToInstalledCopiesWithTheirOrigins) {
  Tree t;
  torch_tree(t);
  DeepRun r = deep_doctor(t, kTorchOk);
  ASSERT_EQ(r.view.size(), 5u) << r.text;

  // cuDNN: torch\lib's 9.1 was loaded while the wheel has 9.3, and its sub-library came
  // from the wheel's folder (upper case, backslashes: still the wheel's).
  EXPECT_EQ(r.view[0].name, "cudnn64_9.dll");
  EXPECT_EQ(r.view[0].version, "9.1.0.70");
  EXPECT_EQ(r.view[0].origin, "pip wheel: torch 2.5.1+cu124 in C:\\Python311\\Lib\\site-packages");
  ASSERT_GE(r.view[0].installed.size(), 2u) << r.text;
  EXPECT_NE(r.view[0].warning.find("older than the 9.3.0.75 at "), std::string::npos)
      << r.view[0].warning;
  EXPECT_NE(r.view[0].warning.find("CUDNN_OPS64_9.DLL came from "
                                   "C:\\PYTHON311\\LIB\\SITE-PACKAGES\\NVIDIA\\CUDNN\\BIN, "
                                   "not from beside it (mixed copies)"),
            std::string::npos)
      << r.view[0].warning;
  // cuBLASLt from torch\lib, forward slashes as given.
  EXPECT_EQ(r.view[1].name, "cublasLt64_12.dll");
  EXPECT_EQ(r.view[1].version, "12.4.5.8");
  EXPECT_EQ(r.view[1].origin, "pip wheel: torch 2.5.1+cu124 in C:/Python311/Lib/site-packages");
  EXPECT_EQ(r.view[1].warning, "");
  // cudart from the toolkit (version.json's cuda_cudart), installed there.
  EXPECT_EQ(r.view[2].name, "cudart64_12.dll");
  EXPECT_EQ(r.view[2].version, "12.4.127");
  EXPECT_EQ(r.view[2].origin,
            "CUDA toolkit: C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4 (CUDA "
            "12.4.1)");
  // The driver from System32, zlibwapi from the conda env's Library\bin.
  EXPECT_EQ(r.view[3].name, "nvcuda.dll");
  EXPECT_EQ(r.view[3].origin, "driver: C:\\Windows\\System32");
  EXPECT_EQ(r.view[4].name, "zlibwapi.dll");
  EXPECT_EQ(r.view[4].origin, "conda env: C:\\Miniconda3");

  // The text report: one block per library, its origin, then the installed copies.
  EXPECT_NE(r.text.find("loaded cudnn64_9.dll"), std::string::npos) << r.text;
  const auto block = r.text.find("    loaded cudnn64_9.dll  ");
  ASSERT_NE(block, std::string::npos) << r.text;
  const auto from = r.text.find("\n    from  ", block);
  ASSERT_NE(from, std::string::npos) << r.text;
  EXPECT_EQ(r.text.substr(from, r.text.find('\n', from + 1) - from),
            "\n    from                      pip wheel: torch 2.5.1+cu124 in "
            "C:\\Python311\\Lib\\site-packages")
      << r.text;
  EXPECT_NE(r.text.find("! older than the 9.3.0.75"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("loaded nvcuda.dll"), std::string::npos) << r.text;
  // The JSON report: the same view under python[].deep.loaded_vs_installed.
  const json* env = nullptr;
  for (const auto& e : r.report["python"]) {
    if (e["interpreter"].value("value", "") == "C:\\Python311/python.exe") env = &e;
  }
  ASSERT_TRUE(env) << r.report["python"].dump(2);
  const json& v = (*env)["deep"]["loaded_vs_installed"];
  ASSERT_EQ(v.size(), 5u) << v.dump(2);
  EXPECT_EQ(v[0]["name"], "cudnn64_9.dll");
  EXPECT_EQ(v[0]["loaded"], "C:\\Python311\\Lib\\site-packages\\torch\\lib\\cudnn64_9.dll");
  EXPECT_EQ(v[0]["version"], "9.1.0.70");
  EXPECT_EQ(v[0]["origin"], "pip wheel: torch 2.5.1+cu124 in C:\\Python311\\Lib\\site-packages");
  EXPECT_EQ(v[0]["warning"], r.view[0].warning);
  EXPECT_EQ(v[2]["origin"], r.view[2].origin);
  EXPECT_EQ(v[4]["name"], "zlibwapi.dll");
  for (const auto& f : r.findings) {
    EXPECT_NE(f.id, "torch-cudnn-runtime-older-than-build")
        << "torch reports the cuDNN it was built with";
  }
}

// torch reports cuDNN 9.1 while built against 9.3: the copy beside python.exe came first.
// The finding names the module list's file and moves that copy away (PowerShell).
TEST(PythonDeepWindows, TorchLoadingAnOlderCudnnNamesTheForeignDll) {
  Tree t;
  torch_tree(t);
  t.dll("/Python311/cudnn64_9.dll", {9, 1, 0, 70});
  DeepRun r = deep_doctor(
      t,
      R"({"python": "3.11.9", "frameworks": [{"name": "torch", "imported": true, "version": "2.5.1+cu124", "gpu_available": true, "device_count": 1, "cuda": "12.4", "cudnn": "90100", "cudnn_compiled": "9.3.0", "gpu_op": "ok"}], "loaded": ["C:\\Python311\\cudnn64_9.dll", "C:\\Python311\\Lib\\site-packages\\torch\\lib\\cudnn_ops64_9.dll"]})");
  const Finding* x = nullptr;
  for (const auto& f : r.findings) {
    if (f.id == "torch-cudnn-runtime-older-than-build") x = &f;
  }
  ASSERT_TRUE(x) << r.text;
  bool named = false;
  for (const auto& e : x->evidence) {
    named |= e.fact == "loaded C:\\Python311\\cudnn64_9.dll" &&
             e.source == "the module list of C:\\Python311/python.exe";
  }
  EXPECT_TRUE(named) << r.text;
  ASSERT_FALSE(x->fix.empty());
  EXPECT_EQ(x->fix[0].command,
            "Rename-Item -LiteralPath 'C:\\Python311\\cudnn64_9.dll' 'cudnn64_9.dll.bak'");
  // The view: the copy beside python.exe, its sub-library from torch\lib (mixed).
  ASSERT_FALSE(r.view.empty());
  EXPECT_EQ(r.view[0].origin, "other: C:\\Python311");
  EXPECT_NE(r.view[0].warning.find("cudnn_ops64_9.dll came from "
                                   "C:\\Python311\\Lib\\site-packages\\torch\\lib"),
            std::string::npos)
      << r.view[0].warning;
}

}  // namespace
}  // namespace dlenv

namespace dlenv {
namespace {

// Facts built by hand (no classification): the view names the DLL from its path, takes the
// wheel copy's version by folder (case and separators aside), and lists no Linux copy.
TEST(PythonDeepWindows, ViewFromPathsAloneListsOnlyWindowsCopies) {
  Facts f;
  CudnnCopy linux_copy;
  linux_copy.dir = "/usr/lib/x86_64-linux-gnu";
  linux_copy.library = "/usr/lib/x86_64-linux-gnu/libcudnn.so.9";
  linux_copy.major = 9;
  f.cudnn.push_back(linux_copy);
  PythonEnv e;
  const std::string wheel = "C:\\v\\Lib\\site-packages\\nvidia\\cudnn\\bin\\cudnn64_9.dll";
  e.cuda_libs.push_back({"cudnn", 9, wheel, "9.3.0.75", "nvidia-cudnn-cu12", ""});
  e.deep = DeepProbe{};
  e.deep->loaded_libraries = {"c:/V/LIB/site-packages/nvidia/cudnn/bin/CUDNN64_9.DLL"};
  auto v = loaded_vs_installed(f, e);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].name, "CUDNN64_9.DLL");
  EXPECT_EQ(v[0].version, "9.3.0.75");
  EXPECT_EQ(v[0].origin, "") << "not classified: facts built by hand";
  EXPECT_EQ(v[0].installed, std::vector<std::string>{wheel + " (nvidia-cudnn-cu12 9.3.0.75)"});
  EXPECT_EQ(v[0].warning, "");
}

}  // namespace
}  // namespace dlenv

namespace dlenv {
namespace {

// A module path in upper case is still a pip wheel's (site-packages matched in any case).
TEST(PythonDeepWindows, UpperCaseModulePathIsStillAWheel) {
  auto fs = make_real_filesystem();
  auto libs =
      nvidia_modules(*fs, {"C:\\PYTHON311\\LIB\\SITE-PACKAGES\\NVIDIA\\CUDNN\\BIN\\CUDNN64_9.DLL"});
  ASSERT_EQ(libs.size(), 1u);
  EXPECT_EQ(libs[0].library, "cudnn");
  EXPECT_EQ(libs[0].origin, "pip wheel");
  EXPECT_EQ(libs[0].origin_detail, "package NVIDIA in C:\\PYTHON311\\LIB\\SITE-PACKAGES");
}

}  // namespace
}  // namespace dlenv
