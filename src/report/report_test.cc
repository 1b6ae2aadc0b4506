#include "report/report.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "util/strings.h"

namespace dlenv {
namespace {

// A realistic H200 machine: driver 580.95.05, CUDA 13.0, one GPU, toolkit
// 13.0 at /usr/local/cuda-13.0, cuDNN 9.14.0 (system) and 9.19.0 (pip wheel).
Facts h200_facts() {
  Facts f;
  f.tool_version = "0.1.0";

  f.host.os = Fact<std::string>::known("linux", "compile-time");
  f.host.distro = Fact<std::string>::known("Ubuntu 24.04.3 LTS", "/etc/os-release");
  f.host.kernel = Fact<std::string>::known("6.8.0-85-generic", "/proc/sys/kernel/osrelease");
  f.host.arch = Fact<std::string>::known("x86_64", "uname");
  f.host.hostname = Fact<std::string>::known("h200-node-07", "/proc/sys/kernel/hostname");
  f.host.glibc = Fact<std::string>::known("2.39", "/usr/lib/x86_64-linux-gnu/libc.so.6");
  f.host.cpu_model = Fact<std::string>::known("AMD EPYC 9654 96-Core Processor", "/proc/cpuinfo");
  f.host.cpu_count = Fact<int>::known(192, "/proc/cpuinfo");
  f.host.container = Fact<std::string>::known("none", "/proc/1/cgroup");
  f.host.wsl2 = Fact<bool>::known(false, "/proc/sys/kernel/osrelease");

  DriverFacts& d = f.driver;
  d.kernel_module_version = Fact<std::string>::known("580.95.05", "/proc/driver/nvidia/version");
  d.sys_module_version = Fact<std::string>::known("580.95.05", "/sys/module/nvidia/version");
  d.open_kernel_module = Fact<bool>::known(true, "/proc/driver/nvidia/version");
  d.nvml_driver_version = Fact<std::string>::known("580.95.05", "nvmlSystemGetDriverVersion");
  d.nvml_library = Fact<std::string>::known("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
                                            "dlopen(libnvidia-ml.so.1)");
  d.nvml_error = Fact<std::string>::unknown(FactStatus::not_found, "", "nvmlInit_v2");
  d.cuda_driver_version = Fact<int>::known(13000, "cuDriverGetVersion");
  d.libcuda_library =
      Fact<std::string>::known("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "dlopen(libcuda.so.1)");
  d.nvidia_smi_version = Fact<std::string>::unknown(
      FactStatus::skipped, "NVML answered; nvidia-smi not needed", "nvidia-smi");
  d.libcuda_files = {
      {"/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05", "580.95.05", false, "ld.so.cache"},
      {"/usr/local/cuda-13.0/lib64/stubs/libcuda.so", "", true, "dir scan"},
  };
  d.libnvml_files = {
      {"/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.95.05", "580.95.05", false, "ld.so.cache"},
  };
  d.loaded_modules = {"nvidia_uvm 2076672 0 - Live 0x0000000000000000 (OE)",
                      "nvidia 14376960 2 nvidia_uvm, Live 0x0000000000000000 (OE)"};
  d.nvidia_loaded = true;
  d.nvidia_uvm_loaded = true;
  d.modules_source = "/proc/modules";
  d.device_nodes = {
      {"/dev/nvidiactl", true, true, true, 020666, 0, "stat(/dev/nvidiactl)"},
      {"/dev/nvidia0", true, true, true, 020666, 0, "stat(/dev/nvidia0)"},
      {"/dev/nvidia-uvm", false, false, false, 0, 0, "stat(/dev/nvidia-uvm)"},
  };

  f.gpu_count = Fact<int>::known(1, "nvmlDeviceGetCount_v2");
  GpuFacts g;
  g.index = 0;
  g.name = Fact<std::string>::known("NVIDIA H200", "nvmlDeviceGetName");
  g.uuid =
      Fact<std::string>::known("GPU-3f1c2a9e-7b4d-4e21-9c0a-5d8e6f7a1b2c", "nvmlDeviceGetUUID");
  g.pci_bus_id = Fact<std::string>::known("00000000:19:00.0", "nvmlDeviceGetPciInfo_v3");
  g.compute_capability = Fact<Version>::known(Version{9, 0}, "nvmlDeviceGetCudaComputeCapability");
  g.memory_total_bytes = Fact<uint64_t>::known(150754820096ULL, "nvmlDeviceGetMemoryInfo");
  g.persistence_mode = Fact<bool>::known(true, "nvmlDeviceGetPersistenceMode");
  g.mig_mode = Fact<std::string>::known("disabled", "nvmlDeviceGetMigMode");
  g.compute_mode = Fact<std::string>::unknown(
      FactStatus::permission_denied, "NVML_ERROR_NO_PERMISSION", "nvmlDeviceGetComputeMode");
  g.source = "NVML";
  f.gpus.push_back(g);

  ToolkitFacts t;
  t.root = "/usr/local/cuda-13.0";
  t.real_root = "/usr/local/cuda-13.0";
  t.version = Fact<Version>::known(Version{13, 0, 2}, "/usr/local/cuda-13.0/version.json");
  t.nvcc = Fact<std::string>::known("/usr/local/cuda-13.0/bin/nvcc", "file exists");
  t.nvcc_version = Fact<Version>::known(Version{13, 0, 88}, "nvcc --version");
  t.found_via = {"/usr/local/cuda-*", "CUDA_HOME", "PATH (nvcc)"};
  t.lib_dirs = {"/usr/local/cuda-13.0/lib64", "/usr/local/cuda-13.0/targets/x86_64-linux/lib"};
  t.is_default_link = true;
  t.active_path = true;
  t.active_cuda_home = true;
  t.in_ld_cache = false;
  t.cudart_library =
      Fact<std::string>::known("/usr/local/cuda-13.0/lib64/libcudart.so.13", "dir scan");
  f.toolkits.push_back(t);

  CudnnCopy sys;
  sys.dir = "/usr/lib/x86_64-linux-gnu";
  sys.library = "/usr/lib/x86_64-linux-gnu/libcudnn.so.9.14.0";
  sys.library_version = Fact<Version>::known(Version{9, 14, 0}, "file name");
  sys.header_version = Fact<Version>::known(Version{9, 14, 0}, "/usr/include/cudnn_version.h");
  sys.header_path = "/usr/include/cudnn_version.h";
  sys.live_version = Fact<Version>::unknown(FactStatus::skipped, "not loaded (use --live)");
  sys.cuda_major = Fact<int>::known(13, "/usr/lib/x86_64-linux-gnu/libcudnn.so.9.14.0 (NEEDED)");
  sys.major = 9;
  sys.found_via = {"ld.so.cache"};
  sys.sublibraries_present = {"libcudnn_ops.so.9", "libcudnn_cnn.so.9", "libcudnn_adv.so.9",
                              "libcudnn_graph.so.9", "libcudnn_engines_runtime_compiled.so.9"};
  sys.sublibraries_missing = {"libcudnn_engines_precompiled.so.9", "libcudnn_heuristic.so.9"};
  sys.mixed_versions = {{"libcudnn_ops.so.9.13.1", "9.13.1"}};
  f.cudnn.push_back(sys);

  CudnnCopy pip;
  pip.dir = "/home/ana/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib";
  pip.library = "/home/ana/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9";
  pip.library_version = Fact<Version>::known(
      Version{9, 19, 0, 56},
      "/home/ana/.venv/lib/python3.12/site-packages/nvidia_cudnn_cu13-9.19.0.56.dist-info");
  pip.header_version =
      Fact<Version>::unknown(FactStatus::not_found, "the wheel ships no cudnn_version.h");
  pip.live_version = Fact<Version>::unknown(FactStatus::skipped, "not loaded (use --live)");
  pip.cuda_major = Fact<int>::known(13, "wheel name nvidia-cudnn-cu13");
  pip.major = 9;
  pip.found_via = {"pip wheel"};
  pip.python_site = "/home/ana/.venv/lib/python3.12/site-packages";
  f.cudnn.push_back(pip);

  f.env.vars = {{"CUDA_HOME", "/usr/local/cuda-13.0"},
                {"PATH", "/usr/local/cuda-13.0/bin:/usr/local/bin:/usr/bin:/bin"}};
  f.env.path = {"/usr/local/cuda-13.0/bin", "/usr/local/bin", "/usr/bin", "/bin"};
  f.env.source = "process environment";

  f.timing.ms = {{"driver", 0.4}, {"gpus", 15.5}, {"toolkits", 1.25}, {"cudnn", 2.5}};
  return f;
}

std::vector<Finding> h200_findings() {
  Finding info;
  info.id = "cudnn-multiple-copies";
  info.severity = Severity::info;
  info.layer = "cudnn";
  info.title = "2 copies of cuDNN 9 are installed";
  info.evidence = {{"cuDNN 9.14.0 in /usr/lib/x86_64-linux-gnu", "ld.so.cache"},
                   {"cuDNN 9.19.0.56 in the pip wheel nvidia-cudnn-cu13",
                    "/home/ana/.venv/lib/python3.12/site-packages"}};

  Finding warning;
  warning.id = "cudnn-sublibrary-missing";
  warning.severity = Severity::warning;
  warning.layer = "cudnn";
  warning.title = "cuDNN 9.14.0 is missing 2 of its sub-libraries";
  warning.evidence = {{"libcudnn_engines_precompiled.so.9 not found", "/usr/lib/x86_64-linux-gnu"},
                      {"libcudnn_heuristic.so.9 not found", "/usr/lib/x86_64-linux-gnu"}};
  warning.fix = {{"Reinstall the complete cuDNN package",
                  "sudo apt-get install --reinstall libcudnn9-cuda-13", "sh"}};
  warning.confirmed = false;

  Finding error;
  error.id = "cudnn-mixed-versions";
  error.severity = Severity::error;
  error.layer = "cudnn";
  error.title = "cuDNN libraries of different versions share one directory";
  error.evidence = {{"libcudnn.so.9.14.0", "/usr/lib/x86_64-linux-gnu"},
                    {"libcudnn_ops.so.9.13.1", "/usr/lib/x86_64-linux-gnu"}};
  error.fix = {{"Remove the stray library left by an older install",
                "sudo rm /usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9.13.1\nsudo ldconfig", "sh"},
               {"Check that only one version is left", "", ""}};

  // Deliberately out of severity order: the renderers sort.
  return {info, warning, error};
}

std::string golden_path(const std::string& name) {
  return std::string(DLENV_SOURCE_DIR) + "/tests/golden/report/" + name;
}

// Compares with the golden file, or rewrites it when DLENV_UPDATE_GOLDENS=1.
void check_golden(const std::string& name, const std::string& actual) {
  const std::string path = golden_path(name);
  const char* update = std::getenv("DLENV_UPDATE_GOLDENS");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream out(path, std::ios::binary);
    ASSERT_TRUE(out) << "cannot write " << path;
    out << actual;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing golden " << path << " (run with DLENV_UPDATE_GOLDENS=1)";
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), actual) << "golden " << path
                              << " differs (DLENV_UPDATE_GOLDENS=1 rewrites it)";
}

void expect_no_trailing_whitespace(const std::string& text) {
  size_t n = 0;
  for (const std::string& line : split_lines(text)) {
    ++n;
    if (line.empty()) continue;
    EXPECT_NE(line.back(), ' ') << "line " << n << ": [" << line << "]";
    EXPECT_NE(line.back(), '\t') << "line " << n << ": [" << line << "]";
  }
}

TEST(ReportGolden, Text) {
  check_golden("h200.txt", render_text(h200_facts(), h200_findings(), {}));
}

TEST(ReportGolden, TextVerbose) {
  check_golden("h200-verbose.txt",
               render_text(h200_facts(), h200_findings(), {.color = false, .verbose = true}));
}

TEST(ReportGolden, Json) {
  check_golden("h200.json", render_json(h200_facts(), h200_findings()));
}

TEST(ReportGolden, Markdown) {
  check_golden("h200.md", render_markdown(h200_facts(), h200_findings()));
}

// A bug report's lines: libc, CPU, and whether each framework has the GPU.
TEST(ReportMarkdown, LibcCpuAndCudaAvailable) {
  Facts f = h200_facts();
  PythonEnv e;
  e.interpreter = Fact<std::string>::known("/home/ana/.venv/bin/python", "VIRTUAL_ENV");
  FrameworkFacts torch;
  torch.package = "torch";
  torch.version = "2.11.0";
  e.frameworks.push_back(torch);
  f.python.push_back(e);
  std::string md = render_markdown(f, {});
  EXPECT_NE(md.find("| libc | glibc 2.39 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| CPU | AMD EPYC 9654 96-Core Processor, 192 logical CPUs |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| CUDA available | torch 2.11.0: not checked (run with --deep) |"),
            std::string::npos)
      << md;
  // With --deep: what the import said.
  DeepProbe deep;
  deep.status = Fact<std::string>::known("ok", "python");
  DeepFramework d;
  d.name = "torch";
  d.version = "2.11.0+cu130";
  d.imported = true;
  d.gpu_available = Fact<bool>::known(true, "torch.cuda.is_available()");
  d.device_count = 8;
  deep.frameworks.push_back(d);
  f.python.back().deep = deep;
  md = render_markdown(f, {});
  EXPECT_NE(md.find("| CUDA available | torch 2.11.0+cu130: yes (8 devices) |"), std::string::npos)
      << md;
  f.host.glibc = Fact<std::string>::unknown(FactStatus::not_supported, "Windows");
  f.host.cpu_model = Fact<std::string>::unknown(FactStatus::not_found, "no /proc/cpuinfo");
  f.host.cpu_count = Fact<int>::unknown(FactStatus::not_found, "no /proc/cpuinfo");
  md = render_markdown(f, {});
  EXPECT_NE(md.find("| libc | not supported: Windows |"), std::string::npos) << md;
  EXPECT_NE(md.find("| CPU | not found: no /proc/cpuinfo |"), std::string::npos) << md;
}

TEST(Redactor, StablePlaceholders) {
  Facts f = h200_facts();
  Redactor r(f, "ana", "/home/ana/");
  EXPECT_EQ(r("host h200-node-07, /home/ana/.venv, /home/anabel, /scratch/ana/x, ana"),
            "host <host>, ~/.venv, /home/anabel, /scratch/<user>/x, ana");
  // The facts' GPU is number 1 whatever comes first; a new UUID gets the next number, and
  // keeps it.
  const std::string other = "MIG-0a1b2c3d-0000-4000-8000-00000000abcd";
  EXPECT_EQ(r(other + " GPU-3f1c2a9e-7b4d-4e21-9c0a-5d8e6f7a1b2c"), "MIG-<uuid-2> GPU-<uuid-1>");
  EXPECT_EQ(r(other), "MIG-<uuid-2>");
  EXPECT_EQ(r("h200-node-07x is another host"), "h200-node-07x is another host");
  // In columns: what follows a replaced word stays where it was.
  EXPECT_EQ(r.columns("  hostname  h200-node-07   (/etc/hostname)\n"
                      "  UUID      GPU-3f1c2a9e-7b4d-4e21-9c0a-5d8e6f7a1b2c (nvml)\n"
                      "  home      /home/ana/x  (HOME)\n"),
            "  hostname  <host>         (/etc/hostname)\n"
            "  UUID      GPU-<uuid-1>                             (nvml)\n"
            "  home      ~/x          (HOME)\n");
  EXPECT_EQ(r.columns("h200-node-07x h200-node-07"), "h200-node-07x <host>");
  Redactor root(f, "root", "/root");
  EXPECT_EQ(root("--root /srv, /root/.cache"), "--root /srv, ~/.cache");
}

TEST(Redactor, EveryRendererConsistently) {
  Facts f = h200_facts();
  auto findings = h200_findings();
  Redactor r(f, "ana", "/home/ana");
  std::string md = render_markdown(f, findings, &r);
  std::string json = render_json(f, findings, &r);
  std::string text = render_text(f, findings, {.verbose = true, .redact = &r});
  for (const std::string* out : {&md, &json, &text}) {
    EXPECT_EQ(out->find("h200-node-07"), std::string::npos) << *out;
    EXPECT_EQ(out->find("/home/ana"), std::string::npos) << *out;
    EXPECT_EQ(out->find("3f1c2a9e"), std::string::npos) << *out;
  }
  EXPECT_NE(json.find("\"value\": \"<host>\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"value\": \"GPU-<uuid-1>\""), std::string::npos) << json;
  EXPECT_NE(text.find("GPU-<uuid-1>"), std::string::npos) << text;
  EXPECT_NE(md.find(Redactor::notice()), std::string::npos);
  EXPECT_NE(text.find(Redactor::notice()), std::string::npos);
  // Markdown escapes a placeholder in a table cell or list item, not in code.
  EXPECT_NE(md.find("in the pip wheel nvidia-cudnn-cu13 (`~/.venv/"), std::string::npos) << md;
  check_golden("h200-redacted.md", md);
  // Without a redactor nothing changes.
  EXPECT_EQ(render_markdown(f, findings), render_markdown(f, findings, nullptr));
  EXPECT_NE(render_markdown(f, findings).find("h200-node-07"), std::string::npos);
}

TEST(ReportText, FindingsSortedErrorWarningInfo) {
  std::string text = render_text(h200_facts(), h200_findings(), {});
  size_t e = text.find("[error]");
  size_t w = text.find("[warning]");
  size_t i = text.find("[info]");
  ASSERT_NE(e, std::string::npos);
  ASSERT_NE(w, std::string::npos);
  ASSERT_NE(i, std::string::npos);
  EXPECT_LT(e, w);
  EXPECT_LT(w, i);
  EXPECT_NE(text.find("1 error, 1 warning, 1 info — run `dlenv explain ID` for details"),
            std::string::npos);
}

TEST(ReportText, UnknownFactsShowReason) {
  std::string text = render_text(h200_facts(), h200_findings(), {.verbose = true});
  EXPECT_NE(text.find("not found: the wheel ships no cudnn_version.h"), std::string::npos);
  EXPECT_NE(text.find("skipped: not loaded (use --live)"), std::string::npos);
  EXPECT_NE(text.find("permission denied: NVML_ERROR_NO_PERMISSION"), std::string::npos);
}

TEST(ReportText, SourcesOfFactsOnlyWhenVerbose) {
  std::string plain = render_text(h200_facts(), h200_findings(), {});
  std::string verbose = render_text(h200_facts(), h200_findings(), {.verbose = true});
  EXPECT_EQ(plain.find("(/etc/os-release)"), std::string::npos);
  EXPECT_NE(verbose.find("(/etc/os-release)"), std::string::npos);
  // Evidence always carries its source.
  EXPECT_NE(plain.find("(ld.so.cache)"), std::string::npos);
}

TEST(ReportText, GpuHiddenMarker) {
  Facts f = h200_facts();
  f.gpus[0].visible = false;
  f.gpus[0].visibility_reason = "CUDA_VISIBLE_DEVICES=1";
  std::string text = render_text(f, {}, {});
  EXPECT_NE(text.find("hidden by CUDA_VISIBLE_DEVICES (CUDA_VISIBLE_DEVICES=1)"),
            std::string::npos);
  EXPECT_NE(text.find("0 errors, 0 warnings, 0 info — no problems found"), std::string::npos);
}

TEST(ReportText, ColourOnlyWhenAsked) {
  std::string plain = render_text(h200_facts(), h200_findings(), {.color = false, .verbose = true});
  EXPECT_EQ(plain.find('\x1b'), std::string::npos);
  std::string colored =
      render_text(h200_facts(), h200_findings(), {.color = true, .verbose = true});
  EXPECT_NE(colored.find("\x1b[31m[error]\x1b[0m"), std::string::npos);
  EXPECT_NE(colored.find("\x1b[33m[warning]\x1b[0m"), std::string::npos);
  EXPECT_NE(colored.find("\x1b[36m[info]\x1b[0m"), std::string::npos);
  EXPECT_NE(colored.find("\x1b[1mFindings\x1b[0m"), std::string::npos);
  EXPECT_NE(colored.find("\x1b[2m(ld.so.cache)\x1b[0m"), std::string::npos);
  expect_no_trailing_whitespace(colored);
  EXPECT_EQ(render_markdown(h200_facts(), h200_findings()).find('\x1b'), std::string::npos);
  EXPECT_EQ(render_json(h200_facts(), h200_findings()).find('\x1b'), std::string::npos);
}

TEST(ReportText, ControlCharactersInValuesAreNeutralised) {
  Facts f = h200_facts();
  f.host.hostname = Fact<std::string>::known("evil\x1b[2Jhost\nnext", "/etc/hostname");
  std::string text = render_text(f, {}, {});
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_NE(text.find("evil\\e[2Jhost next"), std::string::npos) << text;
}

TEST(ReportText, NoTrailingWhitespace) {
  Facts empty;
  for (const Facts& f : {h200_facts(), empty}) {
    for (bool verbose : {false, true}) {
      expect_no_trailing_whitespace(render_text(f, h200_findings(), {.verbose = verbose}));
      expect_no_trailing_whitespace(render_text(f, {}, {.verbose = verbose}));
    }
    expect_no_trailing_whitespace(render_markdown(f, h200_findings()));
    expect_no_trailing_whitespace(render_json(f, h200_findings()));
  }
}

TEST(ReportJson, ParsesWithEveryTopLevelKey) {
  std::string text = render_json(h200_facts(), h200_findings());
  nlohmann::json j = nlohmann::json::parse(text);
  for (const char* key :
       {"schema", "tool", "rooted", "root", "host", "driver", "gpu_count", "gpus", "toolkits",
        "cudnn", "libraries", "python", "env", "findings", "summary", "timing_ms"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["schema"], "dlenv.report/1");
  EXPECT_EQ(j["tool"]["version"], "0.1.0");
  EXPECT_EQ(j["driver"]["version"], "580.95.05");
  EXPECT_EQ(j["driver"]["cuda_driver_version"]["value"], "13.0");
  EXPECT_EQ(j["gpus"][0]["compute_capability"]["value"], "9.0");
  EXPECT_EQ(j["toolkits"][0]["version"]["value"], "13.0.2");
  EXPECT_EQ(j["cudnn"][1]["library_version"]["value"], "9.19.0.56");
  EXPECT_TRUE(j["libraries"].is_array());
  EXPECT_TRUE(j["python"].is_array());
  ASSERT_EQ(j["findings"].size(), 3u);
  EXPECT_EQ(j["findings"][0]["severity"], "error");
  EXPECT_EQ(j["findings"][1]["confirmed"], false);
  EXPECT_EQ(j["findings"][0]["fix"][0]["shell"], "sh");
  EXPECT_EQ(j["summary"]["errors"], 1);
  // Key order is fixed: schema first, timing last.
  auto oj = report_json(h200_facts(), h200_findings());
  EXPECT_EQ(oj.begin().key(), "schema");
  EXPECT_EQ((--oj.end()).key(), "timing_ms");
}

TEST(ReportJson, FactObjects) {
  nlohmann::json j = nlohmann::json::parse(render_json(h200_facts(), h200_findings()));
  const auto& known = j["host"]["distro"];
  EXPECT_EQ(known["value"], "Ubuntu 24.04.3 LTS");
  EXPECT_EQ(known["source"], "/etc/os-release");
  EXPECT_FALSE(known.contains("status"));

  const auto& missing = j["cudnn"][1]["header_version"];
  EXPECT_FALSE(missing.contains("value"));
  EXPECT_EQ(missing["status"], "not-found");
  EXPECT_EQ(missing["reason"], "the wheel ships no cudnn_version.h");
  EXPECT_TRUE(missing.contains("source"));

  EXPECT_EQ(j["driver"]["nvidia_smi_version"]["status"], "skipped");
  EXPECT_EQ(j["gpus"][0]["compute_mode"]["status"], "permission-denied");
}

TEST(ReportJson, RootedAndInvalidUtf8) {
  Facts f = h200_facts();
  nlohmann::json plain = nlohmann::json::parse(render_json(f, {}));
  EXPECT_EQ(plain["rooted"], false);
  EXPECT_TRUE(plain["root"].is_null());
  f.rooted = true;
  f.root = "/srv/sysroot";
  f.host.hostname = Fact<std::string>::known("bad\xff\xfe", "/etc/hostname");
  // The bytes that are not UTF-8 as \udcXX (Python's surrogateescape); nlohmann refuses a
  // lone surrogate, so they are made plain before it parses the rest.
  std::string text = render_json(f, {});
  EXPECT_NE(text.find("\"bad\\udcff\\udcfe\""), std::string::npos);
  for (size_t p; (p = text.find("\\udc")) != std::string::npos;) text.replace(p, 6, "?");
  nlohmann::json rooted = nlohmann::json::parse(text);
  EXPECT_EQ(rooted["host"]["hostname"]["value"], "bad??");
  EXPECT_EQ(rooted["rooted"], true);
  EXPECT_EQ(rooted["root"], "/srv/sysroot");
  EXPECT_NE(render_text(f, {}, {}).find("root: /srv/sysroot"), std::string::npos);
}

TEST(ReportMarkdown, SummaryFindingsAndDetails) {
  std::string md = render_markdown(h200_facts(), h200_findings());
  EXPECT_NE(md.find("| Driver | 580.95.05 (CUDA 13.0)"), std::string::npos);
  EXPECT_NE(md.find("| GPUs | 1 × NVIDIA H200 (cc 9.0, 140.4 GiB) |"), std::string::npos);
  EXPECT_NE(md.find("- **error** `cudnn-mixed-versions`"), std::string::npos);
  EXPECT_NE(md.find("<details>"), std::string::npos);
  EXPECT_NE(md.find("</details>"), std::string::npos);
  EXPECT_LT(md.find("**error**"), md.find("**warning**"));
  EXPECT_LT(md.find("**warning**"), md.find("**info**"));
}

TEST(ReportMarkdown, EscapesTableCells) {
  Facts f = h200_facts();
  f.host.distro = Fact<std::string>::known("Weird | distro *x*", "/etc/os-release");
  std::string md = render_markdown(f, {});
  EXPECT_NE(md.find("Weird \\| distro \\*x\\*"), std::string::npos);
}

TEST(ColorWanted, TruthTable) {
  EXPECT_TRUE(color_wanted(true, nullptr, "xterm-256color"));
  EXPECT_TRUE(color_wanted(true, nullptr, nullptr));
  EXPECT_TRUE(color_wanted(true, "", "xterm"));  // NO_COLOR set but empty: ignored
  EXPECT_FALSE(color_wanted(true, "1", "xterm"));
  EXPECT_FALSE(color_wanted(true, nullptr, "dumb"));
  EXPECT_FALSE(color_wanted(false, nullptr, "xterm"));
  EXPECT_FALSE(color_wanted(false, "1", "dumb"));
  EXPECT_FALSE(color_wanted(false, nullptr, nullptr));
  // FORCE_COLOR / CLICOLOR_FORCE: colour into a pipe too, unless "0" or empty; NO_COLOR wins.
  EXPECT_TRUE(color_wanted(false, nullptr, nullptr, "1", nullptr));
  EXPECT_TRUE(color_wanted(false, nullptr, "dumb", nullptr, "1"));
  EXPECT_TRUE(color_wanted(false, "", nullptr, "true", nullptr));
  EXPECT_FALSE(color_wanted(false, nullptr, nullptr, "0", nullptr));
  EXPECT_FALSE(color_wanted(false, nullptr, nullptr, "", "0"));
  EXPECT_FALSE(color_wanted(true, "1", "xterm", "1", "1"));
  EXPECT_TRUE(color_wanted(true, nullptr, "xterm", "0", nullptr));  // "0" only does not force
}

}  // namespace
}  // namespace dlenv
