// Windows scenario tests: drive C: trees built by the test (PE DLLs with version
// resources and import tables from pe_test_builder.h, version.json, cudnn_version.h,
// dist-info), an env file with Windows paths and a `reg export` file, run through
// `dlenv doctor --root DIR --os windows --env-file FILE --registry-file FILE.reg` in-process.
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "binfmt/pe_test_builder.h"
#include "cli/cli_test_support.h"
#include "cli/deps.h"
#include "cli/report_schema_test_support.h"
#include "kb/kb.h"
#include "platform/filesystem.h"
#include "probe/loader_model_win.h"
#include "util/strings.h"

namespace dlenv {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::CliRun;
using testing::run_cli;

const std::string kCuda = "/Program Files/NVIDIA GPU Computing Toolkit/CUDA";
const std::string kSys32 = "/Windows/System32";

using testbuild::pe_bytes;

class WinRoot : public testing::SysrootBase<WinRoot> {
 public:
  WinRoot() : SysrootBase("winscenario") {}

  WinRoot& dll(const std::string& path, std::array<uint16_t, 4> version = {1, 0, 0, 0},
               const std::vector<std::string>& imports = {}) {
    return file(path, pe_bytes(version, imports));
  }
  // Driver 528.49 (nvcuda.dll 31.0.15.2849) and the MSVC run time in System32.
  WinRoot& driver(std::array<uint16_t, 4> v = {31, 0, 15, 2849}) {
    dll(kSys32 + "/nvcuda.dll", v);
    return dll(kSys32 + "/nvml.dll", v);
  }
  WinRoot& msvc(std::array<uint16_t, 4> v = {14, 38, 33130, 0}, const std::string& dir = kSys32) {
    dll(dir + "/vcruntime140.dll", v);
    dll(dir + "/vcruntime140_1.dll", v);
    return dll(dir + "/msvcp140.dll", v);
  }
  // CUDA `ver` ("11.8.0") in Program Files; CUDA 13 puts its DLLs in bin\x64.
  std::string toolkit(const std::string& ver) {
    auto v = split(ver, '.');
    std::string root = kCuda + "/v" + v[0] + "." + v[1];
    file(root + "/version.json",
         "{\n  \"cuda\" : {\n    \"name\" : \"CUDA SDK\",\n    \"version\" : \"" + ver +
             "\"\n  },\n  \"cuda_nvcc\" : {\n    \"version\" : \"" + ver + "\"\n  }\n}\n");
    file(root + "/bin/nvcc.exe", pe_bytes({0, 0, 0, 0}, {}, true, false));
    std::string dlls = v[0] == "13" ? root + "/bin/x64" : root + "/bin";
    std::string rt = v[0] == "11" ? "110" : v[0];
    dll(dlls + "/cudart64_" + rt + ".dll");
    dll(dlls + "/cublas64_" + v[0] + ".dll");
    dll(dlls + "/cublasLt64_" + v[0] + ".dll");
    return root;
  }
  // cuDNN 8 DLLs (main + the six sub-libraries, except `skip`) and its header in `dir`.
  WinRoot& cudnn8(const std::string& bin, const std::string& include,
                  std::array<uint16_t, 4> v = {8, 9, 7, 29}, const std::string& skip = "") {
    for (const char* n : {"cudnn64_8.dll", "cudnn_ops_infer64_8.dll", "cudnn_ops_train64_8.dll",
                          "cudnn_cnn_infer64_8.dll", "cudnn_cnn_train64_8.dll",
                          "cudnn_adv_infer64_8.dll", "cudnn_adv_train64_8.dll"}) {
      if (skip == n) continue;
      dll(bin + "/" + n, v,
          std::string(n) == "cudnn64_8.dll"
              ? std::vector<std::string>{"KERNEL32.dll"}
              : std::vector<std::string>{"cublas64_11.dll", "cublasLt64_11.dll", "zlibwapi.dll"});
    }
    return header(include, v[0], v[1], v[2]);
  }
  WinRoot& cudnn9(const std::string& bin, const std::string& include,
                  std::array<uint16_t, 4> v = {9, 1, 0, 70}) {
    for (const char* n :
         {"cudnn64_9.dll", "cudnn_graph64_9.dll", "cudnn_ops64_9.dll", "cudnn_cnn64_9.dll",
          "cudnn_adv64_9.dll", "cudnn_engines_precompiled64_9.dll",
          "cudnn_engines_runtime_compiled64_9.dll", "cudnn_heuristic64_9.dll"}) {
      dll(bin + "/" + n, v);
    }
    return header(include, v[0], v[1], v[2]);
  }
  WinRoot& header(const std::string& include, int major, int minor, int patch) {
    return file(include + "/cudnn_version.h",
                "#ifndef CUDNN_VERSION_H_\n#define CUDNN_MAJOR " + std::to_string(major) +
                    "\n#define CUDNN_MINOR " + std::to_string(minor) +
                    "\n#define CUDNN_PATCHLEVEL " + std::to_string(patch) +
                    "\n#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100)\n#endif\n");
  }
  // A Python installation (python.exe + pythonXY.dll) at `prefix`; returns site-packages.
  std::string python(const std::string& prefix, const std::string& xy = "310") {
    file(prefix + "/python.exe", pe_bytes({3, 10, 11, 0}, {}, true, false));
    dll(prefix + "/python" + xy + ".dll");
    fs::create_directories(at(prefix + "/Lib/site-packages"));
    return prefix + "/Lib/site-packages";
  }
  WinRoot& dist(const std::string& site, const std::string& name, const std::string& version) {
    std::string dir_name = name;
    for (auto& ch : dir_name) {
      if (ch == '-') ch = '_';
    }
    return file(site + "/" + dir_name + "-" + version + ".dist-info/METADATA",
                "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n");
  }
  WinRoot& torch(const std::string& site, const std::string& version, const std::string& cuda) {
    dist(site, "torch", version);
    return file(
        site + "/torch/version.py",
        "__version__ = '" + version + "'\ndebug = False\ncuda = '" + cuda + "'\nhip = None\n");
  }
  WinRoot& env(const std::string& text) { return file("/env.txt", text); }
  // A `reg export` file (UTF-16LE with BOM, CRLF, as reg.exe writes it).
  WinRoot& registry(const std::string& text) {
    std::string body = "Windows Registry Editor Version 5.00\r\n\r\n" + text;
    std::string utf16 = "\xFF\xFE";
    for (char ch : body) {
      if (ch == '\n') {
        utf16 += std::string("\r\0\n\0", 4);
        continue;
      }
      utf16 += ch;
      utf16 += '\0';
    }
    return file("/registry.reg", utf16);
  }
  WinRoot& adapter(const std::string& name) {
    return registry(
        "[HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Control\\Class\\"
        "{4d36e968-e325-11ce-bfc1-08002be10318}\\0000]\n\"DriverDesc\"=\"" +
        name + "\"\n\"ProviderName\"=\"NVIDIA\"\n\"DriverVersion\"=\"31.0.15.2849\"\n");
  }

  // DLENV_WINDOWS_DEMO_DIR=DIR keeps a copy of the tree as DIR/NAME (for demos by hand:
  // dlenv doctor --root DIR/NAME --os windows --env-file DIR/NAME/env.txt ...).
  void keep_as(const std::string& name) const {
    const char* dir = std::getenv("DLENV_WINDOWS_DEMO_DIR");
    if (!dir || !*dir) return;
    fs::path dest = fs::path(dir) / name;
    fs::remove_all(dest);
    fs::create_directories(dest);
    fs::copy(root(), dest, fs::copy_options::recursive);
  }

  CliRun doctor(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> args = {"doctor",  "--root",     root().string(),        "--os",
                                     "windows", "--env-file", at("/env.txt").string()};
    if (fs::exists(at("/registry.reg"))) {
      args.push_back("--registry-file");
      args.push_back(at("/registry.reg").string());
    }
    for (const auto& e : extra) args.push_back(e);
    return run_cli(args);
  }
  json doctor_json() const {
    CliRun r = doctor({"--json"});
    auto j = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
    return j;
  }
};

std::set<std::string> ids(const json& j) {
  std::set<std::string> out;
  for (const auto& f : j["findings"]) out.insert(f["id"].get<std::string>());
  return out;
}

const std::string kPath118 =
    "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\\bin;"
    "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\\libnvvp;";
const std::string kCudaPath118 =
    "CUDA_PATH=C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\n"
    "CUDA_PATH_V11_8=C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\n";

// The healthy machine: driver 528.49, CUDA 11.8 with cuDNN 8.9.7 copied into it (and
// zlibwapi.dll beside it), the MSVC run time, torch 2.1 (cu118) in C:\Python310.
void healthy(WinRoot& s) {
  s.driver().msvc();
  std::string tk = s.toolkit("11.8.0");
  s.cudnn8(tk + "/bin", tk + "/include");
  s.dll(tk + "/bin/zlibwapi.dll");
  std::string site = s.python("/Python310");
  s.torch(site, "2.1.2+cu118", "11.8");
  s.adapter("NVIDIA GeForce RTX 3080");
  // "system32" in lower case, as many PATHs spell it: names match case-insensitively.
  s.env("PATH=" + kPath118 + "C:\\Python310;C:\\Windows\\system32;C:\\Windows\n" + kCudaPath118 +
        "SystemRoot=C:\\Windows\nUSERPROFILE=C:\\Users\\ann\n");
}

TEST(WindowsScenario, HealthyCuda118WithCudnn89InToolkit) {
  WinRoot s;
  healthy(s);
  json j = s.doctor_json();
  for (const auto& f : j["findings"]) {
    EXPECT_NE(f["severity"], "error") << f.dump(2);
    EXPECT_NE(f["severity"], "warning") << f.dump(2);
  }
  ASSERT_EQ(j["toolkits"].size(), 1u) << j["toolkits"].dump(2);
  EXPECT_EQ(j["toolkits"][0]["version"]["value"], "11.8.0");
  EXPECT_EQ(j["toolkits"][0]["root"], kCuda + "/v11.8");
  ASSERT_EQ(j["cudnn"].size(), 1u) << j["cudnn"].dump(2);
  EXPECT_EQ(j["cudnn"][0]["library_version"]["value"], "8.9.7");
  EXPECT_EQ(j["cudnn"][0]["header_version"]["value"], "8.9.7");
  EXPECT_EQ(j["cudnn"][0]["cuda_major"]["value"], 11);
  EXPECT_TRUE(j["cudnn"][0]["sublibraries_missing"].empty());
  EXPECT_EQ(j["windows"]["driver_version"]["value"], "528.49") << j["windows"].dump(2);
  EXPECT_EQ(j["gpus"][0]["name"]["value"], "NVIDIA GeForce RTX 3080");
  EXPECT_EQ(j["gpus"][0]["compute_capability"]["value"], "8.6");

  CliRun md = s.doctor({"--markdown"});
  EXPECT_NE(md.out.find("| Windows | MSVC run time 14.38.33130.0; CUDA on PATH: v11.8; CUDA_PATH "),
            std::string::npos)
      << md.out;
  EXPECT_NE(md.out.find("| Driver | 528.49"), std::string::npos) << md.out;

  s.keep_as("healthy");
  CliRun text = s.doctor({"--no-color"});
  EXPECT_EQ(text.code, 0) << text.out << text.err;
  std::string out = text.out;
  for (size_t p; (p = out.find(s.root().string())) != std::string::npos;) {
    out.replace(p, s.root().string().size(), "<ROOT>");
  }
  fs::path golden = fs::path(DLENV_SOURCE_DIR) / "tests/golden/windows/healthy.txt";
  const char* update = std::getenv("DLENV_UPDATE_GOLDENS");
  if (update && std::string(update) == "1") {
    fs::create_directories(golden.parent_path());
    std::ofstream(golden, std::ios::binary) << out;
  } else {
    std::ifstream in(golden, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(ss.str(), out) << "golden windows/healthy.txt differs (DLENV_UPDATE_GOLDENS=1)";
  }
}

TEST(WindowsScenario, DriverVersionFromFileVersionWithoutNvml) {
  WinRoot s;
  s.dll(kSys32 + "/nvcuda.dll", {32, 0, 15, 6094});  // no nvml.dll at all
  s.env("PATH=C:\\Windows\\System32\n");
  json j = s.doctor_json();
  EXPECT_EQ(j["windows"]["driver_version"]["value"], "560.94") << j["windows"].dump(2);
  EXPECT_FALSE(ids(j).contains("no-nvidia-driver"));

  WinRoot none;
  none.env("PATH=C:\\Windows\\System32\n");
  json k = none.doctor_json();
  EXPECT_TRUE(ids(k).contains("no-nvidia-driver")) << k["findings"].dump(2);
}

TEST(WindowsScenario, Cudnn8WithAMissingSubDll) {
  WinRoot s;
  healthy(s);
  std::string tk = kCuda + "/v11.8";
  fs::remove(s.at(tk + "/bin/cudnn_cnn_infer64_8.dll"));
  json j = s.doctor_json();
  ASSERT_TRUE(ids(j).contains("win-cudnn8-sublibrary-missing")) << j["findings"].dump(2);
  EXPECT_FALSE(ids(j).contains("cudnn-sublibrary-missing"));  // not reported twice
  for (const auto& f : j["findings"]) {
    if (f["id"] != "win-cudnn8-sublibrary-missing") continue;
    EXPECT_NE(f["evidence"][0]["fact"].get<std::string>().find("cudnn_cnn_infer64_8.dll"),
              std::string::npos);
  }
}

TEST(WindowsScenario, Cudnn89WithoutZlibwapi) {
  WinRoot s;
  healthy(s);
  fs::remove(s.at(kCuda + "/v11.8/bin/zlibwapi.dll"));
  // torch\lib's own copy does not help other programs.
  s.dll("/Python310/Lib/site-packages/torch/lib/zlibwapi.dll");
  json j = s.doctor_json();
  ASSERT_TRUE(ids(j).contains("win-zlibwapi-missing")) << j["findings"].dump(2);

  WinRoot older;  // cuDNN 8.2 does not load zlibwapi.dll
  healthy(older);
  fs::remove(older.at(kCuda + "/v11.8/bin/zlibwapi.dll"));
  older.cudnn8(kCuda + "/v11.8/bin", kCuda + "/v11.8/include", {8, 2, 4, 15});
  EXPECT_FALSE(ids(older.doctor_json()).contains("win-zlibwapi-missing"));
}

// NVIDIA's cuDNN 8 install guide on Windows: the archive's DLLs copied into CUDA v11.7's bin
// (on PATH), the "install zlib" step skipped, so zlibwapi.dll is nowhere. cuDNN loads it at
// run time (LoadLibrary, not an import), and a copy's DLLs may carry no usable version
// resource: the header's version decides then.
TEST(WindowsScenario, GuideTreeWithoutZlibwapi) {
  for (const std::array<uint16_t, 4> dll_version :
       {std::array<uint16_t, 4>{8, 5, 0, 96}, std::array<uint16_t, 4>{0, 0, 0, 0}}) {
    WinRoot s;
    s.driver().msvc();
    const std::string tk = s.toolkit("11.7.1");
    for (const char* n : {"cudnn64_8.dll", "cudnn_ops_infer64_8.dll", "cudnn_ops_train64_8.dll",
                          "cudnn_cnn_infer64_8.dll", "cudnn_cnn_train64_8.dll",
                          "cudnn_adv_infer64_8.dll", "cudnn_adv_train64_8.dll"}) {
      s.dll(tk + "/bin/" + n, dll_version, {"KERNEL32.dll"});
    }
    s.header(tk + "/include", 8, 5, 0);
    const std::string bin = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.7\\bin";
    s.env("PATH=" + bin +
          ";C:\\Windows\\system32\nCUDA_PATH=C:\\Program Files\\NVIDIA GPU "
          "Computing Toolkit\\CUDA\\v11.7\nSystemRoot=C:\\Windows\n");
    json j = s.doctor_json();
    int reported = 0;
    for (const auto& f : j["findings"]) reported += f["id"] == "win-zlibwapi-missing";
    EXPECT_EQ(reported, 1) << "DLL version " << dll_version[0] << "." << dll_version[1] << ": "
                           << j["findings"].dump(2);
  }
}

TEST(WindowsScenario, TwoToolkitsPathOrderVsCudaPath) {
  WinRoot s;
  healthy(s);
  s.toolkit("12.4.1");
  const std::string v124 = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4";
  s.env("PATH=" + kPath118 + v124 + "\\bin;C:\\Python310;C:\\Windows\\system32\nCUDA_PATH=" + v124 +
        "\nCUDA_PATH_V12_4=" + v124 +
        "\nCUDA_PATH_V11_8=C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\n");
  json j = s.doctor_json();
  // One failure mode, one id (the catalog's A13): the order is win-cuda-path-confusion's.
  ASSERT_TRUE(ids(j).contains("win-cuda-path-confusion")) << j["findings"].dump(2);
  EXPECT_FALSE(ids(j).contains("cuda-toolkits-disagree"));
  EXPECT_EQ(j["toolkits"].size(), 2u);
  json order;
  for (const auto& f : j["findings"]) {
    if (f["id"] == "win-cuda-path-confusion") order = f;
  }
  EXPECT_NE(order["title"].get<std::string>().find("CUDA 11.8.0 first"), std::string::npos)
      << order.dump(2);
  EXPECT_NE(order.dump().find("nvcc.exe resolves to"), std::string::npos) << order.dump(2);

  // CUDA_PATH first on PATH too: no finding. CUDA_PATH missing: win-cuda-path-confusion.
  s.env("PATH=" + v124 + "\\bin;" + kPath118 + "C:\\Windows\\system32\nCUDA_PATH=" + v124 + "\n");
  EXPECT_FALSE(ids(s.doctor_json()).contains("win-cuda-path-confusion"));
  s.env("PATH=" + v124 + "\\bin;" + kPath118 + "C:\\Windows\\system32\nCUDA_PATH_V12_4=" + v124 +
        "\n");
  json k = s.doctor_json();
  EXPECT_TRUE(ids(k).contains("win-cuda-path-confusion")) << k["findings"].dump(2);
  EXPECT_FALSE(ids(s.doctor_json()).contains("cuda-home-not-set"));
}

TEST(WindowsScenario, StandaloneCudnn9InstallerLayout) {
  WinRoot s;
  s.driver().msvc();
  std::string tk = s.toolkit("12.4.1");
  const std::string cudnn = "/Program Files/NVIDIA/CUDNN/v9.1";
  s.cudnn9(cudnn + "/bin/12.3", cudnn + "/include/12.3");
  std::string site = s.python("/Python311", "311");
  s.dist(site, "ctranslate2", "4.5.0");
  const std::string v124 = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4";
  s.env("PATH=" + v124 +
        "\\bin;C:\\Program Files\\NVIDIA\\CUDNN\\v9.1\\bin\\12.3;C:\\Python311;"
        "C:\\Windows\\system32\nCUDA_PATH=" +
        v124 + "\n");
  json j = s.doctor_json();
  ASSERT_EQ(j["cudnn"].size(), 1u) << j["cudnn"].dump(2);
  EXPECT_EQ(j["cudnn"][0]["library_version"]["value"], "9.1.0");
  EXPECT_EQ(j["cudnn"][0]["header_version"]["value"], "9.1.0");
  EXPECT_EQ(j["cudnn"][0]["cuda_major"]["value"], 12) << j["cudnn"][0].dump(2);
  EXPECT_TRUE(j["cudnn"][0]["sublibraries_missing"].empty()) << j["cudnn"][0].dump(2);
  EXPECT_FALSE(ids(j).contains("win-cudnn9-required-by-ctranslate2")) << j["findings"].dump(2);

  // The installer does not add itself to PATH: ctranslate2 >= 4.5 then finds no cuDNN 9.
  s.env("PATH=" + v124 + "\\bin;C:\\Python311;C:\\Windows\\system32\nCUDA_PATH=" + v124 + "\n");
  json k = s.doctor_json();
  EXPECT_TRUE(ids(k).contains("win-cudnn9-required-by-ctranslate2")) << k["findings"].dump(2);
}

TEST(WindowsScenario, RegistryPathChangedButShellNotRestarted) {
  WinRoot s;
  healthy(s);
  s.cudnn9("/tools/cudnn-9/bin", "/tools/cudnn-9/include");
  s.registry(
      "[HKEY_CURRENT_USER\\Environment]\n\"Path\"=\"%USERPROFILE%\\\\AppData\\\\Local\\\\"
      "Microsoft\\\\WindowsApps;C:\\\\tools\\\\cudnn-9\\\\bin\"\n\n"
      "[HKEY_LOCAL_MACHINE\\SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment]\n"
      "\"Path\"=\"C:\\\\Windows\\\\system32;C:\\\\Windows;C:\\\\Python310\"\n");
  fs::create_directories(s.at("/Users/ann/AppData/Local/Microsoft/WindowsApps"));
  json j = s.doctor_json();
  ASSERT_TRUE(ids(j).contains("win-path-not-reloaded")) << j["findings"].dump(2);
  json f;
  for (const auto& x : j["findings"]) {
    if (x["id"] == "win-path-not-reloaded") f = x;
  }
  std::string dump = f.dump();
  EXPECT_NE(dump.find("C:\\\\tools\\\\cudnn-9\\\\bin"), std::string::npos) << f.dump(2);
  EXPECT_NE(dump.find("WindowsApps"), std::string::npos) << f.dump(2);  // %USERPROFILE% expanded
  EXPECT_EQ(j["windows"]["path_not_in_process"].size(), 2u) << j["windows"].dump(2);

  // Without --registry-file the registry is not read under --root: nothing to compare.
  fs::remove(s.at("/registry.reg"));
  json k = s.doctor_json();
  EXPECT_FALSE(ids(k).contains("win-path-not-reloaded"));
  EXPECT_EQ(k["windows"]["user_path"]["status"], "skipped");
}

TEST(WindowsScenario, TensorflowNeedsCudnn64_8AndCudart64_110) {
  WinRoot s;
  s.driver().msvc();
  s.toolkit("12.4.1");  // CUDA 12 only: cudart64_12.dll, no cudart64_110.dll
  std::string site = s.python("/Python310");
  s.dist(site, "tensorflow-gpu", "2.10.0");
  const std::string v124 = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4";
  s.env("PATH=" + v124 + "\\bin;C:\\Python310;C:\\Windows\\system32\nCUDA_PATH=" + v124 + "\n");
  json j = s.doctor_json();
  EXPECT_TRUE(ids(j).contains("win-tf-cudart-wrong-cuda-major")) << j["findings"].dump(2);
  EXPECT_TRUE(ids(j).contains("win-tf-cudnn64-dll-not-found")) << j["findings"].dump(2);

  // CUDA 11.8 (cudart64_110.dll) with cuDNN 8 on PATH: TF 2.10 finds both.
  WinRoot ok;
  healthy(ok);
  ok.dist("/Python310/Lib/site-packages", "tensorflow-gpu", "2.10.0");
  json k = ok.doctor_json();
  EXPECT_FALSE(ids(k).contains("win-tf-cudart-wrong-cuda-major")) << k["findings"].dump(2);
  EXPECT_FALSE(ids(k).contains("win-tf-cudnn64-dll-not-found")) << k["findings"].dump(2);
}

TEST(WindowsScenario, MsvcRuntimeMissingAndStaleCopyBesidePython) {
  WinRoot s;
  healthy(s);
  fs::remove(s.at(kSys32 + "/vcruntime140_1.dll"));
  json j = s.doctor_json();
  EXPECT_TRUE(ids(j).contains("win-vcredist-not-detected-warning")) << j["findings"].dump(2);
  EXPECT_FALSE(ids(j).contains("win-torch-c10-dll-init-1114"));

  WinRoot stale;  // a conda-style copy beside python.exe, older than System32's
  healthy(stale);
  stale.dll("/Python310/msvcp140.dll", {14, 16, 27012, 6});
  json k = stale.doctor_json();
  EXPECT_TRUE(ids(k).contains("win-torch-c10-dll-init-1114")) << k["findings"].dump(2);
  EXPECT_TRUE(ids(k).contains("win-vcredist-not-detected-warning")) << k["findings"].dump(2);
}

TEST(WindowsScenario, Torch24NeedsLibomp140) {
  WinRoot s;
  healthy(s);
  s.torch("/Python310/Lib/site-packages", "2.4.1+cu118", "11.8");
  json j = s.doctor_json();
  EXPECT_TRUE(ids(j).contains("win-torch-fbgemm-libomp140")) << j["findings"].dump(2);
  s.dll(kSys32 + "/libomp140.x86_64.dll", {5, 0, 0, 0});
  EXPECT_FALSE(ids(s.doctor_json()).contains("win-torch-fbgemm-libomp140"));
}

TEST(WindowsScenario, DuplicateIntelOpenMpInCondaEnv) {
  WinRoot s;
  healthy(s);
  const std::string env = "/Users/ann/miniconda3/envs/dl";
  std::string site = s.python(env);
  s.torch(site, "2.1.2+cu118", "11.8");
  s.dll(env + "/Library/bin/libiomp5md.dll", {5, 0, 2020, 1});
  s.dll(site + "/torch/lib/libiomp5md.dll", {5, 0, 2021, 3});
  s.env("PATH=" + kPath118 + "C:\\Windows\\system32\n" + kCudaPath118 +
        "CONDA_PREFIX=C:\\Users\\ann\\miniconda3\\envs\\dl\n");
  json j = s.doctor_json();
  EXPECT_TRUE(ids(j).contains("win-duplicate-openmp-runtime")) << j["findings"].dump(2);
  fs::remove(s.at(env + "/Library/bin/libiomp5md.dll"));
  EXPECT_FALSE(ids(s.doctor_json()).contains("win-duplicate-openmp-runtime"));
}

TEST(WindowsScenario, InstallPathWithBrackets) {
  WinRoot s;
  healthy(s);
  std::string site = s.python("/AI [test]/venv");
  s.torch(site, "2.1.2+cu118", "11.8");
  s.env("PATH=" + kPath118 + "C:\\AI [test]\\venv;C:\\Windows\\system32\n" + kCudaPath118);
  json j = s.doctor_json();
  EXPECT_TRUE(ids(j).contains("win-install-path-special-chars")) << j["findings"].dump(2);
  EXPECT_FALSE(ids(WinRoot().env("PATH=C:\\Windows").doctor_json())
                   .contains("win-install-path-special-chars"));
}

TEST(WindowsScenario, PaddleFindsNoCudnnOrAnOlderOne) {
  WinRoot s;
  s.driver().msvc();
  s.toolkit("11.8.0");
  std::string site = s.python("/Python310");
  s.dist(site, "paddlepaddle-gpu", "2.5.2.post118");
  s.file(site + "/paddle/version/__init__.py",
         "full_version = '2.5.2'\nwith_gpu = 'ON'\ncuda_version = '11.8'\ncudnn_version = "
         "'8.6.0'\n");
  s.env("PATH=" + kPath118 + "C:\\Python310;C:\\Windows\\system32\n" + kCudaPath118);
  json j = s.doctor_json();
  EXPECT_TRUE(ids(j).contains("win-paddle-third-party-dso")) << j["findings"].dump(2);

  s.cudnn8(kCuda + "/v11.8/bin", kCuda + "/v11.8/include", {8, 4, 1, 50});
  s.dll(kCuda + "/v11.8/bin/zlibwapi.dll");
  json k = s.doctor_json();
  ASSERT_TRUE(ids(k).contains("win-paddle-third-party-dso")) << k["findings"].dump(2);
  for (const auto& f : k["findings"]) {
    if (f["id"] == "win-paddle-third-party-dso") {
      EXPECT_EQ(f["severity"], "warning");
    }
  }
  s.cudnn8(kCuda + "/v11.8/bin", kCuda + "/v11.8/include", {8, 6, 0, 163});
  EXPECT_FALSE(ids(s.doctor_json()).contains("win-paddle-third-party-dso"));
}

TEST(WindowsScenario, BrokenMachineGolden) {
  WinRoot s;
  s.driver().msvc();
  s.toolkit("11.8.0");
  std::string v124 = s.toolkit("12.4.1");
  s.cudnn8(kCuda + "/v11.8/bin", kCuda + "/v11.8/include", {8, 9, 7, 29},
           "cudnn_cnn_infer64_8.dll");
  std::string site = s.python("/Python310");
  s.torch(site, "2.4.1+cu118", "11.8");
  s.adapter("NVIDIA GeForce RTX 4090");
  s.env("PATH=" + kPath118 +
        "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4\\bin;C:\\Python310;"
        "C:\\Windows\\system32\nCUDA_PATH=C:\\Program Files\\NVIDIA GPU Computing "
        "Toolkit\\CUDA\\v12.4\nSystemRoot=C:\\Windows\n");
  s.keep_as("broken");
  CliRun r = s.doctor({"--no-color"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  std::string out = r.out;
  for (size_t p; (p = out.find(s.root().string())) != std::string::npos;) {
    out.replace(p, s.root().string().size(), "<ROOT>");
  }
  for (const char* id : {"win-cudnn8-sublibrary-missing", "win-zlibwapi-missing",
                         "win-cuda-path-confusion", "win-torch-fbgemm-libomp140"}) {
    EXPECT_NE(out.find(id), std::string::npos) << id << "\n" << out;
  }
  fs::path golden = fs::path(DLENV_SOURCE_DIR) / "tests/golden/windows/broken.txt";
  const char* update = std::getenv("DLENV_UPDATE_GOLDENS");
  if (update && std::string(update) == "1") {
    fs::create_directories(golden.parent_path());
    std::ofstream(golden, std::ios::binary) << out;
  } else {
    std::ifstream in(golden, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(ss.str(), out) << "golden windows/broken.txt differs (DLENV_UPDATE_GOLDENS=1)";
  }
}

// dlenv.report/1 is one schema: the same checks (report_schema_test_support.h) hold for a
// Windows report and a Linux one, here from --root trees (on Linux and under Wine); the
// live dlenv.exe's report under Wine gets them in windows_live_win32_test.cc.
TEST(WindowsScenario, JsonReportHasTheSameSchemaAsLinux) {
  WinRoot s;
  healthy(s);
  const json w = s.doctor_json();
  ASSERT_TRUE(w.contains("windows")) << w.dump(1);
  auto problems = testing::report_schema_problems(w);
  EXPECT_TRUE(problems.empty()) << join(problems, "\n");
  WinRoot linux_tree;  // a Linux root with nothing in it: every fact says why it is missing
  linux_tree.file("/etc/os-release", "PRETTY_NAME=\"Debian GNU/Linux 12\"\n");
  CliRun lin = run_cli({"doctor", "--root", linux_tree.root().string(), "--os", "linux", "--json"});
  const json l = json::parse(lin.out, nullptr, false);
  ASSERT_FALSE(l.is_discarded()) << lin.out << lin.err;
  EXPECT_FALSE(l.contains("windows"));
  problems = testing::report_schema_problems(l);
  EXPECT_TRUE(problems.empty()) << join(problems, "\n");
  // The checks do catch a broken report.
  json broken = w;
  broken["summary"]["errors"] = 99;
  broken["host"]["os"] = {{"status", "lost"}, {"source", ""}};
  broken.erase("timing_ms");
  EXPECT_EQ(testing::report_schema_problems(broken).size(), 1u);  // timing_ms missing
  broken["timing_ms"] = json::object();
  EXPECT_EQ(testing::report_schema_problems(broken).size(), 3u)
      << join(testing::report_schema_problems(broken), "\n");
}

// What `dlenv load` asserts after a LoadLibrary that succeeded (Wine stubs a missing
// import where Windows fails with 127): each imported function the chosen DLL does not
// export, naming both DLLs; a delay-loaded import fails only when called, so it is left out.
TEST(WindowsLoad127, ImportErrorsNameTheFunctionAndBothDlls) {
  WinRoot r;
  auto put = [&](const std::string& logical, const testbuild::PeSpec& spec) {
    const auto img = testbuild::build_pe(spec);
    r.file(logical, std::string(reinterpret_cast<const char*>(img.bytes.data()), img.bytes.size()));
  };
  testbuild::PeSpec lt;
  lt.export_name = "cublasLt64_11.dll";
  lt.exports = {{"cublasLtCreate", ""}};
  put("/cudnn/bin/cublasLt64_11.dll", lt);
  testbuild::PeSpec ops;
  ops.imports = {{"cublasLt64_11.dll", {"cublasLtCreate", "cublasLtMatmulAlgoGetHeuristic"}}};
  ops.delay_imports = {{"cublasLt64_11.dll", {"cublasLtLoggerSetFile"}}};
  put("/cudnn/bin/cudnn_ops_infer64_8.dll", ops);
  auto fs = make_rooted_filesystem(r.root().string());
  auto kb = Kb::load_embedded();
  ASSERT_TRUE(kb);
  WindowsLoaderSettings ws;
  ws.path = {"/cudnn/bin"};
  ws.companions = false;
  auto tree = model_windows_load(*fs, **kb, "cudnn_ops_infer64_8.dll", ws);
  ASSERT_TRUE(tree) << tree.error().message;
  EXPECT_EQ(windows_import_errors(*tree),
            (std::vector<std::string>{
                "on Windows this load fails with error 127: cudnn_ops_infer64_8.dll imports "
                "cublasLtMatmulAlgoGetHeuristic from cublasLt64_11.dll, which does not export "
                "it"}));
  lt.exports.push_back({"cublasLtMatmulAlgoGetHeuristic", ""});  // the newer cuBLASLt
  put("/cudnn/bin/cublasLt64_11.dll", lt);
  auto fixed = model_windows_load(*fs, **kb, "cudnn_ops_infer64_8.dll", ws);
  ASSERT_TRUE(fixed);
  EXPECT_TRUE(windows_import_errors(*fixed).empty());
}

// CLI11 reads "/x" as a Windows-style option on Windows unless told not to (cli.cc turns
// that off): a POSIX-style path as the command's argument and as an option's value must
// reach the command, in dlenv.exe as on Linux. Under Wine the root is given as "/work/...",
// a path on the current drive.
TEST(WindowsCli, SlashPathsAreArgumentsNotOptions) {
  WinRoot r;
  r.dll("/p/good.dll", {1, 2, 3, 4});
  std::string root = r.root().generic_string();
  if (root.size() > 2 && root[1] == ':') {
    if (fs::current_path().root_name() != r.root().root_name()) {
      GTEST_SKIP() << "the test folder is not on the current drive: " << root;
    }
    root = root.substr(2);
  }
  ASSERT_EQ(root.front(), '/') << root;
  CliRun run = run_cli({"deps", "/p/good.dll", "--root", root, "--os", "windows", "--json"});
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  const json j = json::parse(run.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << run.out;
  EXPECT_NE(run.out.find("good.dll"), std::string::npos) << run.out;
  // The same with the "=" form and the option first.
  CliRun eq = run_cli({"deps", "--root=" + root, "--os", "windows", "/p/good.dll"});
  EXPECT_EQ(eq.code, 0) << eq.out << eq.err;
  // A slash word that is no path of the tree is still an argument: "not found", not "unknown
  // option".
  CliRun absent = run_cli({"deps", "/p/absent.dll", "--root", root, "--os", "windows"});
  EXPECT_EQ(absent.code, 2);
  EXPECT_EQ((absent.out + absent.err).find("not expected"), std::string::npos) << absent.err;
}

}  // namespace
}  // namespace dlenv
