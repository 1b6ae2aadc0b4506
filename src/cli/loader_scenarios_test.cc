// Scenarios for the rules decided by the loader models (rules/loader_model_checks.cc):
// trees with real ELF / PE files (built by binfmt's test builders), run through
// `dlenv doctor --root DIR --os linux|windows --env-file FILE --json` in-process.
// Each rule fires on one tree and stays quiet on a tree that differs only in what
// the loader would resolve.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "binfmt/pe_test_builder.h"
#include "binfmt/test_builders.h"
#include "cli/cli_test_support.h"
#include "cli/setup.h"
#include "kb/kb.h"
#include "probe/probe.h"
#include "rules/rules.h"

namespace dlenv {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::CliRun;
using testing::run_cli;

std::string as_string(const std::vector<uint8_t>& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

class Tree : public testing::SysrootBase<Tree> {
 public:
  Tree() : SysrootBase("loader-scenario") {}

  // An ELF shared library `dir/real` with `soname` (and the soname link to it).
  Tree& so(const std::string& dir, const std::string& real, const std::string& soname,
           std::optional<std::string> runpath = std::nullopt) {
    testbuild::ElfSpec spec;
    spec.soname = soname;
    spec.runpath = std::move(runpath);
    file(dir + "/" + real, as_string(testbuild::build_elf(spec).bytes));
    if (real != soname) link(dir + "/" + soname, real);
    return *this;
  }
  // cuDNN `version` ("8.9.7", "9.1.0") in `dir`: every library the KB lists, except `skip`.
  Tree& cudnn(const std::string& dir, const std::string& version, bool runpath_origin,
              const std::string& skip = "") {
    const std::string major = version.substr(0, version.find('.'));
    for (const auto& sub : cudnn_subs(major)) {
      const std::string soname = "libcudnn" + sub + ".so." + major;
      if (soname == skip) continue;
      so(dir, "libcudnn" + sub + ".so." + version, soname,
         runpath_origin ? std::optional<std::string>("$ORIGIN") : std::nullopt);
    }
    return *this;
  }
  Tree& env(const std::string& text) { return file("/env", text); }
  // An ELF library at `path` with DT_NEEDED entries and DT_RPATH / DT_RUNPATH.
  Tree& elf(const std::string& path, const std::vector<std::string>& needed,
            std::optional<std::string> rpath, std::optional<std::string> runpath = std::nullopt) {
    testbuild::ElfSpec spec;
    spec.soname = path.substr(path.rfind('/') + 1);
    spec.needed = needed;
    spec.rpath = std::move(rpath);
    spec.runpath = std::move(runpath);
    return file(path, as_string(testbuild::build_elf(spec).bytes));
  }
  // The file name suffixes of a cuDNN release's libraries ("" is the main library).
  static std::vector<std::string> cudnn_subs(const std::string& major) {
    if (major == "8") {
      return {"",           "_ops_infer", "_ops_train", "_cnn_infer",
              "_cnn_train", "_adv_infer", "_adv_train"};
    }
    return {"",
            "_graph",
            "_ops",
            "_cnn",
            "_adv",
            "_engines_precompiled",
            "_engines_runtime_compiled",
            "_heuristic"};
  }
  // cuDNN as the nvidia-cudnn-cuNN wheels ship it in `site`: files named by soname only;
  // cuDNN 9's each with DT_RUNPATH $ORIGIN, cuDNN 8's (8.9.x wheels) without one.
  Tree& cudnn_wheel(const std::string& site, const std::string& version,
                    const std::string& package = "nvidia-cudnn-cu13") {
    dist(site, package, version);
    const std::string major = version.substr(0, version.find('.'));
    for (const auto& sub : cudnn_subs(major)) {
      const std::string name = "libcudnn" + sub + ".so." + major;
      so(site + "/nvidia/cudnn/lib", name, name,
         major == "8" ? std::nullopt : std::optional<std::string>("$ORIGIN"));
    }
    return *this;
  }
  Tree& dist(const std::string& site, const std::string& name, const std::string& version) {
    std::string d = name;
    std::replace(d.begin(), d.end(), '-', '_');
    return file(site + "/" + d + "-" + version + ".dist-info/METADATA",
                "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n")
        .file(site + "/" + d + "-" + version + ".dist-info/INSTALLER", "pip\n");
  }
  // A venv at kVenvPrefix (Python 3.12) on VIRTUAL_ENV; returns its site-packages.
  std::string venv() {
    file(std::string(kVenvPrefix) + "/pyvenv.cfg",
         "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n");
    file(std::string(kVenvPrefix) + "/bin/python3", "not really python");
    const std::string site = venv_site();
    fs::create_directories(at(site));
    return site;
  }
  static constexpr const char* kVenvPrefix = "/home/u/venv";
  static std::string venv_site() {
    return std::string(kVenvPrefix) + "/lib/python3.12/site-packages";
  }
  static std::string venv_env() {
    return std::string("HOME=/home/u\nVIRTUAL_ENV=") + kVenvPrefix + "\nPATH=" + kVenvPrefix +
           "/bin:/usr/bin\n";
  }
  // torch `version` (CUDA `cuda`) whose libtorch_cuda.so needs `cudnn_soname` through the
  // wheel's DT_RPATH, as the PyPI wheels are linked.
  Tree& torch(const std::string& site, const std::string& version, const std::string& cuda,
              const std::string& cudnn_soname) {
    dist(site, "torch", version);
    file(site + "/torch/version.py",
         "__version__ = '" + version + "'\ndebug = False\ncuda = '" + cuda + "'\n");
    return elf(site + "/torch/lib/libtorch_cuda.so", {cudnn_soname},
               "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/cublas/lib:$ORIGIN");
  }

  // A PE image (x64 or x86) with a file version, imports ("dll" -> functions) and exports.
  Tree& dll(const std::string& path, std::array<uint16_t, 4> version = {1, 0, 0, 0},
            const std::vector<std::pair<std::string, std::vector<std::string>>>& imports = {},
            const std::vector<std::string>& exports = {}, bool x64 = true, bool is_dll = true) {
    testbuild::PeSpec spec;
    spec.is64 = x64;
    spec.machine = x64 ? 0x8664 : 0x14c;
    spec.dll = is_dll;
    spec.imports = imports;
    if (!exports.empty()) {
      spec.export_name = path.substr(path.rfind('/') + 1);
      for (const auto& e : exports) spec.exports.push_back({e, ""});
    }
    spec.version_resource = true;
    for (size_t i = 0; i < 4; ++i) spec.file_version[i] = version[i];
    return file(path, as_string(testbuild::build_pe(spec).bytes));
  }

  json doctor(Os os) const {
    std::vector<std::string> args = {
        "doctor", "--root", root().string(), "--os", os == Os::windows ? "windows" : "linux",
        "--json"};
    if (fs::exists(at("/env"))) {
      args.push_back("--env-file");
      args.push_back(at("/env").string());
    }
    CliRun r = run_cli(args);
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

// Every string inside `j`, unescaped, one per line (for "contains" checks).
std::string text(const json& j) {
  if (j.is_string()) return j.get<std::string>() + "\n";
  std::string out;
  if (j.is_structured()) {
    for (const auto& x : j) out += text(x);
  }
  return out;
}

// How many findings carry one of `of` (one cause reported once).
int count(const json& j, const std::set<std::string>& of) {
  int n = 0;
  for (const auto& f : j["findings"]) n += of.count(f["id"].get<std::string>()) ? 1 : 0;
  return n;
}

const json* finding(const json& j, const std::string& id) {
  for (const auto& f : j["findings"]) {
    if (f["id"] == id) return &f;
  }
  return nullptr;
}

// The one finding `id` of `j` (one cause, reported once), checked to have `severity`.
const json* sole(const json& j, const std::string& id, const std::string& severity) {
  EXPECT_EQ(count(j, {id}), 1) << j["findings"].dump(2);
  const json* f = finding(j, id);
  if (f) {
    EXPECT_EQ((*f)["severity"], severity) << f->dump(2);
  }
  return f;
}

// ---- Linux -----------------------------------------------------------------------------

const std::string kLinuxLib = "/usr/lib/x86_64-linux-gnu";

TEST(LoaderScenario, PreloadedLibcudaStubIsReported) {
  Tree t;
  t.so(kLinuxLib, "libcuda.so.580.95.05", "libcuda.so.1");
  t.so("/usr/local/cuda-13.0/lib64/stubs", "libcuda.so", "libcuda.so.1");
  t.env("LD_PRELOAD=/usr/local/cuda-13.0/lib64/stubs/libcuda.so\n");
  json j = t.doctor(Os::linux);
  const json* f = finding(j, "libcuda-stub-loaded");
  ASSERT_NE(f, nullptr) << j["findings"].dump(2);
  EXPECT_EQ((*f)["severity"], "error");
  EXPECT_NE((*f)["title"].get<std::string>().find("LD_PRELOAD"), std::string::npos);
  EXPECT_NE(text((*f)["evidence"]).find("/usr/local/cuda-13.0/lib64/stubs/libcuda.so"),
            std::string::npos)
      << f->dump(2);

  Tree etc;  // the same through /etc/ld.so.preload
  etc.so(kLinuxLib, "libcuda.so.580.95.05", "libcuda.so.1");
  etc.so("/usr/local/cuda-13.0/lib64/stubs", "libcuda.so", "libcuda.so.1");
  etc.file("/etc/ld.so.preload", "# site\n/usr/local/cuda-13.0/lib64/stubs/libcuda.so\n");
  const json je = etc.doctor(Os::linux);
  const json* g = finding(je, "libcuda-stub-loaded");
  ASSERT_NE(g, nullptr);
  EXPECT_NE(text((*g)["fix"]).find("/etc/ld.so.preload"), std::string::npos) << g->dump(2);
}

TEST(LoaderScenario, PreloadingTheRealDriverIsNotAStub) {
  Tree t;
  t.so(kLinuxLib, "libcuda.so.580.95.05", "libcuda.so.1");
  t.so("/usr/local/cuda-13.0/lib64/stubs", "libcuda.so", "libcuda.so.1");
  t.env("LD_PRELOAD=libcuda.so.1\n");  // a bare name: searched, finds the real one
  EXPECT_FALSE(ids(t.doctor(Os::linux)).count("libcuda-stub-loaded"));
}

TEST(LoaderScenario, PreloadedCudnnOfAnotherVersionShadowsTheOtherCopy) {
  Tree t;
  t.cudnn(kLinuxLib, "9.10.2", true);
  t.cudnn("/opt/cudnn/lib", "9.1.0", true);
  t.env("LD_PRELOAD=/opt/cudnn/lib/libcudnn.so.9\n");
  json j = t.doctor(Os::linux);
  const json* f = finding(j, "pip-cudnn-vs-system-cudnn-symbols");
  ASSERT_NE(f, nullptr) << j["findings"].dump(2);
  EXPECT_NE((*f)["title"].get<std::string>().find("LD_PRELOAD forces cuDNN 9.1.0"),
            std::string::npos)
      << f->dump(2);
  // The loader model's by-name resolution names the preload as the reason.
  EXPECT_NE(text((*f)["evidence"]).find("preloaded in the process"), std::string::npos)
      << f->dump(2);

  Tree same;  // the preloaded copy is the only one: nothing to mix
  same.cudnn("/opt/cudnn/lib", "9.1.0", true);
  same.env("LD_PRELOAD=/opt/cudnn/lib/libcudnn.so.9\nCUDNN_HOME=/opt/cudnn\n");
  EXPECT_FALSE(ids(same.doctor(Os::linux)).count("pip-cudnn-vs-system-cudnn-symbols"));
}

TEST(LoaderScenario, LdLibraryPathEntriesThatAreNotFixedDirectories) {
  Tree t;
  t.env("LD_LIBRARY_PATH=$ORIGIN/../lib::lib:/usr/local/cuda/lib64:$CUDA_HOME/lib64\n");
  json j = t.doctor(Os::linux);
  const json* f = finding(j, "ld-library-path-unfixed-entry");
  ASSERT_NE(f, nullptr) << j["findings"].dump(2);
  EXPECT_EQ((*f)["severity"], "warning");
  const std::string e = text((*f)["evidence"]);
  for (const char* part : {"entry 1 '$ORIGIN/../lib'", "entry 2 ''", "entry 3 'lib'",
                           "entry 5 '$CUDA_HOME/lib64'", "program's executable"}) {
    EXPECT_NE(e.find(part), std::string::npos) << part << "\n" << f->dump(2);
  }
  EXPECT_EQ(e.find("entry 4"), std::string::npos) << f->dump(2);
  EXPECT_NE(text((*f)["fix"]).find("export LD_LIBRARY_PATH='/usr/local/cuda/lib64'"),
            std::string::npos)
      << f->dump(2);

  Tree ok;
  ok.env("LD_LIBRARY_PATH=/usr/local/cuda/lib64:/opt/x/lib\n");
  EXPECT_FALSE(ids(ok.doctor(Os::linux)).count("ld-library-path-unfixed-entry"));
}

// cuDNN 8's main library has no RUNPATH: its sub-libraries, all present beside it,
// are found only when the directory is searched (LD_LIBRARY_PATH, the cache).
TEST(LoaderScenario, CudnnSublibrariesPresentButNotResolvableAreMissing) {
  Tree t;
  t.cudnn("/opt/cudnn8/lib", "8.9.7", false);
  t.env("CUDNN_HOME=/opt/cudnn8\n");
  json j = t.doctor(Os::linux);
  const json* f = finding(j, "cudnn-sublibrary-missing");
  ASSERT_NE(f, nullptr) << j["findings"].dump(2);
  EXPECT_NE(text((*f)["evidence"]).find("present in /opt/cudnn8/lib but not resolvable"),
            std::string::npos)
      << f->dump(2);
  EXPECT_NE(text((*f)["fix"]).find("ldconfig"), std::string::npos);

  Tree on_path;  // the same files, the directory on LD_LIBRARY_PATH: resolved
  on_path.cudnn("/opt/cudnn8/lib", "8.9.7", false);
  on_path.env("CUDNN_HOME=/opt/cudnn8\nLD_LIBRARY_PATH=/opt/cudnn8/lib\n");
  json k = on_path.doctor(Os::linux);
  EXPECT_FALSE(ids(k).count("cudnn-sublibrary-missing")) << k["findings"].dump(2);

  Tree v9;  // cuDNN 9 has DT_RUNPATH $ORIGIN: found beside it without any search path
  v9.cudnn("/opt/cudnn9/lib", "9.1.0", true);
  v9.env("CUDNN_HOME=/opt/cudnn9\n");
  EXPECT_FALSE(ids(v9.doctor(Os::linux)).count("cudnn-sublibrary-missing"));
}

TEST(LoaderScenario, CudnnSublibraryAbsentIsMissingAndOneResolvedElsewhereIsNot) {
  Tree t;
  t.cudnn("/opt/cudnn9/lib", "9.1.0", true, "libcudnn_cnn.so.9");
  t.env("CUDNN_HOME=/opt/cudnn9\n");
  const json j = t.doctor(Os::linux);
  const json* f = finding(j, "cudnn-sublibrary-missing");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(text((*f)["evidence"]).find("missing: libcudnn_cnn.so.9"), std::string::npos)
      << f->dump(2);

  Tree elsewhere;  // absent beside the main library, but LD_LIBRARY_PATH supplies it
  elsewhere.cudnn("/opt/cudnn9/lib", "9.1.0", true, "libcudnn_cnn.so.9");
  elsewhere.so("/opt/extra", "libcudnn_cnn.so.9.1.0", "libcudnn_cnn.so.9", "$ORIGIN");
  elsewhere.env("CUDNN_HOME=/opt/cudnn9\nLD_LIBRARY_PATH=/opt/extra\n");
  json k = elsewhere.doctor(Os::linux);
  for (const auto& x : k["findings"]) {
    if (x["id"] != "cudnn-sublibrary-missing") continue;
    // Only the copy in /opt/extra itself (a lone sub-library) may be reported.
    EXPECT_EQ(x["title"].get<std::string>().find("/opt/cudnn9/lib"), std::string::npos)
        << x.dump(2);
  }
}

// ---- Linux: the frameworks of a Python environment, through the loader model -------------

// torch 2.11 with the cuDNN 9.19 wheel (reached by libtorch_cuda.so's DT_RPATH) and a
// system cuDNN `system_version` in /opt/cudnn/lib; `llp` is LD_LIBRARY_PATH ("" unset).
void torch_with_system_cudnn(Tree& t, const std::string& system_version, const std::string& llp) {
  const std::string site = t.venv();
  t.torch(site, "2.11.0+cu130", "13.0", "libcudnn.so.9").cudnn_wheel(site, "9.19.0.56");
  t.cudnn("/opt/cudnn/lib", system_version, true);
  t.so("/opt/other/lib", "libfoo.so.1", "libfoo.so.1");
  t.env(Tree::venv_env() + (llp.empty() ? "" : "LD_LIBRARY_PATH=" + llp + "\n"));
}

// The same machine with torch's wheel pins (Requires-Dist nvidia-cudnn-cu13): the pin rule
// would say the same thing again ("LD_LIBRARY_PATH puts cuDNN 9.1.0 ahead of the wheel torch
// was built for"); the loader model's finding is the one kept.
TEST(LoaderScenario, OneFindingWhenTheWheelPinAndTheLoaderModelSeeTheSameCause) {
  Tree t;
  torch_with_system_cudnn(t, "9.1.0", "/opt/cudnn/lib:/usr/local/cuda/lib64");
  const std::string site = t.venv();
  t.file(site + "/torch-2.11.0+cu130.dist-info/METADATA",
         "Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0+cu130\n"
         "Requires-Dist: nvidia-cudnn-cu13==9.19.0.56; platform_system == \"Linux\"\n");
  json j = t.doctor(Os::linux);
  EXPECT_EQ(count(j, {"pip-cudnn-vs-system-cudnn-symbols"}), 1) << j["findings"].dump(2);
  EXPECT_EQ(count(j, {"torch-cudnn-runtime-older-than-build"}), 0) << j["findings"].dump(2);
}

// libcudnn.so.9 comes from the wheel (DT_RPATH is searched before LD_LIBRARY_PATH), but it
// opens its sub-libraries through its DT_RUNPATH $ORIGIN, which comes after LD_LIBRARY_PATH:
// the system's 9.1 sub-libraries load with the wheel's 9.19 main library.
TEST(LoaderScenario, LdLibraryPathMixesSystemCudnnSublibrariesIntoTheTorchWheel) {
  Tree t;
  torch_with_system_cudnn(t, "9.1.0", "/opt/cudnn/lib:/usr/local/cuda/lib64");
  json j = t.doctor(Os::linux);
  ASSERT_EQ(count(j, {"pip-cudnn-vs-system-cudnn-symbols"}), 1) << j["findings"].dump(2);
  const json& f = *finding(j, "pip-cudnn-vs-system-cudnn-symbols");  // one finding, one cause
  EXPECT_NE(f["title"].get<std::string>().find("LD_LIBRARY_PATH puts cuDNN 9.1.0 (/opt/cudnn/lib) "
                                               "ahead of the cuDNN 9.19.0.56 wheel"),
            std::string::npos)
      << f.dump(2);
  const std::string e = text(f["evidence"]);
  const std::string wheel = "/home/u/venv/lib/python3.12/site-packages/nvidia/cudnn/lib";
  EXPECT_NE(e.find("libcudnn.so.9 9.19.0.56 from " + wheel +
                   "/libcudnn.so.9 (DT_RPATH of libtorch_cuda.so"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("libcudnn_ops.so.9 9.1.0 from /opt/cudnn/lib/libcudnn_ops.so.9 "
                   "(LD_LIBRARY_PATH)"),
            std::string::npos)
      << e;
  // The fix removes exactly that entry.
  EXPECT_NE(text(f["fix"]).find("export LD_LIBRARY_PATH='/usr/local/cuda/lib64'"),
            std::string::npos)
      << f.dump(2);
}

TEST(LoaderScenario, TorchWheelCudnnIsNotMixedWithoutLdLibraryPathOrWithTheSameRelease) {
  for (const auto& [version, llp] : std::vector<std::pair<std::string, std::string>>{
           {"9.1.0", ""}, {"9.19.0", "/opt/cudnn/lib"}, {"9.1.0", "/opt/other/lib"}}) {
    Tree t;
    torch_with_system_cudnn(t, version, llp);
    json j = t.doctor(Os::linux);
    EXPECT_FALSE(ids(j).count("pip-cudnn-vs-system-cudnn-symbols"))
        << version << " LD_LIBRARY_PATH=" << llp << "\n"
        << j["findings"].dump(2);
  }
}

// JAX's CUDA plugin reaches the wheels through DT_RUNPATH only: LD_LIBRARY_PATH shadows even
// the main library.
TEST(LoaderScenario, LdLibraryPathShadowsTheWholeCudnnOfARunpathOnlyFramework) {
  Tree t;
  const std::string site = t.venv();
  t.dist(site, "jax", "0.7.2")
      .dist(site, "jaxlib", "0.7.2")
      .dist(site, "jax-cuda13-plugin", "0.7.2");
  t.elf(site + "/jax_plugins/xla_cuda13/xla_cuda_plugin.so", {"libcudnn.so.9"}, std::nullopt,
        "$ORIGIN/../../nvidia/cudnn/lib");
  t.cudnn_wheel(site, "9.19.0.56").cudnn("/opt/cudnn/lib", "9.14.0", true);
  t.env(Tree::venv_env() + "LD_LIBRARY_PATH=/opt/cudnn/lib\n");
  json j = t.doctor(Os::linux);
  const json* f = finding(j, "pip-cudnn-vs-system-cudnn-symbols");
  ASSERT_NE(f, nullptr) << j["findings"].dump(2);
  EXPECT_NE(text((*f)["evidence"])
                .find("jax (xla_cuda_plugin.so): libcudnn.so.9 9.14.0 from "
                      "/opt/cudnn/lib/libcudnn.so.9 (LD_LIBRARY_PATH)"),
            std::string::npos)
      << f->dump(2);
  EXPECT_NE(text((*f)["fix"]).find("unset LD_LIBRARY_PATH"), std::string::npos) << f->dump(2);
}

// The toolkit's stubs directory first on LD_LIBRARY_PATH (with the libcuda.so.1 link
// ldconfig or a Dockerfile made there): dlopen("libcuda.so.1") takes the stub.
TEST(LoaderScenario, LdLibraryPathPutsTheLibcudaStubFirst) {
  auto tree = [](Tree& t, const std::string& llp) {
    t.so(kLinuxLib, "libcuda.so.580.95.05", "libcuda.so.1");
    t.so("/usr/local/cuda-13.0/lib64/stubs", "libcuda.so", "libcuda.so.1");
    t.env("LD_LIBRARY_PATH=" + llp + "\n");
  };
  // The toolkit's stubs directory as installed (libcuda.so only) first on LD_LIBRARY_PATH:
  // dlopen("libcuda.so.1") finds the driver, dlopen("libcuda.so") the stub.
  Tree plain;
  plain.so(kLinuxLib, "libcuda.so.580.95.05", "libcuda.so.1");
  plain.elf("/usr/local/cuda-13.0/lib64/stubs/libcuda.so", {}, std::nullopt);
  plain.env("LD_LIBRARY_PATH=/usr/local/cuda-13.0/lib64/stubs\n");
  json p = plain.doctor(Os::linux);
  const json* u = finding(p, "libcuda-stub-loaded");
  ASSERT_NE(u, nullptr) << p["findings"].dump(2);
  EXPECT_EQ(
      (*u)["title"].get<std::string>().find("dlopen(\"libcuda.so\") picks the link-time stub in "
                                            "/usr/local/cuda-13.0/lib64/stubs"),
      0u)
      << u->dump(2);

  Tree t;
  tree(t, "/usr/local/cuda-13.0/lib64/stubs:/usr/local/cuda-13.0/lib64");
  json j = t.doctor(Os::linux);
  EXPECT_EQ(count(j, {"libcuda-stub-loaded"}), 1) << j["findings"].dump(2);
  const json* f = finding(j, "libcuda-stub-loaded");
  ASSERT_NE(f, nullptr) << j["findings"].dump(2);
  EXPECT_EQ((*f)["severity"], "error");
  EXPECT_NE(text((*f)["evidence"]).find("the real driver library " + kLinuxLib + "/libcuda.so.1"),
            std::string::npos)
      << f->dump(2);
  EXPECT_NE(text((*f)["fix"]).find("export LD_LIBRARY_PATH='/usr/local/cuda-13.0/lib64'"),
            std::string::npos)
      << f->dump(2);

  Tree after;  // the driver's own libcuda.so link is found first too
  tree(after, kLinuxLib + ":/usr/local/cuda-13.0/lib64/stubs");
  after.link(kLinuxLib + "/libcuda.so", "libcuda.so.1");
  json k = after.doctor(Os::linux);
  EXPECT_FALSE(ids(k).count("libcuda-stub-loaded")) << k["findings"].dump(2);
}

// /etc/ld.so.conf.d names the stubs directory, so ldconfig cached its libcuda.so.1 link:
// the cache comes before the default directories that hold the driver's copy.
TEST(LoaderScenario, LdSoConfPutsTheLibcudaStubInTheCache) {
  const std::string stubs = "/usr/local/cuda-13.0/lib64/stubs";
  Tree t;
  t.so(kLinuxLib, "libcuda.so.580.95.05", "libcuda.so.1");
  t.so(stubs, "libcuda.so", "libcuda.so.1");
  t.file("/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
  t.file("/etc/ld.so.conf.d/cuda-stubs.conf", stubs + "\n");
  t.file("/etc/ld.so.cache",
         as_string(testbuild::build_ld_cache({{0x0303, "libcuda.so.1", stubs + "/libcuda.so.1", 0},
                                              {0x0303, "libcuda.so", stubs + "/libcuda.so", 0}},
                                             testbuild::CacheFormat::kNew)));
  json j = t.doctor(Os::linux);
  const json* f = finding(j, "libcuda-stub-loaded");
  ASSERT_NE(f, nullptr) << j["findings"].dump(2);
  EXPECT_EQ((*f)["severity"], "error");
  EXPECT_NE(text((*f)["evidence"]).find("ld.so.cache maps"), std::string::npos) << f->dump(2);
  EXPECT_NE(text((*f)["fix"]).find("/etc/ld.so.conf.d"), std::string::npos) << f->dump(2);
}

// torch 2.0 for CUDA 11.8 links libcudnn.so.8, found only through its wheel's DT_RPATH.
TEST(LoaderScenario, FrameworkCudnn8NotResolvableIsNamedWithTheSearchedDirectories) {
  Tree t;
  const std::string site = t.venv();
  t.torch(site, "2.0.1+cu118", "11.8", "libcudnn.so.8");
  t.env(Tree::venv_env());
  json j = t.doctor(Os::linux);
  const json* f = finding(j, "libcudnn8-not-found");
  ASSERT_NE(f, nullptr) << j["findings"].dump(2);
  const std::string e = text((*f)["evidence"]);
  EXPECT_NE(e.find("libtorch_cuda.so lists libcudnn.so.8 as DT_NEEDED"), std::string::npos) << e;
  EXPECT_NE(e.find(site + "/nvidia/cudnn/lib"), std::string::npos) << e;  // searched
  EXPECT_NE(text((*f)["fix"]).find("install 'nvidia-cudnn-cu11==8.9.*'"), std::string::npos)
      << f->dump(2);

  Tree ok;  // the cuDNN 8 wheel is where the DT_RPATH points
  const std::string site2 = ok.venv();
  ok.torch(site2, "2.0.1+cu118", "11.8", "libcudnn.so.8");
  ok.dist(site2, "nvidia-cudnn-cu11", "8.9.7.29");
  ok.so(site2 + "/nvidia/cudnn/lib", "libcudnn.so.8", "libcudnn.so.8");
  ok.env(Tree::venv_env());
  json k = ok.doctor(Os::linux);
  EXPECT_FALSE(ids(k).count("libcudnn8-not-found")) << k["findings"].dump(2);
}

// ctranslate2 3.x opens libcudnn.so.8 at run time; a copy exists in /opt/cudnn8/lib, off
// every search path.
TEST(LoaderScenario, Ctranslate2DlopensCudnn8ThatOnlyExistsOffTheSearchPath) {
  auto tree = [](Tree& t, const std::string& extra_env) {
    const std::string site = t.venv();
    t.dist(site, "ctranslate2", "3.24.0");
    t.elf(site + "/ctranslate2.libs/libctranslate2-d3e4a5b6.so.3.24.0", {"libcublas.so.11"},
          std::nullopt, "$ORIGIN");
    t.cudnn("/opt/cudnn8/lib", "8.9.7", false);
    t.env(Tree::venv_env() + "CUDNN_HOME=/opt/cudnn8\n" + extra_env);
  };
  Tree t;
  tree(t, "");
  json j = t.doctor(Os::linux);
  EXPECT_EQ(count(j, {"libcudnn8-not-found", "ctranslate2-cudnn8-vs-9"}), 1)  // one cause
      << j["findings"].dump(2);
  const json* f = finding(j, "libcudnn8-not-found");
  ASSERT_NE(f, nullptr) << j["findings"].dump(2);
  EXPECT_NE(text((*f)["evidence"]).find("opens libcudnn.so.8 at run time (dlopen)"),
            std::string::npos)
      << f->dump(2);
  EXPECT_NE(text((*f)["fix"]).find("export LD_LIBRARY_PATH='/opt/cudnn8/lib'"), std::string::npos)
      << f->dump(2);

  Tree ok;
  tree(ok, "LD_LIBRARY_PATH=/opt/cudnn8/lib\n");
  json k = ok.doctor(Os::linux);
  EXPECT_FALSE(ids(k).count("libcudnn8-not-found")) << k["findings"].dump(2);
}

// ---- Linux: paddle, CuPy, TensorFlow and ONNX Runtime, laid out as their wheels are ----------

// paddlepaddle-gpu 3.x (pip CUDA libraries): paddle/base/libpaddle.so opens libcudnn.so.N by
// name at run time (phi/backends/dynload); the wheel's python/setup.py patches it with
// `patchelf --set-rpath '$ORIGIN/../../nvidia/cuda_runtime/lib:...:$ORIGIN/../../nvidia/cudnn/lib
// :...:$ORIGIN/../libs/'` (PaddlePaddle/Paddle python/setup.py; patchelf writes DT_RUNPATH).
void paddle3(Tree& t, bool cudnn_wheel, const std::string& extra_env = "") {
  const std::string site = t.venv();
  t.dist(site, "paddlepaddle-gpu", "3.0.0")
      .file(site + "/paddle/version/__init__.py",
            "full_version = '3.0.0'\nwith_gpu = 'ON'\ncuda_version = '12.6'\n"
            "cudnn_version = '9.5.1'\nwith_pip_cuda_libraries = 'ON'\n");
  t.elf(site + "/paddle/base/libpaddle.so", {}, std::nullopt,
        "$ORIGIN/../../nvidia/cuda_runtime/lib:$ORIGIN/../../nvidia/cublas/lib:"
        "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/curand/lib:$ORIGIN/../libs/");
  if (cudnn_wheel) t.cudnn_wheel(site, "9.5.1.17", "nvidia-cudnn-cu12");
  // The machine's own cuDNN is 8.9 (libcudnn.so.8 only): not what paddle 3 opens.
  t.cudnn(kLinuxLib, "8.9.7", false);
  t.env(Tree::venv_env() + extra_env);
}

TEST(LoaderScenario, PaddleThreeOpensCudnn9ThatNoSearchReaches) {
  Tree t;
  paddle3(t, false);
  json j = t.doctor(Os::linux);
  const json* f = sole(j, "libcudnn8-not-found", "error");
  ASSERT_NE(f, nullptr) << j["findings"].dump(2);
  EXPECT_NE((*f)["title"].get<std::string>().find("paddle in "), std::string::npos) << f->dump(2);
  EXPECT_NE((*f)["title"].get<std::string>().find("needs libcudnn.so.9"), std::string::npos)
      << f->dump(2);
  const std::string e = text((*f)["evidence"]);
  EXPECT_NE(e.find("libpaddle.so opens libcudnn.so.9 at run time (dlopen)"), std::string::npos)
      << e;
  const std::string site = Tree::venv_site();
  // Searched through libpaddle.so's DT_RUNPATH (LD_LIBRARY_PATH is not set).
  EXPECT_NE(e.find(site + "/nvidia/cudnn/lib  (DT_RUNPATH of libpaddle.so)"), std::string::npos)
      << e;
  EXPECT_EQ(e.find("LD_LIBRARY_PATH)"), std::string::npos) << e;
  EXPECT_NE(e.find(site + "/paddle/base/libpaddle.so"), std::string::npos) << e;
  EXPECT_NE(text((*f)["fix"]).find("install 'nvidia-cudnn-cu12==9.*'"), std::string::npos)
      << f->dump(2);
  // libpaddle.so's DT_RUNPATH reaches the wheel's directory: the wheel alone is the fix.
  EXPECT_EQ(text((*f)["fix"]).find("export LD_LIBRARY_PATH='" + site), std::string::npos)
      << f->dump(2);

  Tree ok;  // the nvidia-cudnn-cu12 9.5 wheel where libpaddle.so's DT_RUNPATH points
  paddle3(ok, true);
  json k = ok.doctor(Os::linux);
  EXPECT_FALSE(ids(k).count("libcudnn8-not-found")) << k["findings"].dump(2);
}

// CuPy v13 (cupy-cuda12x): cupy_backends/cuda/libs/cudnn.cpython-*.so lists libcudnn.so.8 as
// DT_NEEDED and carries no DT_RPATH / DT_RUNPATH to the NVIDIA wheels (CuPy preloads its own
// cuDNN from ~/.cupy/cuda_lib, else the loader's search decides).
void cupy13(Tree& t, const std::string& extra_env) {
  const std::string site = t.venv();
  t.dist(site, "cupy-cuda12x", "13.3.0");
  t.elf(site + "/cupy_backends/cuda/libs/cudnn.cpython-312-x86_64-linux-gnu.so", {"libcudnn.so.8"},
        std::nullopt);
  t.cudnn(kLinuxLib, "9.1.0", true);           // the system's cuDNN is 9
  t.cudnn("/opt/cudnn8/lib", "8.9.7", false);  // a cuDNN 8 off every search path
  t.env(Tree::venv_env() + "CUDNN_HOME=/opt/cudnn8\n" + extra_env);
}

TEST(LoaderScenario, CupyCudnnModuleNeedsCudnn8ThatOnlyExistsOffTheSearchPath) {
  Tree t;
  cupy13(t, "");
  json j = t.doctor(Os::linux);
  const json* f = sole(j, "libcudnn8-not-found", "error");
  ASSERT_NE(f, nullptr) << j["findings"].dump(2);
  EXPECT_EQ((*f)["title"].get<std::string>().find("cupy in "), 0u) << f->dump(2);
  const std::string e = text((*f)["evidence"]);
  EXPECT_NE(e.find("cudnn.cpython-312-x86_64-linux-gnu.so lists libcudnn.so.8 as DT_NEEDED"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("a copy exists in /opt/cudnn8/lib"), std::string::npos) << e;
  EXPECT_NE(text((*f)["fix"]).find("export LD_LIBRARY_PATH='/opt/cudnn8/lib'"), std::string::npos)
      << f->dump(2);
  // The module has no path into site-packages/nvidia: installing the cuDNN 8 wheel is not enough
  // by itself, the fix puts its directory on LD_LIBRARY_PATH too.
  const std::string site = Tree::venv_site();
  EXPECT_NE(text((*f)["fix"])
                .find("install 'nvidia-cudnn-cu12==8.9.*' && export "
                      "LD_LIBRARY_PATH='" +
                      site + "/nvidia/cudnn/lib'"),
            std::string::npos)
      << f->dump(2);

  Tree ok;
  cupy13(ok, "LD_LIBRARY_PATH=/opt/cudnn8/lib\n");
  json k = ok.doctor(Os::linux);
  EXPECT_FALSE(ids(k).count("libcudnn8-not-found")) << k["findings"].dump(2);
}

// TensorFlow 2.15 opens libcudnn.so.8 by name (tsl dso_loader; build_info cudnn_version '8').
// tensorflow[and-cuda] 2.15 pins nvidia-cudnn-cu12==8.9.4.25; the wheel's extension reaches it
// through DT_RUNPATH $ORIGIN/../../nvidia/cudnn/lib (TF's cuda_cudnn.BUILD.tpl rpath linkopts;
// RUNPATH form as in tensorflow/tensorflow#63646). A later `pip install torch` replaces that
// wheel by nvidia-cudnn-cu12 9.x, which has libcudnn.so.9 only.
void tf215(Tree& t, const std::string& cudnn_wheel_version) {
  const std::string site = t.venv();
  t.dist(site, "tensorflow", "2.15.0")
      .file(site + "/tensorflow/python/platform/build_info.py",
            "build_info = {'cpu_compiler': '/usr/bin/gcc', 'cuda_version': '12.2', "
            "'cudnn_version': '8', 'is_cuda_build': True, 'is_rocm_build': False, "
            "'is_tensorrt_build': True}\n");
  t.elf(site + "/tensorflow/python/_pywrap_tensorflow_internal.so",
        {"libtensorflow_framework.so.2"}, std::nullopt,
        "$ORIGIN/:$ORIGIN/..:$ORIGIN/../../nvidia/cublas/lib:$ORIGIN/../../nvidia/cuda_runtime/lib:"
        "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../nvidia/nccl/lib");
  t.so(site + "/tensorflow", "libtensorflow_framework.so.2", "libtensorflow_framework.so.2");
  t.cudnn_wheel(site, cudnn_wheel_version, "nvidia-cudnn-cu12");
  t.dist(site, "nvidia-cuda-runtime-cu12", "12.2.140")
      .so(site + "/nvidia/cuda_runtime/lib", "libcudart.so.12", "libcudart.so.12");
  t.env(Tree::venv_env());
}

TEST(LoaderScenario, Tensorflow215NeedsCudnn8AndOnlyTheCudnn9WheelIsThere) {
  Tree t;
  tf215(t, "9.1.0.70");
  json j = t.doctor(Os::linux);
  const json* f = sole(j, "libcudnn8-not-found", "error");
  ASSERT_NE(f, nullptr) << j["findings"].dump(2);
  EXPECT_EQ((*f)["title"].get<std::string>().find("tensorflow in "), 0u) << f->dump(2);
  EXPECT_NE((*f)["title"].get<std::string>().find("needs libcudnn.so.8"), std::string::npos);
  const std::string e = text((*f)["evidence"]);
  EXPECT_NE(e.find("_pywrap_tensorflow_internal.so opens libcudnn.so.8 at run time (dlopen)"),
            std::string::npos)
      << e;
  const std::string site = Tree::venv_site();
  EXPECT_NE(e.find(site + "/nvidia/cudnn/lib"), std::string::npos) << e;
  EXPECT_NE(text((*f)["fix"]).find("install 'nvidia-cudnn-cu12==8.9.*'"), std::string::npos)
      << f->dump(2);

  Tree ok;  // the 8.9 wheel tensorflow[and-cuda]==2.15.0 installs
  tf215(ok, "8.9.4.25");
  json k = ok.doctor(Os::linux);
  EXPECT_FALSE(ids(k).count("libcudnn8-not-found")) << k["findings"].dump(2);
}

// With a GPU (driver 580) the older file rules (paddle-cannot-load-cudnn,
// tf-cannot-dlopen-gpu-libraries) look at the same missing cuDNN: one finding per cause.
TEST(LoaderScenario, OneFindingForAFrameworksMissingCudnnWithAGpu) {
  auto gpu = [](Tree& t) {
    t.file("/proc/driver/nvidia/version",
           "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  "
           "(dvs-builder@U22-I3-AM02-24-3)  Wed Oct  1 00:00:00 UTC 2025\n")
        .file("/sys/module/nvidia/version", "580.95.05\n")
        .file("/proc/driver/nvidia/gpus/0000:18:00.0/information",
              "Model: \t\t NVIDIA H200\nBus Location: \t 0000:18:00.0\nDevice Minor: \t 0\n");
    t.so(kLinuxLib, "libcuda.so.580.95.05", "libcuda.so.1");
  };
  Tree p;
  paddle3(p, false);
  gpu(p);
  json j = p.doctor(Os::linux);
  EXPECT_EQ(count(j, {"libcudnn8-not-found", "paddle-cannot-load-cudnn"}), 1)
      << j["findings"].dump(2);
  Tree t;
  tf215(t, "9.1.0.70");
  gpu(t);
  json k = t.doctor(Os::linux);
  EXPECT_EQ(count(k, {"libcudnn8-not-found", "tf-cannot-dlopen-gpu-libraries"}), 1)
      << k["findings"].dump(2);
}

// onnxruntime-gpu 1.20 (CUDA 12): onnxruntime/capi/libonnxruntime_providers_cuda.so lists
// libcublasLt.so.12, libcublas.so.12, libcudnn.so.9 and libcudart.so.12 as DT_NEEDED, with no
// path to the NVIDIA wheels ("Failed to load library libonnxruntime_providers_cuda.so with error:
// libcudnn.so.9: cannot open shared object file", microsoft/onnxruntime#22968 and others; the
// documented way is LD_LIBRARY_PATH or ort.preload_dlls()). Here LD_LIBRARY_PATH names the
// wheel directories, but a cuDNN 9.1 unpacked into the toolkit's lib64 comes `first`.
void ort120(Tree& t, bool toolkit_first) {
  const std::string site = t.venv();
  t.dist(site, "onnxruntime-gpu", "1.20.1");
  t.elf(site + "/onnxruntime/capi/libonnxruntime_providers_cuda.so",
        {"libcublasLt.so.12", "libcublas.so.12", "libcudnn.so.9", "libcudart.so.12"}, std::nullopt);
  t.cudnn_wheel(site, "9.5.1.17", "nvidia-cudnn-cu12");
  t.dist(site, "nvidia-cublas-cu12", "12.6.4.1")
      .so(site + "/nvidia/cublas/lib", "libcublas.so.12", "libcublas.so.12", "$ORIGIN")
      .so(site + "/nvidia/cublas/lib", "libcublasLt.so.12", "libcublasLt.so.12", "$ORIGIN");
  t.dist(site, "nvidia-cuda-runtime-cu12", "12.6.77")
      .so(site + "/nvidia/cuda_runtime/lib", "libcudart.so.12", "libcudart.so.12");
  t.cudnn("/usr/local/cuda-12.6/lib64", "9.1.0", true);
  const std::string wheels = site + "/nvidia/cudnn/lib:" + site + "/nvidia/cublas/lib:" + site +
                             "/nvidia/cuda_runtime/lib";
  t.env(Tree::venv_env() + "LD_LIBRARY_PATH=" +
        (toolkit_first ? "/usr/local/cuda-12.6/lib64:" + wheels
                       : wheels + ":/usr/local/cuda-12.6/lib64") +
        "\n");
}

TEST(LoaderScenario, OnnxRuntimeProviderTakesTheToolkitsCudnnAheadOfItsWheel) {
  Tree t;
  ort120(t, true);
  json j = t.doctor(Os::linux);
  const json* f = sole(j, "pip-cudnn-vs-system-cudnn-symbols", "error");
  ASSERT_NE(f, nullptr) << j["findings"].dump(2);
  EXPECT_NE((*f)["title"].get<std::string>().find(
                "LD_LIBRARY_PATH puts cuDNN 9.1.0 (/usr/local/cuda-12.6/lib64) ahead of the "
                "cuDNN 9.5.1.17 wheel"),
            std::string::npos)
      << f->dump(2);
  EXPECT_NE(text((*f)["evidence"])
                .find("onnxruntime (libonnxruntime_providers_cuda.so): libcudnn.so.9 9.1.0 from "
                      "/usr/local/cuda-12.6/lib64/libcudnn.so.9 (LD_LIBRARY_PATH)"),
            std::string::npos)
      << f->dump(2);
  const std::string site = Tree::venv_site();
  EXPECT_NE(text((*f)["fix"]).find("export LD_LIBRARY_PATH='" + site + "/nvidia/cudnn/lib:"),
            std::string::npos)
      << f->dump(2);

  Tree ok;  // the wheel directories first: every cuDNN library from the 9.5 wheel
  ort120(ok, false);
  json k = ok.doctor(Os::linux);
  EXPECT_FALSE(ids(k).count("pip-cudnn-vs-system-cudnn-symbols")) << k["findings"].dump(2);
}

// The H200 case (measurements): LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu with the system's
// cuDNN 9.14 there; torch's libcudnn.so.9 comes from the 9.19 wheel (DT_RPATH), its
// sub-libraries from 9.14 (LD_LIBRARY_PATH before their DT_RUNPATH $ORIGIN), and loading the
// wheel's copy live answered cudnnGetVersion() = 9.14.0. That answer is the mix itself:
// pip-cudnn-vs-system-cudnn-symbols reports it; cudnn-header-library-mismatch must not report
// it again for the wheel folder. doctor loads nothing under --root, so the probes run on the
// tree here and the live answer is set on the wheel's copy before the rules run.
std::vector<Finding> doctor_with_live_cudnn(const Tree& t, const std::string& dir,
                                            const std::string& live) {
  auto view = open_system_view(t.root().string(), "linux", t.at("/env").string(), "");
  EXPECT_TRUE(view.has_value());
  if (!view) return {};
  ProbeContext ctx{*view->fs, *view->env, *view->kb, Os::linux, false, view->env_source};
  Facts facts = collect_facts(ctx, ProbeOptions{});
  bool set = false;
  for (auto& k : facts.cudnn) {
    if (k.dir != dir) continue;
    k.live_version = Fact<Version>::known(*Version::parse(live), "cudnnGetVersion() in " + dir);
    set = true;
  }
  EXPECT_TRUE(set) << "no cuDNN copy in " << dir;
  return run_rules(facts, *view->kb, Os::linux);
}

std::set<std::string> finding_ids(const std::vector<Finding>& fs) {
  std::set<std::string> out;
  for (const auto& f : fs) out.insert(f.id);
  return out;
}

TEST(LoaderScenario, LiveVersionOfAMixedWheelLoadIsNotAlsoAHeaderMismatch) {
  const std::string site = Tree::venv_site();
  const std::string wheel = site + "/nvidia/cudnn/lib";
  auto tree = [&](Tree& t, const std::string& llp) {
    t.venv();
    t.torch(site, "2.11.0+cu130", "13.0", "libcudnn.so.9").cudnn_wheel(site, "9.19.0.56");
    t.file(site + "/nvidia/cudnn/include/cudnn_version.h",
           "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 19\n#define CUDNN_PATCHLEVEL 0\n");
    t.cudnn(kLinuxLib, "9.14.0", true);
    t.env(Tree::venv_env() + (llp.empty() ? "" : "LD_LIBRARY_PATH=" + llp + "\n"));
  };
  Tree t;
  tree(t, kLinuxLib);
  auto found = finding_ids(doctor_with_live_cudnn(t, wheel, "9.14.0"));
  EXPECT_TRUE(found.count("pip-cudnn-vs-system-cudnn-symbols")) << ::testing::PrintToString(found);
  EXPECT_FALSE(found.count("cudnn-header-library-mismatch")) << ::testing::PrintToString(found);

  // The same live answer without LD_LIBRARY_PATH: nothing mixes, so the loader model explains
  // nothing and the header / library disagreement is reported.
  Tree alone;
  tree(alone, "");
  auto k = finding_ids(doctor_with_live_cudnn(alone, wheel, "9.14.0"));
  EXPECT_FALSE(k.count("pip-cudnn-vs-system-cudnn-symbols")) << ::testing::PrintToString(k);
  EXPECT_TRUE(k.count("cudnn-header-library-mismatch")) << ::testing::PrintToString(k);
}

// ---- Windows ---------------------------------------------------------------------------

const std::string kTk = "/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.8";
const std::string kTkWin = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8";

// CUDA 11.8 with cuDNN `v` (8.x) in `bin`; the sub-DLLs import zlibwapi.dll, which
// `zlibwapi` puts (x64) into the toolkit's bin.
void cuda118(Tree& t, const std::string& bin, std::array<uint16_t, 4> v = {8, 9, 7, 29},
             bool zlibwapi = false) {
  if (zlibwapi) t.dll(kTk + "/bin/zlibwapi.dll", {1, 2, 3, 0}, {}, {"f"});
  t.dll("/Windows/System32/nvcuda.dll", {31, 0, 15, 2849});
  t.file(kTk + "/version.json", "{\"cuda\": {\"name\": \"CUDA SDK\", \"version\": \"11.8.0\"}}\n");
  t.dll(kTk + "/bin/cudart64_110.dll", {6, 14, 11, 11080});
  t.dll(kTk + "/bin/cublas64_11.dll", {6, 14, 11, 11080}, {}, {"f"});
  t.dll(kTk + "/bin/cublasLt64_11.dll", {6, 14, 11, 11080}, {}, {"f"});
  for (const char* n : {"cudnn64_8.dll", "cudnn_ops_infer64_8.dll", "cudnn_ops_train64_8.dll",
                        "cudnn_cnn_infer64_8.dll", "cudnn_cnn_train64_8.dll",
                        "cudnn_adv_infer64_8.dll", "cudnn_adv_train64_8.dll"}) {
    if (std::string(n) == "cudnn64_8.dll") {
      t.dll(bin + "/" + n, v, {{"KERNEL32.dll", {"f"}}});
    } else {
      t.dll(bin + "/" + n, v, {{"cublas64_11.dll", {"f"}}, {"zlibwapi.dll", {"f"}}});
    }
  }
}

TEST(LoaderScenario, WindowsThirtyTwoBitZlibwapiFirstOnPathIs193) {
  Tree t;
  cuda118(t, kTk + "/bin", {8, 9, 7, 29}, true);
  t.dll("/Tools/zlibwapi.dll", {1, 2, 3, 0}, {}, {"f"}, /*x64=*/false);
  t.env("PATH=C:\\Tools;" + kTkWin + "\\bin;C:\\Windows\\system32\nSystemRoot=C:\\Windows\n");
  json j = t.doctor(Os::windows);
  const json* f = finding(j, "win-dll-wrong-bitness-193");
  ASSERT_NE(f, nullptr) << j["findings"].dump(2);
  EXPECT_NE((*f)["title"].get<std::string>().find("zlibwapi.dll in C:\\Tools is x86"),
            std::string::npos)
      << f->dump(2);
  // The x64 copy further down PATH is named as the way out.
  EXPECT_NE(text((*f)["evidence"]).find("v11.8\\bin\\zlibwapi.dll"), std::string::npos)
      << f->dump(2);

  Tree ok;  // the same tree with an x64 zlibwapi.dll in C:\Tools
  cuda118(ok, kTk + "/bin");
  ok.dll("/Tools/zlibwapi.dll", {1, 2, 3, 0}, {}, {"f"});
  ok.env("PATH=C:\\Tools;" + kTkWin + "\\bin;C:\\Windows\\system32\nSystemRoot=C:\\Windows\n");
  json k = ok.doctor(Os::windows);
  EXPECT_FALSE(ids(k).count("win-dll-wrong-bitness-193")) << k["findings"].dump(2);
  EXPECT_FALSE(ids(k).count("win-cudnn-mixed-versions-127")) << k["findings"].dump(2);
}

TEST(LoaderScenario, WindowsThirtyTwoBitPythonCannotLoadTheX64Cudnn) {
  Tree t;
  cuda118(t, kTk + "/bin", {8, 9, 7, 29}, true);
  t.dll("/Python38-32/python.exe", {3, 8, 10, 0}, {}, {}, /*x64=*/false, /*is_dll=*/false);
  t.dll("/Python38-32/python38.dll", {3, 8, 10, 0}, {}, {"f"}, /*x64=*/false);
  t.env("PATH=C:\\Python38-32;" + kTkWin + "\\bin;C:\\Windows\\system32\nSystemRoot=C:\\Windows\n");
  json j = t.doctor(Os::windows);
  const json* f = finding(j, "win-dll-wrong-bitness-193");
  ASSERT_NE(f, nullptr) << j["findings"].dump(2);
  EXPECT_NE(text(j["findings"]).find("cudnn64_8.dll in " + kTkWin + "\\bin is x64"),
            std::string::npos)
      << j["findings"].dump(2);
}

// cudnn64_8.dll 8.9.7 alone in C:\New (first on PATH), a complete 8.2.4 set in the
// toolkit: the sub-DLLs come from the older release.
TEST(LoaderScenario, WindowsCudnnMainAndSubDllsFromDifferentReleasesIs127) {
  Tree t;
  cuda118(t, kTk + "/bin", {8, 2, 4, 15}, true);
  t.dll("/New/cudnn64_8.dll", {8, 9, 7, 29}, {{"KERNEL32.dll", {"f"}}});
  t.env("PATH=C:\\New;" + kTkWin + "\\bin;C:\\Windows\\system32\nSystemRoot=C:\\Windows\n");
  json j = t.doctor(Os::windows);
  const json* f = finding(j, "win-cudnn-mixed-versions-127");
  ASSERT_NE(f, nullptr) << j["findings"].dump(2);
  const std::string e = text((*f)["evidence"]);
  EXPECT_NE(e.find("cudnn64_8.dll 8.9.7.29 from C:\\New"), std::string::npos) << f->dump(2);
  EXPECT_NE(e.find("cudnn_cnn_infer64_8.dll 8.2.4.15"), std::string::npos) << f->dump(2);

  Tree ok;  // C:\New holds the whole 8.9.7 set: the older one is only shadowed
  cuda118(ok, kTk + "/bin", {8, 2, 4, 15});
  cuda118(ok, "/New");
  ok.dll(kTk + "/bin/zlibwapi.dll", {1, 2, 3, 0}, {}, {"f"});
  ok.env("PATH=C:\\New;" + kTkWin + "\\bin;C:\\Windows\\system32\nSystemRoot=C:\\Windows\n");
  json k = ok.doctor(Os::windows);
  EXPECT_FALSE(ids(k).count("win-cudnn-mixed-versions-127")) << k["findings"].dump(2);
}

// cudnn64_8.dll 8.9.7 on PATH loads cudnn_cnn_infer64_8.dll at run time: absent from its
// folder and from every folder of the search order.
TEST(LoaderScenario, WindowsCudnn8SubDllTheLoaderFindsNowhere) {
  const std::string env =
      "PATH=" + kTkWin + "\\bin;C:\\Windows\\system32\nSystemRoot=C:\\Windows\n";
  Tree t;
  cuda118(t, kTk + "/bin", {8, 9, 7, 29}, true);
  fs::remove(t.at(kTk + "/bin/cudnn_cnn_infer64_8.dll"));
  t.env(env);
  json j = t.doctor(Os::windows);
  const json* f = finding(j, "win-cudnn8-sublibrary-missing");
  ASSERT_NE(f, nullptr) << j["findings"].dump(2);
  EXPECT_NE((*f)["title"].get<std::string>().find("cuDNN 8.9.7.29 in " + kTkWin +
                                                  "\\bin cannot load cudnn_cnn_infer64_8.dll"),
            std::string::npos)
      << f->dump(2);
  const std::string e = text((*f)["evidence"]);
  EXPECT_NE(e.find("cudnn_cnn_infer64_8.dll: loaded at run time by cudnn64_8.dll; looked for in"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("System32"), std::string::npos) << e;  // the search order is named
  EXPECT_EQ(count(j, {"win-cudnn8-sublibrary-missing", "cudnn-sublibrary-missing",
                      "win-cudnn-mixed-versions-127"}),
            1)
      << j["findings"].dump(2);

  Tree ok;  // the complete set
  cuda118(ok, kTk + "/bin", {8, 9, 7, 29}, true);
  ok.env(env);
  json k = ok.doctor(Os::windows);
  EXPECT_FALSE(ids(k).count("win-cudnn8-sublibrary-missing")) << k["findings"].dump(2);
  EXPECT_FALSE(ids(k).count("win-zlibwapi-missing")) << k["findings"].dump(2);
}

// cuDNN 8.9's sub-DLLs need zlibwapi.dll: none beside them, in System32 or on PATH.
TEST(LoaderScenario, WindowsCudnn89ZlibwapiTheLoaderFindsNowhere) {
  Tree t;
  cuda118(t, kTk + "/bin");
  t.dll("/Tools/zlib/zlibwapi.dll", {1, 2, 3, 0}, {}, {"f"});  // off PATH
  t.env("PATH=" + kTkWin + "\\bin;C:\\Windows\\system32\nSystemRoot=C:\\Windows\n");
  json j = t.doctor(Os::windows);
  EXPECT_EQ(count(j, {"win-zlibwapi-missing"}), 1) << j["findings"].dump(2);
  const json* f = finding(j, "win-zlibwapi-missing");
  ASSERT_NE(f, nullptr) << j["findings"].dump(2);
  EXPECT_NE((*f)["title"].get<std::string>().find("cannot load zlibwapi.dll"), std::string::npos)
      << f->dump(2);
  EXPECT_NE(text((*f)["evidence"]).find("zlibwapi.dll: imported by cudnn_"), std::string::npos)
      << f->dump(2);
  // A sub-DLL missing zlibwapi.dll is not a missing cuDNN sub-library.
  EXPECT_FALSE(ids(j).count("win-cudnn8-sublibrary-missing")) << j["findings"].dump(2);

  Tree ok;  // the folder is on PATH
  cuda118(ok, kTk + "/bin");
  ok.dll("/Tools/zlib/zlibwapi.dll", {1, 2, 3, 0}, {}, {"f"});
  ok.env("PATH=" + kTkWin +
         "\\bin;C:\\Tools\\zlib;C:\\Windows\\system32\nSystemRoot=C:\\Windows\n");
  json k = ok.doctor(Os::windows);
  EXPECT_FALSE(ids(k).count("win-zlibwapi-missing")) << k["findings"].dump(2);
}

// ctranslate2's extension module needs cuBLAS DLLs that only the CUDA toolkit on
// PATH has: Python 3.10 does not search PATH for them.
void ct2(Tree& t, bool bundled) {
  cuda118(t, kTk + "/bin", {8, 9, 7, 29}, true);
  t.dll("/Python310/python.exe", {3, 10, 11, 0}, {}, {}, true, false);
  t.dll("/Python310/python310.dll", {3, 10, 11, 0}, {}, {"f"});
  const std::string site = "/Python310/Lib/site-packages";
  t.file(site + "/ctranslate2-3.24.0.dist-info/METADATA",
         "Metadata-Version: 2.1\nName: ctranslate2\nVersion: 3.24.0\n");
  const std::string pkg = site + "/ctranslate2";
  t.dll(pkg + "/_ext.cp310-win_amd64.pyd", {3, 24, 0, 0},
        {{"python310.dll", {"f"}}, {"ctranslate2.dll", {"f"}}});
  t.dll(pkg + "/ctranslate2.dll", {3, 24, 0, 0}, {{"cublas64_11.dll", {"f"}}}, {"f"});
  if (bundled) {  // cuBLAS and the cuBLASLt it loads at run time
    t.dll(pkg + "/cublas64_11.dll", {6, 14, 11, 11080}, {}, {"f"});
    t.dll(pkg + "/cublasLt64_11.dll", {6, 14, 11, 11080}, {}, {"f"});
  }
  t.env("PATH=" + kTkWin + "\\bin;C:\\Python310;C:\\Windows\\system32\nSystemRoot=C:\\Windows\n");
}

TEST(LoaderScenario, WindowsPython38ExtensionWhoseCudaDllsAreOnlyOnPath) {
  Tree t;
  ct2(t, false);
  json j = t.doctor(Os::windows);
  const json* f = finding(j, "win-py38-path-not-searched");
  ASSERT_NE(f, nullptr) << j["findings"].dump(2);
  const std::string e = text((*f)["evidence"]);
  EXPECT_NE(e.find("needs cublas64_11.dll (through ctranslate2.dll)"), std::string::npos)
      << f->dump(2);
  EXPECT_NE(text((*f)["fix"]).find("os.add_dll_directory(r'" + kTkWin), std::string::npos)
      << f->dump(2);

  Tree ok;  // the wheel bundles them beside its extension module
  ct2(ok, true);
  json k = ok.doctor(Os::windows);
  EXPECT_FALSE(ids(k).count("win-py38-path-not-searched")) << k["findings"].dump(2);
}

}  // namespace
}  // namespace dlenv
