// Linux sysroots for the `dlenv doctor --root` scenario tests (scenarios_test.cc,
// system_scenarios_test.cc, python_scenarios_test.cc, catalog_scenarios_test.cc):
// fake shared libraries built with the system compiler (DLENV_CXX_COMPILER, so the
// ELF reader sees real SONAME/DT_NEEDED entries), the driver's user-space libraries,
// cuDNN 9, the --env-file, and doctor run in-process on the sysroot.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "binfmt/test_builders.h"
#include "cli/cli_test_support.h"
#include "platform/process.h"

namespace dlenv::testing {

template <class Self>
class LinuxSysroot : public SysrootBase<Self> {
 public:
  using SysrootBase<Self>::SysrootBase;

  // A real shared library with a SONAME and DT_NEEDED entries; the needed
  // libraries must already exist (logical paths) as files built by this method.
  Self& shared_lib(const std::string& logical, const std::string& soname,
                   const std::vector<std::string>& needed = {},
                   const std::string& body = "int dlenv_fake(void) { return 0; }",
                   const std::vector<std::string>& link_flags = {}) {
    std::filesystem::create_directories(this->at(logical).parent_path());
    std::filesystem::path src = this->at(logical).string() + ".c";
    std::ofstream(src) << body << "\n";
    std::vector<std::string> argv = {DLENV_CXX_COMPILER,
                                     "-x",
                                     "c",
                                     "-shared",
                                     "-fPIC",
                                     "-Wl,-soname," + soname,
                                     "-o",
                                     this->at(logical).string(),
                                     src.string(),
                                     "-x",
                                     "none",
                                     "-Wl,--no-as-needed"};
    for (const auto& n : needed) argv.push_back(this->at(n).string());
    for (const auto& f : link_flags) argv.push_back(f);
    auto r = run_process(argv);
    if (!r || r->exit_code != 0) {
      throw std::runtime_error("compiler failed: " +
                               (r ? r->err : r.error().message).substr(0, 400));
    }
    std::filesystem::remove(src);
    return self();
  }

  // The driver's user-space libraries (empty files) with their soname links.
  Self& user_driver_libs(const std::string& version,
                         const std::string& dir = "/usr/lib/x86_64-linux-gnu") {
    // Sound ELF files (dlenv checks the CUDA libraries on LD_LIBRARY_PATH), built without a
    // compiler: nothing here is loaded.
    auto elf = [](const char* soname) {
      testbuild::ElfSpec spec;
      spec.soname = soname;
      const auto bytes = testbuild::build_elf(spec).bytes;
      return std::string(bytes.begin(), bytes.end());
    };
    this->file(dir + "/libnvidia-ml.so." + version, elf("libnvidia-ml.so.1"));
    this->link(dir + "/libnvidia-ml.so.1", "libnvidia-ml.so." + version);
    this->file(dir + "/libcuda.so." + version, elf("libcuda.so.1"));
    this->link(dir + "/libcuda.so.1", "libcuda.so." + version);
    return self();
  }

  // cuDNN 9 in `libdir`: every sub-library (unless listed in `skip`), versioned file
  // names with soname links; libcudnn_adv names libcublasLt.so.<cuda_major> in its
  // read-only data like the real one does.
  Self& cudnn9(const std::string& libdir, const std::string& version, int cuda_major,
               const std::set<std::string>& skip = {}) {
    for (std::string sub : {"", "_graph", "_ops", "_cnn", "_adv", "_engines_precompiled",
                            "_engines_runtime_compiled", "_heuristic"}) {
      std::string soname = "libcudnn" + sub + ".so.9";
      if (skip.count(soname)) continue;
      std::string real = "libcudnn" + sub + ".so." + version;
      std::string body = "int dlenv_fake" + sub + "(void) { return 0; }";
      if (sub == "_adv") {
        body += "\nconst char* dlenv_cublaslt_name = \"libcublasLt.so." +
                std::to_string(cuda_major) +
                "\";\nconst char* dlenv_keep(void) { return dlenv_cublaslt_name; }";
      }
      // DT_RUNPATH $ORIGIN, as NVIDIA's cuDNN 9 libraries have: the main library finds its
      // sub-libraries beside it (the loader model resolves them that way).
      shared_lib(libdir + "/" + real, soname, {}, body,
                 {"-Wl,-rpath,$ORIGIN", "-Wl,--enable-new-dtags"});
      this->link(libdir + "/" + soname, real);
    }
    return self();
  }

  // The KEY=VALUE lines doctor() passes with --env-file.
  Self& env(const std::string& text) { return this->file("/env", text); }

 private:
  Self& self() { return static_cast<Self&>(*this); }
};

// `dlenv doctor --root <sysroot> --os linux` (with --env-file when the sysroot has one).
template <class S>
CliRun doctor(const S& s, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"doctor", "--root", s.root().string(), "--os", "linux"};
  if (std::filesystem::exists(s.at("/env"))) {
    args.push_back("--env-file");
    args.push_back(s.at("/env").string());
  }
  for (const auto& e : extra) args.push_back(e);
  return run_cli(args);
}

template <class S>
nlohmann::json doctor_json(const S& s, std::vector<std::string> extra = {}) {
  extra.push_back("--json");
  CliRun r = doctor(s, extra);
  EXPECT_TRUE(r.err.empty()) << r.err;
  return nlohmann::json::parse(r.out);
}

// The finding ids of a JSON report.
inline std::set<std::string> ids(const nlohmann::json& j) {
  std::set<std::string> out;
  for (const auto& f : j["findings"]) out.insert(f["id"].get<std::string>());
  return out;
}

// The severity of the first finding with `id`; "" when there is none.
inline std::string severity_of(const nlohmann::json& j, const std::string& id) {
  for (const auto& f : j["findings"]) {
    if (f["id"] == id) return f["severity"];
  }
  return "";
}

}  // namespace dlenv::testing
