// The check table held to its word: every check reports only the ids it declares and reads only
// the facts it declares, on every row of the table-driven cases below; each id a check reports
// has a row that reports it and one that must not (the ids not there yet are a ratchet that can
// only shrink); the resolver's supersession and merging.
#include "rules/check_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>

#include "rules/facts_builder_test_support.h"
#include "rules/resolve.h"
#include "rules/rules.h"

namespace dlenv {
namespace {

using testing::FactsBuilder;
using testing::healthy_gpu_machine;

std::shared_ptr<const Kb> kb() {
  static auto k = Kb::load_embedded();
  return *k;
}

// One case: facts, the OS they are analysed for, ids that must be reported, ids that must not.
struct Row {
  std::string name;
  std::function<Facts()> facts;
  Os os = Os::linux;
  std::set<std::string> reported;
  std::set<std::string> absent;
};

const std::vector<Row>& rows() {
  static const std::vector<Row> r = {
      {"healthy H200, driver 580",
       [] { return healthy_gpu_machine().build(); },
       Os::linux,
       {},
       {"no-nvidia-driver", "driver-module-not-built-for-kernel", "nouveau-or-nova-owns-gpu",
        "nvml-driver-library-mismatch", "libcuda-stub-loaded", "dev-nvidia-permissions",
        "cuda-unknown-error-uvm", "container-started-without-gpus",
        "cuda-visible-devices-hides-gpu", "exclusive-compute-mode-busy"}},
      {"nothing NVIDIA on the machine",
       [] { return FactsBuilder().build(); },
       Os::linux,
       {"no-nvidia-driver"},
       {"driver-module-not-built-for-kernel"}},
      {"a GPU on the bus, driver libraries but no module",
       [] {
         return FactsBuilder()
             .pci_gpu("")
             .libcuda_file("/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05", "580.95.05",
                           "ld.so.cache")
             .build();
       },
       Os::linux,
       {"driver-module-not-built-for-kernel"},
       {"no-nvidia-driver"}},
      {"a GPU on the bus and no driver at all",
       [] { return FactsBuilder().pci_gpu("").build(); },
       Os::linux,
       {"no-nvidia-driver"},
       {"driver-module-not-built-for-kernel"}},
      {"nouveau owns the GPU",
       [] { return FactsBuilder().pci_gpu("nouveau").nouveau().build(); },
       Os::linux,
       {"nouveau-or-nova-owns-gpu"},
       {"driver-module-not-built-for-kernel", "no-nvidia-driver"}},
      {"NVML answers another version than the module",
       [] { return healthy_gpu_machine().nvml_version("580.82.07").build(); },
       Os::linux,
       {"nvml-driver-library-mismatch"},
       {"no-nvidia-driver"}},
      {"a stub libcuda on LD_LIBRARY_PATH",
       [] {
         return healthy_gpu_machine()
             .libcuda_file("/usr/local/cuda/lib64/stubs/libcuda.so", "", "LD_LIBRARY_PATH", true)
             .build();
       },
       Os::linux,
       {"libcuda-stub-loaded"},
       {"nvml-driver-library-mismatch"}},
      {"a stub libcuda only in a directory nothing searches",
       [] {
         return healthy_gpu_machine()
             .libcuda_file("/usr/local/cuda/lib64/stubs/libcuda.so", "", "directory scan", true)
             .build();
       },
       Os::linux,
       {},
       {"libcuda-stub-loaded"}},
      {"/dev/nvidia0 not read/write for this user",
       [] { return healthy_gpu_machine().node("/dev/nvidia0", false).build(); },
       Os::linux,
       {"dev-nvidia-permissions"},
       {"cuda-unknown-error-uvm"}},
      {"/dev/nvidia-uvm missing",
       [] { return healthy_gpu_machine().node("/dev/nvidia-uvm", false, false).build(); },
       Os::linux,
       {"cuda-unknown-error-uvm"},
       {"dev-nvidia-permissions"}},
      {"a container started without the device nodes",
       [] { return healthy_gpu_machine().no_device_nodes().container("docker").build(); },
       Os::linux,
       {"container-started-without-gpus"},
       {"dev-nvidia-permissions"}},
      {"no device nodes outside a container",
       [] { return healthy_gpu_machine().no_device_nodes().build(); },
       Os::linux,
       {"dev-nvidia-permissions"},
       {"container-started-without-gpus"}},
      {"CUDA_VISIBLE_DEVICES=-1",
       [] { return healthy_gpu_machine().hide_gpus("-1").build(); },
       Os::linux,
       {"cuda-visible-devices-hides-gpu"},
       {"exclusive-compute-mode-busy"}},
      {"CUDA_LAUNCH_BLOCKING=1 left set",
       [] { return healthy_gpu_machine().env_var("CUDA_LAUNCH_BLOCKING", "1").build(); },
       Os::linux,
       {"cuda-launch-blocking-set"},
       {"cuda-visible-devices-hides-gpu"}},
      {"CUDA_LAUNCH_BLOCKING=0 (launches stay asynchronous)",
       [] { return healthy_gpu_machine().env_var("CUDA_LAUNCH_BLOCKING", "0").build(); },
       Os::linux,
       {},
       {"cuda-launch-blocking-set"}},
      {"a GPU in compute mode 'prohibited'",
       [] {
         return FactsBuilder().driver("580.95.05").gpu("NVIDIA H200", {9, 0}, "prohibited").build();
       },
       Os::linux,
       {"exclusive-compute-mode-busy"},
       {"cuda-visible-devices-hides-gpu"}},
      {"CUDA 13.0 toolkit with driver 535 (CUDA 12.2)",
       [] {
         return FactsBuilder()
             .driver("535.183.01", 12020)
             .gpu("NVIDIA H200", {9, 0})
             .toolkit("/usr/local/cuda-13.0", {13, 0, 0}, true)
             .build();
       },
       Os::linux,
       {"cuda-driver-insufficient"},
       {"cuda-home-not-set"}},
      {"CUDA 12.4 toolkit with driver 580 (CUDA 13.0)",
       [] {
         return healthy_gpu_machine().toolkit("/usr/local/cuda-12.4", {12, 4, 1}, true).build();
       },
       Os::linux,
       {"nvcc-vs-nvidia-smi-version-confusion"},
       {"cuda-driver-insufficient", "cuda-toolkits-disagree", "nvcc-unsupported-gpu-arch",
        "cuda-home-not-set", "toolkit-change-interrupted"}},
      {"PATH and CUDA_HOME select different toolkits",
       [] {
         return healthy_gpu_machine()
             .toolkit("/usr/local/cuda-12.4", {12, 4, 1}, true)
             .toolkit("/usr/local/cuda-13.0", {13, 0, 0}, false, true)
             .build();
       },
       Os::linux,
       {"cuda-toolkits-disagree"},
       {"cuda-home-not-set"}},
      {"a Blackwell GPU with only CUDA 11.8",
       [] {
         return FactsBuilder()
             .driver("580.95.05")
             .gpu("NVIDIA B200", {10, 0})
             .toolkit("/usr/local/cuda-11.8", {11, 8, 0}, true)
             .build();
       },
       Os::linux,
       {"nvcc-unsupported-gpu-arch"},
       {"cuda-driver-insufficient"}},
      {"a toolkit with nvcc neither on PATH nor in CUDA_HOME",
       [] {
         return healthy_gpu_machine().toolkit("/usr/local/cuda-13.0", {13, 0, 0}).build();
       },
       Os::linux,
       {"cuda-home-not-set"},
       {"cuda-toolkits-disagree", "nvcc-vs-nvidia-smi-version-confusion"}},
      {"an interrupted cuDNN install",
       [] {
         return healthy_gpu_machine()
             .toolkit("/usr/local/cuda-13.0", {13, 0, 0}, true)
             .interrupted_change("/usr/local/cuda-13.0")
             .build();
       },
       Os::linux,
       {"toolkit-change-interrupted"},
       {"cudnn-mixed-versions"}},
      {"cuDNN header 9.1 with library 9.3",
       [] {
         return healthy_gpu_machine().cudnn("/opt/cudnn/lib", {9, 3, 0}, {9, 1, 0}).build();
       },
       Os::linux,
       {"cudnn-header-library-mismatch"},
       {"cudnn-toolkit-cuda-major-mismatch", "cudnn-mixed-versions"}},
      {"cuDNN for CUDA 11 inside the CUDA 12.4 toolkit",
       [] {
         return healthy_gpu_machine()
             .toolkit("/usr/local/cuda-12.4", {12, 4, 1}, true)
             .cudnn("/usr/local/cuda-12.4/lib64", {9, 1, 0}, {9, 1, 0}, "/usr/local/cuda-12.4", 11)
             .build();
       },
       Os::linux,
       {"cudnn-toolkit-cuda-major-mismatch"},
       {"cudnn-header-library-mismatch"}},
      {"cuDNN 9.1 with a 9.0 sub-library beside it",
       [] {
         return healthy_gpu_machine()
             .cudnn("/opt/cudnn/lib", {9, 1, 0}, {9, 1, 0})
             .cudnn_mixed_file("libcudnn_ops.so.9.0.0", "9.0.0")
             .build();
       },
       Os::linux,
       {"cudnn-mixed-versions"},
       {"cudnn-header-library-mismatch"}},
      {"a CPU-only torch on a GPU machine",
       [] {
         return healthy_gpu_machine()
             .python_env("/home/u/venv")
             .framework("torch", "torch", "2.11.0+cpu", "", "cpu")
             .build();
       },
       Os::linux,
       {"torch-cpu-build-installed"},
       {"torch-driver-too-old"}},
      {"a CPU-only torch on a machine without a GPU",
       [] {
         return FactsBuilder()
             .python_env("/home/u/venv")
             .framework("torch", "torch", "2.11.0+cpu", "", "cpu")
             .build();
       },
       Os::linux,
       {},
       {"torch-cpu-build-installed"}},
      {"torch cu130 with driver 535 (CUDA 12.2)",
       [] {
         return FactsBuilder()
             .driver("535.183.01", 12020)
             .gpu("NVIDIA H200", {9, 0})
             .python_env("/home/u/venv")
             .framework("torch", "torch", "2.11.0+cu130", "13.0", "cu130")
             .build();
       },
       Os::linux,
       {"torch-driver-too-old"},
       {"torch-cpu-build-installed"}},
      {"torch cu130 with driver 580 (CUDA 13.0)",
       [] {
         return healthy_gpu_machine()
             .python_env("/home/u/venv")
             .framework("torch", "torch", "2.11.0+cu130", "13.0", "cu130")
             .build();
       },
       Os::linux,
       {},
       {"torch-driver-too-old", "torch-cpu-build-installed"}},
      {"a CPU-only jaxlib on a GPU machine",
       [] {
         return healthy_gpu_machine()
             .python_env("/home/u/venv")
             .framework("jax", "jax", "0.7.2", "")
             .build();
       },
       Os::linux,
       {"jax-cpu-only-jaxlib"},
       {}},
      {"jax with its CUDA 13 plugin",
       [] {
         return healthy_gpu_machine()
             .python_env("/home/u/venv")
             .framework("jax", "jax", "0.7.2", "13")
             .build();
       },
       Os::linux,
       {},
       {"jax-cpu-only-jaxlib"}},
      {"paddlepaddle (the CPU package) on a GPU machine",
       [] {
         return healthy_gpu_machine()
             .python_env("/home/u/venv")
             .framework("paddle", "paddlepaddle", "3.0.0", "")
             .build();
       },
       Os::linux,
       {"paddle-cpu-package-installed"},
       {}},
      {"paddlepaddle-gpu alone",
       [] {
         return healthy_gpu_machine()
             .python_env("/home/u/venv")
             .framework("paddle", "paddlepaddle-gpu", "3.0.0", "12.6")
             .build();
       },
       Os::linux,
       {},
       {"paddle-cpu-package-installed"}},
      {"onnxruntime and onnxruntime-gpu in one environment",
       [] {
         return healthy_gpu_machine()
             .python_env("/home/u/venv")
             .package("onnxruntime", "1.22.0")
             .package("onnxruntime-gpu", "1.22.0")
             .build();
       },
       Os::linux,
       {"ort-cpu-and-gpu-packages-coexist"},
       {"tensorflow-gpu-package-removed"}},
      {"onnxruntime-gpu alone",
       [] {
         return healthy_gpu_machine()
             .python_env("/home/u/venv")
             .package("onnxruntime-gpu", "1.22.0")
             .build();
       },
       Os::linux,
       {},
       {"ort-cpu-and-gpu-packages-coexist"}},
      {"two CuPy packages",
       [] {
         return healthy_gpu_machine()
             .python_env("/home/u/venv")
             .framework("cupy", "cupy-cuda12x", "13.4.0", "12")
             .framework_cuda_packages({"cupy-cuda12x", "cupy-cuda13x"})
             .build();
       },
       Os::linux,
       {"cupy-multiple-packages"},
       {}},
      {"one CuPy package",
       [] {
         return healthy_gpu_machine()
             .python_env("/home/u/venv")
             .framework("cupy", "cupy-cuda13x", "14.2.0", "13")
             .framework_cuda_packages({"cupy-cuda13x"})
             .build();
       },
       Os::linux,
       {},
       {"cupy-multiple-packages"}},
      {"the removed tensorflow-gpu package",
       [] {
         return healthy_gpu_machine()
             .python_env("/home/u/venv")
             .package("tensorflow-gpu", "2.10.0")
             .build();
       },
       Os::linux,
       {"tensorflow-gpu-package-removed"},
       {"ort-cpu-and-gpu-packages-coexist"}},
      {"a 32-bit Python on Windows",
       [] {
         return FactsBuilder()
             .windows()
             .python_env("/Python311-32", "3.11.7")
             .python_bits(32)
             .build();
       },
       Os::windows,
       {"win-32bit-python-no-torch"},
       {}},
      {"a 64-bit Python on Windows",
       [] { return FactsBuilder().windows().python_env("/Python311", "3.11.7").build(); },
       Os::windows,
       {},
       {"win-32bit-python-no-torch"}},
      {"WSL 1",
       [] { return FactsBuilder().with([](Facts& f) { f.system.wsl.version = 1; }).build(); },
       Os::linux,
       {"wsl1-has-no-gpu"},
       {}},
      {"WSL 2",
       [] {
         return healthy_gpu_machine().with([](Facts& f) { f.system.wsl.version = 2; }).build();
       },
       Os::linux,
       {},
       {"wsl1-has-no-gpu"}},
      {"torch in a container with a 64 MiB /dev/shm",
       [] {
         return healthy_gpu_machine()
             .container("docker")
             .with([](Facts& f) {
               f.system.container.shm_bytes = Fact<uint64_t>::known(64ull << 20, "/dev/shm");
             })
             .python_env("/opt/venv")
             .framework("torch", "torch", "2.11.0+cu130", "13.0", "cu130")
             .build();
       },
       Os::linux,
       {"container-shm-too-small"},
       {"wsl1-has-no-gpu"}},
      {"a container with an 8 GiB /dev/shm",
       [] {
         return healthy_gpu_machine()
             .container("docker")
             .with([](Facts& f) {
               f.system.container.shm_bytes = Fact<uint64_t>::known(8ull << 30, "/dev/shm");
             })
             .build();
       },
       Os::linux,
       {},
       {"container-shm-too-small"}},
      {"Secure Boot on, a GPU on the bus, no nvidia module loaded",
       [] {
         return FactsBuilder()
             .pci_gpu("")
             .with([](Facts& f) {
               f.system.kernel.secure_boot = Fact<bool>::known(true, "/sys/firmware/efi/efivars");
               f.system.kernel.nvidia_modules["/lib/modules/6.8.0/updates/dkms/nvidia.ko"] =
                   "unsigned";
             })
             .build();
       },
       Os::linux,
       {"secure-boot-blocks-unsigned-module"},
       {}},
      {"Secure Boot on with the nvidia module loaded",
       [] {
         return healthy_gpu_machine()
             .pci_gpu()
             .with([](Facts& f) {
               f.system.kernel.secure_boot = Fact<bool>::known(true, "/sys/firmware/efi/efivars");
             })
             .build();
       },
       Os::linux,
       {},
       {"secure-boot-blocks-unsigned-module"}},
      {"Windows without nvcuda.dll",
       [] { return FactsBuilder().windows().build(); },
       Os::windows,
       {"no-nvidia-driver"},
       {}},
      {"Linux facts analysed as Linux never take the Windows check",
       [] { return healthy_gpu_machine().build(); },
       Os::linux,
       {},
       {"no-nvidia-driver"}},
  };
  return r;
}

std::set<std::string> ids_of(const std::vector<Finding>& fs) {
  std::set<std::string> out;
  for (const auto& f : fs) out.insert(f.id);
  return out;
}

TEST(CheckTable, EachRowReportsWhatItSaysAndNotWhatItMustNot) {
  for (const Row& row : rows()) {
    const auto got = ids_of(run_rules(row.facts(), *kb(), row.os));
    for (const auto& id : row.reported) EXPECT_TRUE(got.count(id)) << row.name << ": " << id;
    for (const auto& id : row.absent) EXPECT_FALSE(got.count(id)) << row.name << ": " << id;
  }
}

TEST(CheckTable, EveryCheckReportsOnlyTheIdsItDeclares) {
  for (const Row& row : rows()) {
    for (const auto& o : run_checks(row.facts(), *kb(), row.os)) {
      for (const auto& f : o.findings) {
        EXPECT_TRUE(check_may_report(*o.check, f.id))
            << row.name << ": check " << o.check->name << " reported " << f.id
            << ", which its table entry does not list";
      }
    }
  }
}

std::string digest(const std::vector<Finding>& fs) {
  std::string s;
  for (const auto& f : fs) {
    s += f.id + "|" + severity_name(f.severity) + "|" + f.title + "|" + f.subject + "\n";
    for (const auto& e : f.evidence) s += "  " + e.fact + " <" + e.source + ">\n";
    for (const auto& x : f.fix) s += "  fix " + x.text + " $ " + x.command + "\n";
  }
  return s;
}

// A check given only the facts its entry says it reads reports exactly what it reports with all
// of them: a check that reads an undeclared part of the facts differs on some row.
TEST(CheckTable, EveryCheckReadsOnlyTheFactsItDeclares) {
  for (const Row& row : rows()) {
    const Facts full = row.facts();
    for (const Check& check : check_table()) {
      const Facts limited = facts_limited_to(full, check.reads);
      std::vector<Finding> a, b;
      check.run(RuleContext{full, *kb(), row.os}, a);
      check.run(RuleContext{limited, *kb(), row.os}, b);
      EXPECT_EQ(digest(a), digest(b))
          << row.name << ": check " << check.name << " reads facts its table entry does not list";
    }
  }
}

TEST(CheckTable, NamesAreUniqueAndEveryEntryReportsSomething) {
  std::set<std::string_view> names;
  for (const Check& check : check_table()) {
    EXPECT_TRUE(names.insert(check.name).second) << check.name;
    EXPECT_FALSE(check.emits.empty()) << check.name;
    EXPECT_NE(check.run, nullptr) << check.name;
    EXPECT_FALSE(check.checks.empty()) << check.name;
  }
}

// Ids some check reports that no row above reports yet, or that no row names as absent. The
// list can only shrink: an id added to the catalog and a check comes with its rows, and an id
// that gains both rows must leave the list (the test says which).
const std::set<std::string> kIdsWithoutRowsYet = {
#include "rules/check_table_rows_ratchet.inc"
};

TEST(CheckTable, EveryReportedIdHasARowThatReportsItAndOneThatMustNot) {
  std::set<std::string> reported, absent;
  for (const Row& row : rows()) {
    reported.insert(row.reported.begin(), row.reported.end());
    absent.insert(row.absent.begin(), row.absent.end());
  }
  for (const RuleInfo& r : rule_table()) {
    const std::string id(r.id);
    if (id.starts_with("verify-")) continue;  // results of real GPU work: gpu/verify_test.cc
    const bool covered = reported.count(id) && absent.count(id);
    if (kIdsWithoutRowsYet.count(id)) {
      EXPECT_FALSE(covered) << id
                            << " has its rows now: remove it from "
                               "src/rules/check_table_rows_ratchet.inc";
    } else {
      EXPECT_TRUE(covered) << id << ": add a row that reports it and one that must not ("
                           << (reported.count(id) ? "" : "none reports it")
                           << (absent.count(id) ? "" : " none names it absent") << ")";
    }
  }
  for (const auto& id : kIdsWithoutRowsYet) EXPECT_NE(find_rule(id), nullptr) << id;
}

TEST(CheckTable, LaunchBlockingIsFixedInTheShellOfTheOs) {
  for (const Os os : {Os::linux, Os::windows}) {
    Facts f = healthy_gpu_machine().env_var("CUDA_LAUNCH_BLOCKING", " 1").build();
    const auto out = run_rules(f, *kb(), os);
    const auto it = std::find_if(out.begin(), out.end(), [](const Finding& x) {
      return x.id == "cuda-launch-blocking-set";
    });
    ASSERT_NE(it, out.end());
    ASSERT_EQ(it->fix.size(), 2u);
    for (const auto& step : it->fix) {
      EXPECT_EQ(step.shell, os == Os::windows ? "powershell" : "sh") << step.command;
      EXPECT_EQ(step.command.find(os == Os::windows ? "unset" : "Env:"), std::string::npos)
          << step.command;
    }
  }
}

// ---- the resolver ---------------------------------------------------------------------

Finding finding(FindingId id, Severity s, std::string subject, std::string evidence) {
  Finding f =
      make_finding(id, s, std::string(finding_name(id)) + " about " + subject, std::move(subject));
  f.evidence.push_back({std::move(evidence), "test"});
  return f;
}

TEST(Resolver, ASupersedingFindingAboutTheSameSubjectDropsTheOther) {
  Finding header = finding(FindingId::cudnn_header_library_mismatch, Severity::warning,
                           "/env/site-packages/nvidia/cudnn/lib", "header 9.1, live 9.3");
  Finding mix = finding(FindingId::pip_cudnn_vs_system_cudnn_symbols, Severity::error, "/env",
                        "torch takes libcudnn_ops from /usr/lib");
  mix.covers.push_back("/env/site-packages/nvidia/cudnn/lib");
  auto out = resolve_findings({header, mix});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].id, "pip-cudnn-vs-system-cudnn-symbols");

  // About another directory, or about none: both stay.
  header.subject = "/opt/cudnn/lib";
  EXPECT_EQ(resolve_findings({header, mix}).size(), 2u);
  header.subject.clear();
  EXPECT_EQ(resolve_findings({header, mix}).size(), 2u);
}

TEST(Resolver, FindingsOfOneIdAboutOneSubjectMergeIntoTheFirst) {
  Finding file = finding(FindingId::torch_cpu_build_installed, Severity::warning, "", "+cpu tag");
  file.covers.push_back("/env");
  Finding deep = finding(FindingId::torch_cpu_build_installed, Severity::error, "/env",
                         "Torch not compiled with CUDA enabled");
  Finding again = deep;  // the same evidence twice is kept once
  auto out = resolve_findings({file, deep, again});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].title, file.title);
  EXPECT_EQ(out[0].severity, Severity::error);
  ASSERT_EQ(out[0].evidence.size(), 2u);
  EXPECT_EQ(out[0].evidence[1].fact, "Torch not compiled with CUDA enabled");

  // No subject: never merged, even with the same id.
  Finding a = finding(FindingId::exclusive_compute_mode_busy, Severity::info, "", "gpu 0");
  Finding b = finding(FindingId::exclusive_compute_mode_busy, Severity::info, "", "gpu 1");
  EXPECT_EQ(resolve_findings({a, b}).size(), 2u);
  // Another environment: not merged.
  deep.subject = "/other-env";
  EXPECT_EQ(resolve_findings({file, deep}).size(), 2u);
}

TEST(Resolver, OrdersBySeverityThenIdKeepingTableOrder) {
  auto out =
      resolve_findings({finding(FindingId::cuda_home_not_set, Severity::info, "", "a"),
                        finding(FindingId::no_nvidia_driver, Severity::error, "", "b"),
                        finding(FindingId::cuda_home_not_set, Severity::info, "", "c"),
                        finding(FindingId::cuda_driver_insufficient, Severity::error, "", "d")});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].id, "cuda-driver-insufficient");
  EXPECT_EQ(out[1].id, "no-nvidia-driver");
  EXPECT_EQ(out[2].evidence[0].fact, "a");
  EXPECT_EQ(out[3].evidence[0].fact, "c");
}

}  // namespace
}  // namespace dlenv
