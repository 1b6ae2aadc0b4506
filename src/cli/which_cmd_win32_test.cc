// `dlenv which` on Windows (run under Wine in CI): which_host.exe (tests/fixtures/win)
// loads stand-in NVIDIA DLLs laid out like a CUDA 11.7 toolkit and a pip wheel;
// -- CMD traces it with the debug API, --pid and --holding read module snapshots
// of a running one.
#include <gtest/gtest.h>
#include <windows.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/which_cmd.h"
#include "platform/win32_text.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using nlohmann::json;

const std::string kFx = DLENV_WIN_FIXTURES;
const std::string kToolkit =
    kFx + "/which/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.7/bin";
const std::string kWheel = kFx + "/which/venv/Lib/site-packages/nvidia/cublas/bin";
const std::string kHost = kFx + "/which/bin/which_host.exe";

struct WhichRun {
  int code = 0;
  std::string out, err;
};

WhichRun which(WhichOptions o) {
  std::ostringstream out, err;
  WhichRun r;
  r.code = run_which(o, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

const json* library(const json& doc, const std::string& name) {
  for (const auto& l : doc["libraries"]) {
    if (to_lower(l["name"].get<std::string>()) == to_lower(name)) return &l;
  }
  return nullptr;
}

// The tail of a path the OS reported, with '/' separators, in lower case.
std::string tail(const json& l, size_t parts) {
  std::string p = to_lower(l["path"].get<std::string>());
  std::replace(p.begin(), p.end(), '\\', '/');
  size_t at = p.size();
  for (size_t i = 0; i < parts && at != std::string::npos && at > 0; ++i) {
    at = p.rfind('/', at - 1);
  }
  return at == std::string::npos ? p : p.substr(at + 1);
}

TEST(WhichWin, CommandTracesEveryDllLoadAndUnload) {
  WhichOptions o;
  o.json = true;
  o.timeout_s = 60;
  o.command = {kHost,
               "load",
               kToolkit + "/cudnn64_8.dll",
               kToolkit + "/cublas64_11.dll",
               kToolkit + "/cufft64_10.dll",
               kWheel + "/cublasLt64_12.dll",
               "free",
               kToolkit + "/cufft64_10.dll"};
  WhichRun r = which(o);
  ASSERT_EQ(r.code, 0) << r.err;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc["method"], "debug events");
  EXPECT_EQ(doc["exit_code"], 0) << r.err;
  EXPECT_EQ(doc["timed_out"], false);
  EXPECT_GE(doc["load_events"].get<int>(), 4);
  EXPECT_EQ(doc["processes"], 1);
  ASSERT_EQ(doc["libraries"].size(), 4u) << doc.dump(2);

  const json* cudnn = library(doc, "cudnn64_8.dll");
  ASSERT_TRUE(cudnn);
  EXPECT_EQ(tail(*cudnn, 4), "cuda/v11.7/bin/cudnn64_8.dll") << (*cudnn)["path"];
  EXPECT_EQ((*cudnn)["library"], "cudnn");
  EXPECT_EQ((*cudnn)["version"], "8.5.0.96");
  EXPECT_EQ((*cudnn)["version_source"], "PE version resource");
  EXPECT_EQ((*cudnn)["origin"], "CUDA toolkit");
  EXPECT_NE((*cudnn)["origin_detail"].get<std::string>().find("(CUDA 11.7)"), std::string::npos);
  EXPECT_EQ((*cudnn)["loaded_at_exit"], true);

  const json* cublas = library(doc, "cublas64_11.dll");
  ASSERT_TRUE(cublas);
  EXPECT_EQ((*cublas)["version"], "11.10.3.66");

  const json* cufft = library(doc, "cufft64_10.dll");
  ASSERT_TRUE(cufft);
  EXPECT_EQ((*cufft)["loaded_at_exit"], false) << "FreeLibrary'd before exit";

  const json* lt = library(doc, "cublasLt64_12.dll");
  ASSERT_TRUE(lt);
  EXPECT_EQ(tail(*lt, 5), "site-packages/nvidia/cublas/bin/cublaslt64_12.dll");
  EXPECT_EQ((*lt)["origin"], "pip wheel");
  EXPECT_EQ((*lt)["version"], "12.1.3.1") << "no version resource: the wheel's version";
  EXPECT_NE((*lt)["origin_detail"].get<std::string>().find("nvidia-cublas-cu12 12.1.3.1"),
            std::string::npos);
}

TEST(WhichWin, CommandThatCannotStartIsAToolFailure) {
  WhichOptions o;
  o.command = {kFx + "/which/bin/no-such-program.exe"};
  WhichRun r = which(o);
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("no-such-program.exe"), std::string::npos) << r.err;
}

TEST(WhichWin, CommandIsKilledAtTheTimeout) {
  WhichOptions o;
  o.json = true;
  o.timeout_s = 1;
  o.command = {kHost, "load", kToolkit + "/cudnn64_8.dll", "hold", "30000"};
  WhichRun r = which(o);
  ASSERT_EQ(r.code, 0) << r.err;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc["timed_out"], true);
  EXPECT_LT(doc["wall_ms"].get<double>(), 20000.0);
  EXPECT_TRUE(library(doc, "cudnn64_8.dll")) << doc.dump(2);
}

// which_host.exe holding the DLLs, started with its stdout on a pipe; ready()
// waits for its "ready" line.
class HeldDlls {
 public:
  HeldDlls() {
    SECURITY_ATTRIBUTES inherit{sizeof inherit, nullptr, TRUE};
    HANDLE w = nullptr;
    if (!::CreatePipe(&read_, &w, &inherit, 0)) return;
    ::SetHandleInformation(read_, HANDLE_FLAG_INHERIT, 0);
    std::wstring cmd;
    for (const std::string& a :
         {kHost, std::string("load"), kToolkit + "/cudnn64_8.dll", kToolkit + "/cublas64_11.dll",
          std::string("hold"), std::string("60000")}) {
      if (!cmd.empty()) cmd += L' ';
      win32::append_quoted(cmd, win32::widen(a));
    }
    STARTUPINFOW si{};
    si.cb = sizeof si;
    si.dwFlags = STARTF_USESTDHANDLES;
    si.hStdOutput = w;
    si.hStdError = ::GetStdHandle(STD_ERROR_HANDLE);
    si.hStdInput = ::GetStdHandle(STD_INPUT_HANDLE);
    started_ = ::CreateProcessW(win32::widen(kHost).c_str(), cmd.data(), nullptr, nullptr, TRUE, 0,
                                nullptr, nullptr, &si, &pi_);
    ::CloseHandle(w);
  }
  ~HeldDlls() {
    if (started_) {
      ::TerminateProcess(pi_.hProcess, 0);
      ::WaitForSingleObject(pi_.hProcess, 10000);
      ::CloseHandle(pi_.hProcess);
      ::CloseHandle(pi_.hThread);
    }
    if (read_) ::CloseHandle(read_);
  }
  HeldDlls(const HeldDlls&) = delete;
  HeldDlls& operator=(const HeldDlls&) = delete;

  bool ready() {
    if (!started_) return false;
    std::string got;
    char buf[64];
    DWORD n = 0;
    while (got.find("ready") == std::string::npos &&
           ::ReadFile(read_, buf, sizeof buf, &n, nullptr) && n > 0) {
      got.append(buf, n);
    }
    return got.find("ready") != std::string::npos;
  }
  int pid() const { return static_cast<int>(pi_.dwProcessId); }

 private:
  HANDLE read_ = nullptr;
  PROCESS_INFORMATION pi_{};
  bool started_ = false;
};

TEST(WhichWin, PidAndHoldingReadTheModulesOfARunningProcess) {
  HeldDlls held;
  ASSERT_TRUE(held.ready()) << "which_host.exe did not start or did not load its DLLs";

  WhichOptions o;
  o.json = true;
  o.pid = held.pid();
  WhichRun r = which(o);
  ASSERT_EQ(r.code, 0) << r.err;
  json doc = json::parse(r.out);
  EXPECT_EQ(doc["mode"], "pid");
  EXPECT_EQ(to_lower(doc["command"].get<std::string>()), "which_host.exe");
  ASSERT_EQ(doc["libraries"].size(), 2u) << doc.dump(2);
  const json* cudnn = library(doc, "cudnn64_8.dll");
  ASSERT_TRUE(cudnn);
  EXPECT_EQ(tail(*cudnn, 4), "cuda/v11.7/bin/cudnn64_8.dll");
  EXPECT_EQ((*cudnn)["version"], "8.5.0.96");
  EXPECT_TRUE((*cudnn)["loaded_at_exit"].is_null()) << "a snapshot says nothing about exit";

  WhichOptions h;
  h.json = true;
  h.holding = "CUDNN64_8.DLL";  // Windows file names: case-insensitive
  r = which(h);
  ASSERT_EQ(r.code, 0) << r.err;
  doc = json::parse(r.out);
  EXPECT_GE(doc["scanned"].get<int>(), 1);
  bool found = false;
  for (const auto& p : doc["processes"]) {
    if (p["pid"] != held.pid()) continue;
    found = true;
    ASSERT_EQ(p["paths"].size(), 1u);
    EXPECT_NE(to_lower(p["paths"][0].get<std::string>()).find("cudnn64_8.dll"), std::string::npos);
  }
  EXPECT_TRUE(found) << doc.dump(2);

  // The text form of both.
  o.json = false;
  r = which(o);
  EXPECT_NE(r.out.find("2 NVIDIA/CUDA libraries loaded"), std::string::npos) << r.out;
  h.json = false;
  r = which(h);
  EXPECT_NE(r.out.find(std::to_string(held.pid())), std::string::npos) << r.out;
}

TEST(WhichWin, PidThatDoesNotExistIsAUsageError) {
  WhichOptions o;
  o.pid = 0x7ffffff0;
  WhichRun r = which(o);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("process 2147483632"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace dlenv
