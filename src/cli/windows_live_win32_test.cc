// dlenv doctor on a live Windows system (no --root): the real registry's HKCU\Environment,
// files under C:\, the process environment. They change the machine, so under Wine they
// run in a prefix of their own (tests/CMakeLists.txt: cli_test_live, WindowsLive.*) and
// put back what they change. On Windows they need a throw-away machine or account.
#include <gtest/gtest.h>
#include <windows.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_test_support.h"
#include "cli/report_schema_test_support.h"
#include "platform/registry.h"
#include "platform/win32_text.h"
#include "util/strings.h"

namespace dlenv {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::CliRun;
using testing::run_cli;

// A process environment variable, put back as it was at the end of the test.
class EnvVar {
 public:
  explicit EnvVar(std::wstring name) : name_(std::move(name)) {
    DWORD n = ::GetEnvironmentVariableW(name_.c_str(), nullptr, 0);
    if (n > 0) {
      std::wstring v(n, L'\0');
      DWORD got = ::GetEnvironmentVariableW(name_.c_str(), v.data(), n);
      v.resize(got);
      old_ = v;
    }
  }
  ~EnvVar() { ::SetEnvironmentVariableW(name_.c_str(), old_ ? old_->c_str() : nullptr); }
  EnvVar(const EnvVar&) = delete;
  EnvVar& operator=(const EnvVar&) = delete;
  void set(const std::string& utf8) {
    ::SetEnvironmentVariableW(name_.c_str(), win32::widen(utf8).c_str());
  }

 private:
  std::wstring name_;
  std::optional<std::wstring> old_;
};

// HKCU\Environment's Path (type and bytes), put back as it was at the end of the test.
class UserPath {
 public:
  UserPath() {
    EXPECT_EQ(::RegCreateKeyExW(HKEY_CURRENT_USER, L"Environment", 0, nullptr, 0,
                                KEY_QUERY_VALUE | KEY_SET_VALUE, nullptr, &key_, nullptr),
              ERROR_SUCCESS);
    DWORD size = 0;
    if (::RegQueryValueExW(key_, L"Path", nullptr, &type_, nullptr, &size) == ERROR_SUCCESS) {
      old_.emplace(size, 0);
      ::RegQueryValueExW(key_, L"Path", nullptr, &type_, old_->data(), &size);
      old_->resize(size);
    }
  }
  ~UserPath() {
    if (old_) {
      ::RegSetValueExW(key_, L"Path", 0, type_, old_->data(), static_cast<DWORD>(old_->size()));
    } else {
      ::RegDeleteValueW(key_, L"Path");
    }
    ::RegCloseKey(key_);
  }
  UserPath(const UserPath&) = delete;
  UserPath& operator=(const UserPath&) = delete;
  void set(const std::wstring& v, DWORD type) {
    ASSERT_EQ(::RegSetValueExW(key_, L"Path", 0, type, reinterpret_cast<const BYTE*>(v.c_str()),
                               static_cast<DWORD>((v.size() + 1) * sizeof(wchar_t))),
              ERROR_SUCCESS);
  }

 private:
  HKEY key_ = nullptr;
  DWORD type_ = 0;
  std::optional<std::vector<BYTE>> old_;
};

// A directory tree created by the test and removed at its end.
class Made {
 public:
  explicit Made(fs::path top) : top_(std::move(top)) {
    std::error_code ec;
    fs::remove_all(top_, ec);
  }
  ~Made() {
    std::error_code ec;
    fs::remove_all(top_, ec);
  }
  Made(const Made&) = delete;
  Made& operator=(const Made&) = delete;

 private:
  fs::path top_;
};

json doctor_json() {
  CliRun r = run_cli({"doctor", "--json", "--no-color"});
  json j = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
  return j;
}

const json* finding(const json& j, const std::string& id) {
  if (!j.contains("findings")) return nullptr;
  for (const auto& f : j["findings"]) {
    if (f["id"] == id) return &f;
  }
  return nullptr;
}

std::string evidence_text(const json& f) {
  std::string out;
  for (const auto& e : f["evidence"]) {
    out += e["fact"].get<std::string>() + "  (" + e["source"].get<std::string>() + ")\n";
  }
  return out;
}

std::string fix_text(const json& f) {
  std::string out;
  for (const auto& x : f["fix"]) {
    out += x["text"].get<std::string>() + "\n    [" + x["shell"].get<std::string>() + "] " +
           x["command"].get<std::string>() + "\n";
  }
  return out;
}

// The machine part of the PATH a new shell gets: HKLM's Path, expanded.
std::string machine_path_expanded() {
  auto v =
      live_registry()(RegistryHive::local_machine,
                      "SYSTEM\\CurrentControlSet\\Control\\Session Manager\\Environment", "Path")
          .value_or("");
  std::wstring w = win32::widen(v);
  std::wstring buf(32768, L'\0');
  DWORD n = ::ExpandEnvironmentStringsW(w.c_str(), buf.data(), static_cast<DWORD>(buf.size()));
  if (n == 0 || n > buf.size()) return v;
  buf.resize(n - 1);
  return win32::narrow(buf);
}

// HKCU\Environment's Path as REG_EXPAND_SZ and REG_SZ, with a non-ASCII folder: the
// registry reader and the Windows probe read it back (UTF-8), and doctor, without
// --registry-file, reports that this process's PATH lacks the folder (a shell that has not
// been restarted), and stops reporting it once the process PATH has it.
TEST(WindowsLive, RegistryPathReadLiveAndNotReloadedReported) {
  const std::wstring dir_w = L"C:\\dlenv-live\\J\u00fcrgen\\\u6df1\u5ea6";
  const std::string dir = "C:\\dlenv-live\\J\xc3\xbcrgen\\\xe6\xb7\xb1\xe5\xba\xa6";
  Made made(L"C:\\dlenv-live");
  fs::create_directories(fs::path(dir_w));
  UserPath user_path;
  EnvVar path(L"PATH");
  path.set("C:\\windows\\system32;C:\\windows");

  const RegistryReader reg = live_registry();
  user_path.set(L"%SystemRoot%\\system32;" + dir_w, REG_EXPAND_SZ);
  EXPECT_EQ(reg(RegistryHive::current_user, "Environment", "Path"),
            "%SystemRoot%\\system32;" + dir);  // unexpanded, UTF-8

  json j = doctor_json();
  auto problems = testing::report_schema_problems(j);
  EXPECT_TRUE(problems.empty()) << join(problems, "\n");
  ASSERT_TRUE(j.contains("windows"));
  const json* f = finding(j, "win-path-not-reloaded");
  ASSERT_NE(f, nullptr) << j["windows"].dump(1);
  EXPECT_NE(evidence_text(*f).find(dir + " is in the registry's Path, not in this process's PATH"),
            std::string::npos)
      << evidence_text(*f);
  EXPECT_NE(evidence_text(*f).find("HKCU\\Environment Path (registry)"), std::string::npos)
      << evidence_text(*f);

  user_path.set(dir_w + L";C:\\windows", REG_SZ);
  EXPECT_EQ(reg(RegistryHive::current_user, "Environment", "Path"), dir + ";C:\\windows");
  j = doctor_json();
  f = finding(j, "win-path-not-reloaded");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(evidence_text(*f).find(dir + " is in the registry's Path"), std::string::npos);

  // A new shell: the PATH is reloaded (the machine part, then the user part).
  path.set(machine_path_expanded() + ";" + dir + ";C:\\windows");
  j = doctor_json();
  EXPECT_EQ(finding(j, "win-path-not-reloaded"), nullptr) << j["findings"].dump(1);
}

const fs::path kCuda = L"C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA";

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}
void copy_fixture(const std::string& fixture, const fs::path& to) {
  fs::create_directories(to.parent_path());
  fs::copy_file(fs::path(DLENV_WIN_FIXTURES) / fixture, to, fs::copy_options::overwrite_existing);
}
void toolkit_version(const fs::path& root, const std::string& v) {
  write(root / "version.json",
        "{\n  \"cuda\" : {\n    \"name\" : \"CUDA SDK\",\n"
        "    \"version\" : \"" +
            v + "\"\n  }\n}\n");
}

// The seed scenario of the Windows issue, live: CUDA 11.7 with cuDNN 8.5 copied into it,
// but without cublasLt64_11.dll, which cudnn64_8.dll imports; CUDA 12.0 beside it, whose bin
// comes first on PATH while CUDA_PATH names 11.7. dlenv.exe doctor names the missing DLL
// and the DLL that needs it, and gives the exact PATH edit, for this cmd.exe window too.
TEST(WindowsLive, SeedScenarioCuda117Cudnn85) {
  Made made(L"C:\\Program Files\\NVIDIA GPU Computing Toolkit");
  const fs::path v117 = kCuda / "v11.7";
  const fs::path v120 = kCuda / "v12.0";
  // Harmless DLLs stand in for the CUDA ones; cudnn64_8.dll is the mingw-built fixture that
  // really imports cublasLt64_11.dll (missing-dep/cudnn64_8.dll).
  const std::string any_dll = "missing-export/cublasLt64_11.dll";
  toolkit_version(v117, "11.7.1");
  copy_fixture(any_dll, v117 / "bin" / "cudart64_110.dll");
  copy_fixture(any_dll, v117 / "bin" / "cublas64_11.dll");
  copy_fixture("missing-dep/cudnn64_8.dll", v117 / "bin" / "cudnn64_8.dll");
  for (const char* sub :
       {"cudnn_ops_infer64_8.dll", "cudnn_ops_train64_8.dll", "cudnn_cnn_infer64_8.dll",
        "cudnn_cnn_train64_8.dll", "cudnn_adv_infer64_8.dll", "cudnn_adv_train64_8.dll"}) {
    copy_fixture(any_dll, v117 / "bin" / sub);
  }
  copy_fixture(any_dll, v117 / "bin" / "zlibwapi.dll");
  write(v117 / "include" / "cudnn_version.h",
        "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 5\n#define CUDNN_PATCHLEVEL 0\n");
  toolkit_version(v120, "12.0.0");
  copy_fixture(any_dll, v120 / "bin" / "cudart64_12.dll");
  copy_fixture(any_dll, v120 / "bin" / "cublas64_12.dll");
  copy_fixture(any_dll, v120 / "bin" / "cublasLt64_12.dll");

  const std::string bin117 = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.7\\bin";
  const std::string bin120 = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.0\\bin";
  EnvVar path(L"PATH");
  EnvVar cuda_path(L"CUDA_PATH");
  EnvVar v11(L"CUDA_PATH_V11_7");
  EnvVar v12(L"CUDA_PATH_V12_0");
  path.set(bin120 + ";" + bin117 + ";C:\\windows\\system32;C:\\windows");
  cuda_path.set("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.7");
  v11.set("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.7");
  v12.set("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.0");

  CliRun text = run_cli({"doctor", "--no-color"});
  EXPECT_EQ(text.code, 1) << text.out << text.err;
  const json j = doctor_json();
  auto problems = testing::report_schema_problems(j);
  EXPECT_TRUE(problems.empty()) << join(problems, "\n");

  const json* missing = finding(j, "win-cudnn8-sublibrary-missing");
  ASSERT_NE(missing, nullptr) << text.out;
  EXPECT_NE(missing->at("title").get<std::string>().find("cublaslt64_11.dll"), std::string::npos)
      << missing->dump(1);
  EXPECT_NE(evidence_text(*missing).find("cudnn64_8.dll imports cublaslt64_11.dll"),
            std::string::npos)
      << evidence_text(*missing);

  const json* order = finding(j, "win-cuda-path-confusion");
  ASSERT_NE(order, nullptr) << text.out;
  const std::string fixes = fix_text(*order);
  EXPECT_NE(fixes.find("move " + bin117 + " before the other CUDA folders in PATH"),
            std::string::npos)
      << fixes;
  EXPECT_NE(fixes.find("[cmd] set \"PATH=" + bin117 + ";" + bin120 +
                       ";C:\\windows\\system32;C:\\windows\""),
            std::string::npos)
      << fixes;
  // The same findings in the text report, as the user reads them.
  EXPECT_NE(text.out.find("cudnn64_8.dll imports cublaslt64_11.dll"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("set \"PATH=" + bin117 + ";" + bin120), std::string::npos) << text.out;
}

// The current directory on another drive than the toolkit's (issue 19: a toolkit path lost
// its drive letter, so "C:\\...\\v12.4" was looked for on the current drive). Under Wine
// Z: is the Unix root.
TEST(WindowsLive, ToolkitPathsKeepTheirDriveWhenTheCurrentDirectoryIsOnAnother) {
  Made made(L"C:\\Program Files\\NVIDIA GPU Computing Toolkit");
  const fs::path v124 = kCuda / "v12.4";
  toolkit_version(v124, "12.4.1");
  fs::create_directories(v124 / "bin");
  const std::string root = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4";
  EnvVar path(L"PATH");
  EnvVar cuda_path(L"CUDA_PATH");
  EnvVar v12(L"CUDA_PATH_V12_4");
  path.set(root + "\\bin;C:\\windows\\system32;C:\\windows");
  cuda_path.set(root);
  v12.set(root);
  struct Cwd {
    fs::path old = fs::current_path();
    ~Cwd() { fs::current_path(old); }
  } cwd;
  std::error_code ec;
  fs::current_path(L"Z:\\tmp", ec);
  if (ec) GTEST_SKIP() << "no drive Z: to stand in the current directory on";

  CliRun rec = run_cli({"cudnn", "recover", "--toolkit", root});
  EXPECT_EQ(rec.code, 0) << rec.out << rec.err;
  EXPECT_EQ(rec.err.find("not a directory"), std::string::npos) << rec.err;
  CliRun env = run_cli({"env", "--cuda", "12.4", "--shell", "powershell"});
  EXPECT_EQ(env.code, 0) << env.out << env.err;
  EXPECT_NE(env.out.find(root), std::string::npos) << env.out;
}

}  // namespace
}  // namespace dlenv
