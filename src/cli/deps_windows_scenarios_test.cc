// `dlenv deps --os windows` and `dlenv load --os windows` scenarios: a drive
// C: tree of PE images built in-test (pe_test_builder.h), run in-process.
// With DLENV_DEMO_TREE=DIR set, the cuDNN 8 tree is also written to DIR (the
// tree the docs' demo runs against).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "binfmt/pe_test_builder.h"
#include "cli/cli_test_support.h"

namespace dlenv {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testbuild::build_pe;
using testbuild::PeSpec;
using testing::run_cli;

class WinRoot : public testing::SysrootBase<WinRoot> {
 public:
  WinRoot() : SysrootBase("windeps") {}
  WinRoot& pe(const std::string& logical, const PeSpec& spec) {
    fs::create_directories(at(logical).parent_path());
    const auto img = build_pe(spec);
    std::ofstream(at(logical), std::ios::binary)
        .write(reinterpret_cast<const char*>(img.bytes.data()),
               static_cast<std::streamsize>(img.bytes.size()));
    return *this;
  }
  std::string env_file(const std::string& text) const {
    const std::string p = root().string() + ".env";
    std::ofstream(p) << text;
    return p;
  }
};

PeSpec versioned(uint16_t a, uint16_t b, uint16_t c, uint16_t d) {
  PeSpec s;
  s.version_resource = true;
  s.file_version[0] = a, s.file_version[1] = b, s.file_version[2] = c, s.file_version[3] = d;
  return s;
}

// cuDNN 8.9.7 in C:\cudnn\bin on PATH, whose cudnn_cnn_infer64_8.dll comes from an older 8.2
// copy found first; cublasLt64_11.dll only in CUDA v11.8\bin (not on PATH); a 32-bit
// zlibwapi.dll first on PATH; cudnn64_8.dll imports a function cublasLt64_11.dll lacks.
void build_cudnn8_tree(WinRoot& r) {
  PeSpec main = versioned(8, 9, 7, 29);
  main.imports = {{"KERNEL32.dll", {"LoadLibraryExW"}},
                  {"api-ms-win-crt-runtime-l1-1-0.dll", {"_initterm"}},
                  {"cublasLt64_11.dll", {"cublasLtCreate", "cublasLtMatmulAlgoGetIdsX"}}};
  main.export_name = "cudnn64_8.dll";
  main.exports = {{"cudnnGetVersion", ""}, {"cudnnCreate", ""}};
  r.pe("/cudnn/bin/cudnn64_8.dll", main);
  PeSpec sub = versioned(8, 9, 7, 29);
  sub.imports = {{"KERNEL32.dll", {}}};
  for (const char* n :
       {"cudnn_ops_infer64_8.dll", "cudnn_ops_train64_8.dll", "cudnn_cnn_train64_8.dll",
        "cudnn_adv_infer64_8.dll", "cudnn_adv_train64_8.dll", "cudnn_cnn_infer64_8.dll"}) {
    r.pe(std::string("/cudnn/bin/") + n, sub);
  }
  r.pe("/old/cudnn_cnn_infer64_8.dll", versioned(8, 2, 2, 26));
  PeSpec lt = versioned(11, 11, 3, 6);
  lt.export_name = "cublasLt64_11.dll";
  lt.exports = {{"cublasLtCreate", ""}};
  r.pe("/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.8/bin/cublasLt64_11.dll", lt);
  PeSpec z32;
  z32.is64 = false;
  z32.machine = 0x14c;
  r.pe("/tools/x86/zlibwapi.dll", z32);
  r.pe("/zlib/x64/zlibwapi.dll", PeSpec{});
  r.pe("/Windows/System32/nvcuda.dll", PeSpec{});
}

const char* kCudnn8Env =
    "PATH=C:\\old;C:\\cudnn\\bin;C:\\tools\\x86;C:\\zlib\\x64;C:\\Windows\\System32\n"
    "CUDA_PATH=C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\n";

const json& obj(const json& j, const std::string& name) {
  for (const auto& o : j["objects"]) {
    if (o["name"] == name) return o;
  }
  throw std::runtime_error("no object " + name + " in " + j.dump(1));
}

TEST(WindowsDeps, Cudnn8TreeFlags126And193And127AndMixedVersions) {
  WinRoot r;
  build_cudnn8_tree(r);
  if (const char* demo = std::getenv("DLENV_DEMO_TREE"); demo && *demo) {
    fs::create_directories(demo);
    fs::copy(r.root(), demo, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    std::ofstream(std::string(demo) + "/../windows-demo.env") << kCudnn8Env;
  }
  const std::string env = r.env_file(kCudnn8Env);
  auto run = run_cli({"deps", "cudnn64_8.dll", "--root", r.root().string(), "--os", "windows",
                      "--env-file", env, "--json"});
  ASSERT_EQ(run.code, 1) << run.err << run.out;
  const json j = json::parse(run.out);
  EXPECT_EQ(j["os"], "windows");
  EXPECT_EQ(j["objects"][0]["path"], "C:\\cudnn\\bin\\cudnn64_8.dll");
  EXPECT_EQ(j["objects"][0]["rule"], "PATH");
  // 126: cublasLt64_11.dll is only in CUDA_PATH\bin, which is not on PATH.
  const auto& lt = obj(j, "cublasLt64_11.dll");
  EXPECT_EQ(lt["win_error"], 126);
  EXPECT_NE(lt["problem"].get<std::string>().find(
                "a copy exists in C:\\Program Files\\NVIDIA GPU Computing "
                "Toolkit\\CUDA\\v11.8\\bin, which is not on PATH"),
            std::string::npos)
      << lt["problem"];
  // 193: the 32-bit zlibwapi.dll on PATH comes before the 64-bit one.
  const auto& z = obj(j, "zlibwapi.dll");
  EXPECT_EQ(z["win_error"], 193);
  EXPECT_EQ(z["companion"], true);
  EXPECT_EQ(z["class"], "PE32");
  EXPECT_NE(z["problem"].get<std::string>().find("copy exists in C:\\zlib\\x64"),
            std::string::npos);
  // Mixed versions: cudnn_cnn_infer64_8.dll 8.2.2.26 from C:\old, first on PATH.
  const auto& cnn = obj(j, "cudnn_cnn_infer64_8.dll");
  EXPECT_EQ(cnn["path"], "C:\\old\\cudnn_cnn_infer64_8.dll");
  EXPECT_EQ(cnn["file_version"], "8.2.2.26");
  EXPECT_NE(cnn["family_mismatch"].get<std::string>().find("mixed"), std::string::npos);
  EXPECT_EQ(cnn["shadowed"][0]["path"], "C:\\cudnn\\bin\\cudnn_cnn_infer64_8.dll");
  // KnownDLLs and API sets: present without a System32 copy.
  EXPECT_EQ(obj(j, "KERNEL32.dll")["rule"], "KnownDLLs");
  EXPECT_EQ(obj(j, "api-ms-win-crt-runtime-l1-1-0.dll")["rule"], "API set");
  EXPECT_EQ(obj(j, "nvcuda.dll")["rule"], "System32");

  // With cuBLASLt reachable, the missing export is found: 127.
  const std::string env2 = r.env_file(
      "PATH=C:\\cudnn\\bin;C:\\zlib\\x64;C:\\Program Files\\NVIDIA GPU Computing "
      "Toolkit\\CUDA\\v11.8\\bin\n");
  auto run2 = run_cli({"deps", "C:\\cudnn\\bin\\cudnn64_8.dll", "--root", r.root().string(),
                       "--env-file", env2, "--json"});
  ASSERT_EQ(run2.code, 1) << run2.err;
  const json j2 = json::parse(run2.out);
  EXPECT_EQ(j2["os"], "windows");  // chosen automatically for a PE file
  const auto& root = j2["objects"][0];
  EXPECT_EQ(root["win_error"], 127);
  EXPECT_EQ(root["missing_symbols"][0], "cublasLtMatmulAlgoGetIdsX (cublasLt64_11.dll)");
  EXPECT_EQ(j2["errors"], 1);
}

TEST(WindowsDeps, TextTreeShowsRulesShadowedCopiesAndErrorCodes) {
  WinRoot r;
  build_cudnn8_tree(r);
  auto run = run_cli({"deps", "cudnn64_8.dll", "--root", r.root().string(), "--os", "windows",
                      "--env-file", r.env_file(kCudnn8Env)});
  ASSERT_EQ(run.code, 1) << run.err;
  EXPECT_NE(run.out.find("cudnn64_8.dll  => C:\\cudnn\\bin\\cudnn64_8.dll  [PATH]  v8.9.7.29"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("cublasLt64_11.dll  => NOT FOUND (126)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("WRONG BITNESS (193)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("shadows C:\\cudnn\\bin\\cudnn_cnn_infer64_8.dll  (PATH)"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("(KnownDLLs / API sets) KERNEL32.dll, api-ms-win-crt-runtime-l1-1-0.dll"),
            std::string::npos)
      << run.out;
}

TEST(WindowsDeps, PythonExtensionSemanticsDoNotSearchPath) {
  WinRoot r;
  r.pe("/py/python.exe", PeSpec{});
  PeSpec ext;
  ext.imports = {{"cudart64_12.dll", {}}};
  r.pe("/site/pkg/_ext.pyd", ext);
  r.pe("/CUDA/bin/cudart64_12.dll", PeSpec{});
  const std::string env = r.env_file("PATH=C:\\CUDA\\bin\n");
  auto plain = run_cli(
      {"deps", "/site/pkg/_ext.pyd", "--root", r.root().string(), "--env-file", env, "--json"});
  EXPECT_EQ(plain.code, 0) << plain.out;
  auto py = run_cli({"deps", "/site/pkg/_ext.pyd", "--root", r.root().string(), "--env-file", env,
                     "--python-ext", "--app-dir", "C:\\py", "--json"});
  ASSERT_EQ(py.code, 1) << py.out;
  const json j = json::parse(py.out);
  EXPECT_NE(obj(j, "cudart64_12.dll")["problem"].get<std::string>().find("os.add_dll_directory"),
            std::string::npos);
  auto fixed = run_cli({"deps", "/site/pkg/_ext.pyd", "--root", r.root().string(), "--env-file",
                        env, "--python-ext", "--add-dll-dir", "C:\\CUDA\\bin", "--json"});
  EXPECT_EQ(fixed.code, 0) << fixed.out;
}

TEST(WindowsLoadExplain, Error126NamesTheDllTheMissingDependencyAndWhereACopyIs) {
  WinRoot r;
  PeSpec main = versioned(8, 9, 7, 29);
  main.imports = {{"cublasLt64_11.dll", {}}};
  r.pe("/cudnn/bin/cudnn64_8.dll", main);
  r.pe("/CUDA/v11.8/bin/cublasLt64_11.dll", PeSpec{});
  const std::string env = r.env_file("PATH=C:\\cudnn\\bin\nCUDA_PATH_V11_8=C:\\CUDA\\v11.8\n");
  auto run = run_cli({"load", "cudnn64_8.dll", "--root", r.root().string(), "--os", "windows",
                      "--env-file", env, "--error-code", "126"});
  EXPECT_EQ(run.code, 1) << run.err;
  EXPECT_NE(run.out.find("error 126 (ERROR_MOD_NOT_FOUND)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("cudnn64_8.dll was found in C:\\cudnn\\bin (PATH), but: "
                         "cublasLt64_11.dll (needed by cudnn64_8.dll) was not found on the DLL "
                         "search path"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("a copy exists in C:\\CUDA\\v11.8\\bin, which is not on PATH"),
            std::string::npos)
      << run.out;
}

TEST(WindowsLoadExplain, NothingWrongInTheModelSaysSo) {
  WinRoot r;
  r.pe("/p/good.dll", PeSpec{});
  auto run = run_cli({"load", "good.dll", "--root", r.root().string(), "--os", "windows",
                      "--env-file", r.env_file("PATH=C:\\p\n"), "--error-code", "1114", "--json"});
  EXPECT_EQ(run.code, 1);
  const json j = json::parse(run.out);
  EXPECT_EQ(j["model_only"], true);
  ASSERT_GE(j["explanation"].size(), 2u);
  EXPECT_NE(j["explanation"][0].get<std::string>().find("ERROR_DLL_INIT_FAILED"),
            std::string::npos);
  EXPECT_EQ(j["explanation"][1], "good.dll was found in C:\\p (PATH)");
}

TEST(WindowsDeps, UsageErrors) {
  WinRoot r;
  r.file("/p/notpe.dll", "text");
  EXPECT_EQ(run_cli({"deps", "/p/notpe.dll", "--root", r.root().string()}).code, 2);
  EXPECT_EQ(run_cli({"deps", "/p/absent.dll", "--root", r.root().string()}).code, 2);
  EXPECT_EQ(run_cli({"deps", "x.dll", "--root", r.root().string(), "--os", "beos"}).code, 2);
}

}  // namespace
}  // namespace dlenv
