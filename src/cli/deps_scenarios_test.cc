// `dlenv deps` / `dlenv load` scenarios: sysroots with real fake shared
// libraries built at test time (sonames, DT_NEEDED, DT_RPATH/DT_RUNPATH,
// symbols, symbol versions chosen per test), one test per loader rule and per
// flag; the answer is read from `dlenv deps --json` run in-process.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "binfmt/test_builders.h"
#include "cli/cli.h"
#include "kb/kb.h"
#include "platform/filesystem.h"
#include "platform/process.h"
#include "probe/loader_model.h"

namespace dlenv {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class Root {
 public:
  Root() {
    const char* base = std::getenv("DLENV_TEST_TMP");
    fs::path dir = base && *base ? fs::path(base) : fs::temp_directory_path();
    fs::create_directories(dir);
    std::string tmpl = (dir / "deps-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp");
    root_ = fs::canonical(tmpl);
  }
  ~Root() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  Root(const Root&) = delete;
  Root& operator=(const Root&) = delete;
  std::string root() const { return root_.string(); }
  fs::path at(const std::string& logical) const { return root_ / logical.substr(1); }

  // A real shared library. `needed` are logical paths of libraries built
  // before (linked by path, so their sonames become DT_NEEDED); `link` extra
  // linker flags (-Wl,-rpath,... is given logical dirs: they are what the
  // loader model reads under --root).
  Root& lib(const std::string& logical, const std::string& soname,
            const std::vector<std::string>& needed = {}, const std::vector<std::string>& link = {},
            const std::string& body = "int dlenv_fake(void) { return 0; }") {
    fs::create_directories(at(logical).parent_path());
    const fs::path src = at(logical).string() + ".c";
    std::ofstream(src) << body << "\n";
    std::vector<std::string> argv = {
        DLENV_CXX_COMPILER,   "-x",        "c", "-shared", "-fPIC", "-Wl,-soname," + soname, "-o",
        at(logical).string(), src.string()};
    // No libc: the sysroot has none, and the tests are about the libraries they build.
    argv.push_back("-nostdlib");
    for (const auto& l : link) argv.push_back(l);
    argv.push_back("-x");
    argv.push_back("none");
    argv.push_back("-Wl,--no-as-needed");
    for (const auto& n : needed) argv.push_back(at(n).string());
    auto r = run_process(argv);
    if (!r || r->exit_code != 0) {
      throw std::runtime_error("compiler failed: " + (r ? r->err : r.error().message));
    }
    fs::remove(src);
    return *this;
  }
  Root& file(const std::string& logical, const std::string& content) {
    fs::create_directories(at(logical).parent_path());
    std::ofstream(at(logical), std::ios::binary) << content;
    return *this;
  }
  Root& bytes(const std::string& logical, const std::vector<uint8_t>& b) {
    fs::create_directories(at(logical).parent_path());
    std::ofstream(at(logical), std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
    return *this;
  }
  Root& link(const std::string& logical, const std::string& target) {
    fs::create_directories(at(logical).parent_path());
    fs::create_symlink(target, at(logical));
    return *this;
  }
  Root& copy(const std::string& from, const std::string& to) {
    fs::create_directories(at(to).parent_path());
    fs::copy_file(at(from), at(to), fs::copy_options::overwrite_existing);
    return *this;
  }

 private:
  fs::path root_;
};

struct DepsRun {
  int code = 0;
  std::string out, err;
  json j;
  // The first object with this requested name whose parent has this name (or any).
  const json& obj(const std::string& name, const std::string& parent_name = "") const {
    for (const auto& o : j["objects"]) {
      if (o["name"] != name) continue;
      if (!parent_name.empty()) {
        const int p = o["parent"].get<int>();
        if (p < 0 || j["objects"][static_cast<size_t>(p)]["name"] != parent_name) continue;
      }
      return o;
    }
    throw std::runtime_error("no object " + name + " in:\n" + j.dump(1));
  }
};

DepsRun deps(const Root& r, const std::string& target, const std::string& env = "",
             bool json_out = true, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"dlenv", "deps", target, "--root", r.root()};
  if (json_out) args.push_back("--json");
  args.insert(args.end(), extra.begin(), extra.end());
  std::string env_path;
  if (!env.empty()) {
    env_path = r.root() + ".env";
    std::ofstream(env_path) << env;
    args.push_back("--env-file");
    args.push_back(env_path);
  }
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  DepsRun run;
  run.code = cli_main(static_cast<int>(argv.size()), argv.data(), out, err, false);
  run.out = out.str();
  run.err = err.str();
  if (!env_path.empty()) fs::remove(env_path);
  if (json_out && run.code != kExitUsage) run.j = json::parse(run.out);
  return run;
}

constexpr const char* kMulti = "/usr/lib/x86_64-linux-gnu";

bool compiler_ok() {
#if !defined(__x86_64__)
  return false;
#else
  return fs::exists(DLENV_CXX_COMPILER);
#endif
}

#define REQUIRE_COMPILER() \
  if (!compiler_ok()) GTEST_SKIP() << "needs an x86-64 host with " << DLENV_CXX_COMPILER

TEST(DepsRules, RunpathOfTheRequester) {
  REQUIRE_COMPILER();
  Root r;
  r.lib("/opt/a/lib/libb.so.1", "libb.so.1")
      .lib("/opt/a/bin/liba.so", "liba.so", {"/opt/a/lib/libb.so.1"},
           {"-Wl,-rpath,/opt/a/lib", "-Wl,--enable-new-dtags"})
      .copy("/opt/a/lib/libb.so.1", std::string(kMulti) + "/libb.so.1");
  auto run = deps(r, "/opt/a/bin/liba.so");
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  const auto& b = run.obj("libb.so.1");
  EXPECT_EQ(b["path"], "/opt/a/lib/libb.so.1");
  EXPECT_EQ(b["rule"], "DT_RUNPATH");
  ASSERT_EQ(b["shadowed"].size(), 1u);
  EXPECT_EQ(b["shadowed"][0]["path"], std::string(kMulti) + "/libb.so.1");
  EXPECT_EQ(b["shadowed"][0]["rule"], "default directory");
}

TEST(DepsRules, LdLibraryPathBeatsRunpath) {
  REQUIRE_COMPILER();
  Root r;
  r.lib("/opt/a/lib/libb.so.1", "libb.so.1")
      .lib("/opt/a/bin/liba.so", "liba.so", {"/opt/a/lib/libb.so.1"},
           {"-Wl,-rpath,/opt/a/lib", "-Wl,--enable-new-dtags"})
      .copy("/opt/a/lib/libb.so.1", "/opt/llp/libb.so.1");
  auto run = deps(r, "/opt/a/bin/liba.so", "LD_LIBRARY_PATH=/opt/llp\n");
  ASSERT_EQ(run.code, 0) << run.out;
  const auto& b = run.obj("libb.so.1");
  EXPECT_EQ(b["path"], "/opt/llp/libb.so.1");
  EXPECT_EQ(b["rule"], "LD_LIBRARY_PATH");
  ASSERT_EQ(b["shadowed"].size(), 1u);
  EXPECT_EQ(b["shadowed"][0]["rule"], "DT_RUNPATH");
}

TEST(DepsRules, RpathBeatsLdLibraryPath) {
  REQUIRE_COMPILER();
  Root r;
  r.lib("/opt/a/lib/libb.so.1", "libb.so.1")
      .lib("/opt/a/bin/liba.so", "liba.so", {"/opt/a/lib/libb.so.1"},
           {"-Wl,-rpath,/opt/a/lib", "-Wl,--disable-new-dtags"})
      .copy("/opt/a/lib/libb.so.1", "/opt/llp/libb.so.1");
  auto run = deps(r, "/opt/a/bin/liba.so", "LD_LIBRARY_PATH=/opt/llp\n");
  ASSERT_EQ(run.code, 0) << run.out;
  const auto& b = run.obj("libb.so.1");
  EXPECT_EQ(b["path"], "/opt/a/lib/libb.so.1");
  EXPECT_EQ(b["rule"], "DT_RPATH");
  ASSERT_EQ(b["shadowed"].size(), 1u);
  EXPECT_EQ(b["shadowed"][0]["rule"], "LD_LIBRARY_PATH");
}

TEST(DepsRules, RpathIsInheritedRunpathIsNot) {
  REQUIRE_COMPILER();
  for (bool new_dtags : {false, true}) {
    SCOPED_TRACE(new_dtags ? "DT_RUNPATH" : "DT_RPATH");
    Root r;
    // app (rpath/runpath /opt/r) -> libmid.so (none, in a default dir) -> libleaf.so.1 (/opt/r).
    r.lib("/opt/r/libleaf.so.1", "libleaf.so.1")
        .lib(std::string(kMulti) + "/libmid.so", "libmid.so", {"/opt/r/libleaf.so.1"})
        .lib("/opt/app/libapp.so", "libapp.so", {std::string(kMulti) + "/libmid.so"},
             {"-Wl,-rpath,/opt/r",
              new_dtags ? "-Wl,--enable-new-dtags" : "-Wl,--disable-new-dtags"});
    auto run = deps(r, "/opt/app/libapp.so");
    const auto& leaf = run.obj("libleaf.so.1");
    if (new_dtags) {
      EXPECT_EQ(run.code, 1);
      EXPECT_TRUE(leaf["missing"].get<bool>());
      EXPECT_THAT(leaf["problem"].get<std::string>(),
                  ::testing::HasSubstr("libleaf.so.1 (needed by libmid.so) was not found"));
    } else {
      EXPECT_EQ(run.code, 0) << run.out;
      EXPECT_EQ(leaf["path"], "/opt/r/libleaf.so.1");
      EXPECT_EQ(leaf["rule"], "DT_RPATH");
      EXPECT_THAT(leaf["rule_detail"].get<std::string>(), ::testing::HasSubstr("inherited"));
    }
  }
}

// dlopen(name) from an extension module searches the extension's own DT_RUNPATH, or its
// DT_RPATH, which what the opened library needs then inherits (a framework opening cuDNN).
TEST(DepsRules, DlopenFromAnExtensionSearchesItsRunpathOrRpath) {
  REQUIRE_COMPILER();
  for (bool new_dtags : {false, true}) {
    SCOPED_TRACE(new_dtags ? "DT_RUNPATH" : "DT_RPATH");
    Root r;
    // ext.so ($ORIGIN/../dep:/opt/leafdir) dlopens libx.so.1 (in ../dep), which needs
    // libleaf.so.1 (only in /opt/leafdir); a default-directory libx.so.1 is shadowed.
    r.lib("/opt/leafdir/libleaf.so.1", "libleaf.so.1")
        .lib("/opt/pkg/dep/libx.so.1", "libx.so.1", {"/opt/leafdir/libleaf.so.1"})
        .copy("/opt/pkg/dep/libx.so.1", std::string(kMulti) + "/libx.so.1")
        .lib("/opt/pkg/ext/ext.so", "ext.so", {},
             {"-Wl,-rpath,$ORIGIN/../dep:/opt/leafdir",
              new_dtags ? "-Wl,--enable-new-dtags" : "-Wl,--disable-new-dtags"});
    auto plain = deps(r, "libx.so.1");  // from a program without RPATH/RUNPATH
    EXPECT_EQ(plain.obj("libx.so.1")["path"], std::string(kMulti) + "/libx.so.1");

    auto run = deps(r, "libx.so.1", "", true, {"--dlopen-from", "/opt/pkg/ext/ext.so"});
    const json& x = run.j["objects"][0];
    EXPECT_EQ(x["path"], "/opt/pkg/dep/libx.so.1");
    EXPECT_EQ(x["rule"], new_dtags ? "DT_RUNPATH" : "DT_RPATH");
    EXPECT_THAT(x["rule_detail"].get<std::string>(),
                ::testing::StartsWith(std::string(new_dtags ? "DT_RUNPATH" : "DT_RPATH") +
                                      " of ext.so: $ORIGIN/../dep:/opt/leafdir"));
    ASSERT_EQ(x["shadowed"].size(), 1u);
    EXPECT_EQ(x["shadowed"][0]["rule"], "default directory");
    const json& leaf = run.j["objects"][1];
    ASSERT_EQ(leaf["name"], "libleaf.so.1");
    if (new_dtags) {  // DT_RUNPATH is the caller's only, not inherited
      EXPECT_EQ(run.code, 1);
      EXPECT_TRUE(leaf["missing"].get<bool>());
    } else {  // DT_RPATH is searched for what libx.so.1 needs too
      EXPECT_EQ(run.code, 0) << run.out;
      EXPECT_EQ(leaf["path"], "/opt/leafdir/libleaf.so.1");
      EXPECT_THAT(leaf["rule_detail"].get<std::string>(),
                  ::testing::HasSubstr("DT_RPATH of ext.so (inherited: it called dlopen)"));
    }
  }
  // A path is opened as is, and the caller must be an ELF file.
  Root r;
  r.file("/opt/notelf.so", "text");
  for (const auto& [target, from, want] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"/opt/x.so", "/opt/notelf.so", "is a path"},
           {"libx.so.1", "/opt/notelf.so", "not an ELF file"},
           {"libx.so.1", "/opt/none.so", "cannot read"}}) {
    auto run = deps(r, target, "", false, {"--dlopen-from", from});
    EXPECT_EQ(run.code, kExitUsage);
    EXPECT_THAT(run.err, ::testing::HasSubstr(want));
  }
}

TEST(DepsRules, LdSoCacheThenDefaultDirs) {
  REQUIRE_COMPILER();
  Root r;
  r.lib("/opt/cached/libc1.so.1", "libc1.so.1")
      .lib("/opt/x/liba.so", "liba.so", {"/opt/cached/libc1.so.1"})
      .copy("/opt/cached/libc1.so.1", std::string(kMulti) + "/libc1.so.1");
  r.bytes("/etc/ld.so.cache",
          testbuild::build_ld_cache({{0x0303, "libc1.so.1", "/opt/cached/libc1.so.1", 0}},
                                    testbuild::CacheFormat::kNew));
  auto run = deps(r, "/opt/x/liba.so");
  ASSERT_EQ(run.code, 0) << run.out;
  const auto& c = run.obj("libc1.so.1");
  EXPECT_EQ(c["path"], "/opt/cached/libc1.so.1");
  EXPECT_EQ(c["rule"], "ld.so.cache");
  ASSERT_EQ(c["shadowed"].size(), 1u);
  EXPECT_EQ(c["shadowed"][0]["rule"], "default directory");

  fs::remove(r.at("/etc/ld.so.cache"));
  auto run2 = deps(r, "/opt/x/liba.so");
  const auto& c2 = run2.obj("libc1.so.1");
  EXPECT_EQ(c2["path"], std::string(kMulti) + "/libc1.so.1");
  EXPECT_EQ(c2["rule"], "default directory");
}

TEST(DepsRules, StaleCacheIsExplained) {
  REQUIRE_COMPILER();
  Root r;
  r.lib("/opt/vendor/libv.so.2", "libv.so.2")
      .lib("/opt/x/liba.so", "liba.so", {"/opt/vendor/libv.so.2"})
      .file("/etc/ld.so.conf", "/opt/vendor\n");
  auto run = deps(r, "/opt/x/liba.so");
  EXPECT_EQ(run.code, 1);
  EXPECT_THAT(run.obj("libv.so.2")["problem"].get<std::string>(),
              ::testing::HasSubstr("run `sudo ldconfig`"));
}

TEST(DepsRules, OriginLibAndPlatformExpansion) {
  REQUIRE_COMPILER();
  Root r;
  r.lib("/opt/pkg/lib/x86_64/libp.so.1", "libp.so.1")
      .lib("/opt/pkg/deep/lib/libo.so.1", "libo.so.1")
      .lib("/opt/pkg/bin/liba.so", "liba.so",
           {"/opt/pkg/deep/lib/libo.so.1", "/opt/pkg/lib/x86_64/libp.so.1"},
           {"-Wl,-rpath,$ORIGIN/../deep/lib:${ORIGIN}/../lib/$PLATFORM", "-Wl,--enable-new-dtags"});
  auto run = deps(r, "/opt/pkg/bin/liba.so");
  ASSERT_EQ(run.code, 0) << run.out;
  EXPECT_EQ(run.obj("libo.so.1")["path"], "/opt/pkg/deep/lib/libo.so.1");
  EXPECT_EQ(run.obj("libp.so.1")["path"], "/opt/pkg/lib/x86_64/libp.so.1");
  EXPECT_EQ(expand_dst("$ORIGIN/../$LIB", "/opt/a/bin", "lib64", "x86_64"), "/opt/a/lib64");
  EXPECT_EQ(expand_dst("/x/$ORIGINAL", "/o", "l", "p"), "/x/$ORIGINAL");
}

TEST(DepsRules, GlibcHwcapsSubdirectoryFirst) {
  REQUIRE_COMPILER();
  Root r;
  r.lib(std::string(kMulti) + "/libh.so.1", "libh.so.1")
      .lib("/opt/x/liba.so", "liba.so", {std::string(kMulti) + "/libh.so.1"})
      .copy(std::string(kMulti) + "/libh.so.1",
            std::string(kMulti) + "/glibc-hwcaps/x86-64-v3/libh.so.1");
  auto fsys = make_rooted_filesystem(r.root());
  auto kb = Kb::load_embedded();
  ASSERT_TRUE(kb);
  LinuxLoaderSettings s;
  s.hwcaps = {"x86-64-v3", "x86-64-v2"};
  auto t = model_linux_load(*fsys, **kb, "/opt/x/liba.so", s);
  ASSERT_TRUE(t) << t.error().message;
  ASSERT_GE(t->objects.size(), 2u);
  EXPECT_EQ(t->objects[1].path, std::string(kMulti) + "/glibc-hwcaps/x86-64-v3/libh.so.1");
  ASSERT_EQ(t->objects[1].shadowed.size(), 1u);
  EXPECT_EQ(t->objects[1].shadowed[0].path, std::string(kMulti) + "/libh.so.1");
  // Without the CPU level, the plain directory.
  s.hwcaps = {"x86-64-v2"};
  auto t2 = model_linux_load(*fsys, **kb, "/opt/x/liba.so", s);
  ASSERT_TRUE(t2);
  EXPECT_EQ(t2->objects[1].path, std::string(kMulti) + "/libh.so.1");
}

TEST(DepsRules, AlreadyLoadedSonameIsReused) {
  REQUIRE_COMPILER();
  Root r;
  r.lib("/opt/one/libs.so.1", "libs.so.1")
      .lib("/opt/one/libx.so", "libx.so", {"/opt/one/libs.so.1"},
           {"-Wl,-rpath,/opt/one", "-Wl,--enable-new-dtags"})
      .lib("/opt/two/libs.so.1", "libs.so.1")
      .lib("/opt/two/liby.so", "liby.so", {"/opt/two/libs.so.1"},
           {"-Wl,-rpath,/opt/two", "-Wl,--enable-new-dtags"})
      .lib("/opt/app/libapp.so", "libapp.so", {"/opt/one/libx.so", "/opt/two/liby.so"},
           {"-Wl,-rpath,/opt/one:/opt/two", "-Wl,--enable-new-dtags"});
  auto run = deps(r, "/opt/app/libapp.so");
  ASSERT_EQ(run.code, 0) << run.out;
  // liby's own RUNPATH points at /opt/two, but libs.so.1 is already loaded from /opt/one.
  const auto& s2 = run.obj("libs.so.1", "liby.so");
  EXPECT_EQ(s2["rule"], "already loaded");
  EXPECT_EQ(s2["path"], "/opt/one/libs.so.1");
}

TEST(DepsFlags, WrongClassCopiesAreSkippedAndReported) {
  REQUIRE_COMPILER();
  Root r;
  r.lib("/opt/w/libw.so.1", "libw.so.1")
      .lib("/opt/x/liba.so", "liba.so", {"/opt/w/libw.so.1"},
           {"-Wl,-rpath,/opt/w", "-Wl,--enable-new-dtags"});
  testbuild::ElfSpec s32;
  s32.is64 = false;
  s32.machine = 3;
  s32.soname = "libw.so.1";
  r.bytes("/opt/w/libw.so.1", testbuild::build_elf(s32).bytes);  // replace with a 32-bit copy
  auto run = deps(r, "/opt/x/liba.so");
  EXPECT_EQ(run.code, 1);
  const auto& w = run.obj("libw.so.1");
  EXPECT_TRUE(w["missing"].get<bool>());
  EXPECT_TRUE(w["wrong_class"].get<bool>());
  EXPECT_THAT(w["problem"].get<std::string>(), ::testing::HasSubstr("ELF 32-bit i386"));
  // A good copy further down the search is taken, the 32-bit one listed as skipped.
  r.lib(std::string(kMulti) + "/libw.so.1", "libw.so.1");
  auto run2 = deps(r, "/opt/x/liba.so");
  EXPECT_EQ(run2.code, 0) << run2.out;
  const auto& w2 = run2.obj("libw.so.1");
  EXPECT_EQ(w2["path"], std::string(kMulti) + "/libw.so.1");
  ASSERT_EQ(w2["rejected"].size(), 1u);
  EXPECT_EQ(w2["rejected"][0]["path"], "/opt/w/libw.so.1");
}

TEST(DepsFlags, ImportedSymbolMissingFromTheChosenFile) {
  REQUIRE_COMPILER();
  Root r;
  r.lib("/opt/s/libprov.so.1", "libprov.so.1", {}, {}, "int prov_new_api(void) { return 1; }")
      .lib("/opt/s/libuser.so", "libuser.so", {"/opt/s/libprov.so.1"},
           {"-Wl,-rpath,/opt/s", "-Wl,--enable-new-dtags"},
           "extern int prov_new_api(void); int user(void) { return prov_new_api(); }");
  auto ok = deps(r, "/opt/s/libuser.so");
  ASSERT_EQ(ok.code, 0) << ok.out;
  EXPECT_TRUE(ok.obj("/opt/s/libuser.so")["missing_symbols"].empty());
  // An older build of the provider without that function.
  r.lib("/opt/s/libprov.so.1", "libprov.so.1", {}, {}, "int prov_old_api(void) { return 1; }");
  auto bad = deps(r, "/opt/s/libuser.so");
  EXPECT_EQ(bad.code, 1);
  EXPECT_THAT(bad.obj("/opt/s/libuser.so")["missing_symbols"],
              ::testing::Contains(json("prov_new_api")));
  const auto text = deps(r, "/opt/s/libuser.so", "", false).out;
  EXPECT_THAT(text, ::testing::HasSubstr("undefined symbol(s) that no loaded library defines: "
                                         "prov_new_api"));
}

TEST(DepsFlags, SymbolVersionMissing) {
  REQUIRE_COMPILER();
  Root r;
  r.file("/build/v2.map", "PROV_1 { global: f1; local: *; };\nPROV_2 { global: f2; } PROV_1;\n")
      .file("/build/v1.map", "PROV_1 { global: f1; f2; local: *; };\n");
  r.lib("/opt/v/libver.so.1", "libver.so.1", {},
        {"-Wl,--version-script," + r.at("/build/v2.map").string()},
        "int f1(void) { return 1; } int f2(void) { return 2; }")
      .lib("/opt/v/libneeds.so", "libneeds.so", {"/opt/v/libver.so.1"},
           {"-Wl,-rpath,/opt/v", "-Wl,--enable-new-dtags"},
           "extern int f2(void); int g(void) { return f2(); }");
  ASSERT_EQ(deps(r, "/opt/v/libneeds.so").code, 0);
  r.lib("/opt/v/libver.so.1", "libver.so.1", {},
        {"-Wl,--version-script," + r.at("/build/v1.map").string()},
        "int f1(void) { return 1; } int f2(void) { return 2; }");
  auto bad = deps(r, "/opt/v/libneeds.so");
  EXPECT_EQ(bad.code, 1);
  EXPECT_THAT(bad.obj("/opt/v/libneeds.so")["missing_versions"],
              ::testing::Contains(json("PROV_2 from libver.so.1")));
}

// A fake cuDNN 9: the main library and the sub-libraries the KB lists, with
// real (versioned) file names behind soname links.
void fake_cudnn9(Root& r, const std::string& dir, const std::string& version,
                 const std::map<std::string, std::string>& override_versions = {},
                 const std::set<std::string>& skip = {}) {
  auto kb = Kb::load_embedded();
  if (!kb) throw std::runtime_error("kb");
  for (const auto& f : (*kb)->cudnn_library_files(9, Os::linux)) {
    if (skip.count(f)) continue;
    const std::string v = override_versions.count(f) ? override_versions.at(f) : version;
    const std::string real = f + "." + v.substr(2);  // libcudnn_ops.so.9 + ".1.0"
    r.lib(dir + "/" + real, f, {}, {"-Wl,-rpath,$ORIGIN", "-Wl,--enable-new-dtags"},
          f == "libcudnn.so.9" ? "unsigned long cudnnGetVersion(void) { return 90100; }"
                               : "int dlenv_fake(void) { return 0; }");
    r.link(dir + "/" + f, real);
  }
}

TEST(DepsCompanions, Cudnn9SubLibrariesAreListedAndResolved) {
  REQUIRE_COMPILER();
  Root r;
  fake_cudnn9(r, "/opt/cudnn/lib", "9.1.0");
  auto run = deps(r, "/opt/cudnn/lib/libcudnn.so.9");
  auto kb = Kb::load_embedded();
  ASSERT_TRUE(kb);
  for (const auto& f : (*kb)->cudnn_library_files(9, Os::linux)) {
    if (f == "libcudnn.so.9") continue;
    SCOPED_TRACE(f);
    const auto& o = run.obj(f, "/opt/cudnn/lib/libcudnn.so.9");
    EXPECT_TRUE(o["companion"].get<bool>());
    EXPECT_EQ(o["path"], "/opt/cudnn/lib/" + f);
    EXPECT_EQ(o["rule"], "DT_RUNPATH");
    EXPECT_EQ(o["version"], "9.1.0");
  }
  // libcuda.so.1 is a companion too; absent here, it is a warning, not an error.
  const auto& cuda = run.obj("libcuda.so.1");
  EXPECT_TRUE(cuda["missing"].get<bool>());
  EXPECT_EQ(cuda["severity"], "warning");
  EXPECT_EQ(run.code, 0) << run.out;
}

TEST(DepsCompanions, MissingSubLibraryIsAnError) {
  REQUIRE_COMPILER();
  Root r;
  fake_cudnn9(r, "/opt/cudnn/lib", "9.1.0", {}, {"libcudnn_engines_precompiled.so.9"});
  auto run = deps(r, "/opt/cudnn/lib/libcudnn.so.9");
  EXPECT_EQ(run.code, 1);
  const auto& o = run.obj("libcudnn_engines_precompiled.so.9");
  EXPECT_TRUE(o["missing"].get<bool>());
  EXPECT_EQ(o["severity"], "error");
  const auto text = deps(r, "/opt/cudnn/lib/libcudnn.so.9", "", false).out;
  EXPECT_THAT(text,
              ::testing::HasSubstr(
                  "libcudnn_engines_precompiled.so.9 (needed by libcudnn.so.9) was not found"));
  EXPECT_THAT(text, ::testing::HasSubstr("/opt/cudnn/lib  (DT_RUNPATH of libcudnn.so.9)"));
}

TEST(DepsFlags, MixedCudnnVersionsInOneProcess) {
  REQUIRE_COMPILER();
  Root r;
  fake_cudnn9(r, "/opt/cudnn/lib", "9.1.0", {{"libcudnn_ops.so.9", "9.3.0"}});
  auto run = deps(r, "/opt/cudnn/lib/libcudnn.so.9");
  EXPECT_EQ(run.code, 1);
  const auto& ops = run.obj("libcudnn_ops.so.9", "/opt/cudnn/lib/libcudnn.so.9");
  EXPECT_EQ(ops["version"], "9.3.0");
  EXPECT_THAT(ops["family_mismatch"].get<std::string>(),
              ::testing::HasSubstr("cuDNN libraries of different versions"));
  EXPECT_THAT(ops["family_mismatch"].get<std::string>(),
              ::testing::HasSubstr("/opt/cudnn/lib/libcudnn_ops.so.9.3.0 9.3.0"));
}

TEST(DepsCli, NameLookupAndUsageErrors) {
  REQUIRE_COMPILER();
  Root r;
  r.lib(std::string(kMulti) + "/libbyname.so.3", "libbyname.so.3");
  auto run = deps(r, "libbyname.so.3");
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_EQ(run.j["objects"][0]["path"], std::string(kMulti) + "/libbyname.so.3");
  EXPECT_EQ(run.j["objects"][0]["rule"], "default directory");
  auto missing = deps(r, "libnothere.so.1");
  EXPECT_EQ(missing.code, 1);
  EXPECT_TRUE(missing.j["objects"][0]["missing"].get<bool>());
  auto nofile = deps(r, "/opt/none/libx.so");
  EXPECT_EQ(nofile.code, kExitUsage);
  EXPECT_THAT(nofile.err, ::testing::HasSubstr("/opt/none/libx.so: no such file"));
  r.file("/opt/text/notelf.so", "hello");
  auto notelf = deps(r, "/opt/text/notelf.so");
  EXPECT_EQ(notelf.code, kExitUsage);
  EXPECT_THAT(notelf.err, ::testing::HasSubstr("not an ELF file"));
}

TEST(DepsCli, FlatAndTreeText) {
  REQUIRE_COMPILER();
  Root r;
  r.lib("/opt/a/lib/libb.so.1", "libb.so.1")
      .lib("/opt/a/bin/liba.so", "liba.so", {"/opt/a/lib/libb.so.1"},
           {"-Wl,-rpath,/opt/a/lib", "-Wl,--enable-new-dtags"});
  const std::string root = r.root();
  for (const char* mode : {"--tree", "--flat"}) {
    std::vector<const char*> argv = {"dlenv", "deps",   "/opt/a/bin/liba.so",
                                     mode,    "--root", root.c_str()};
    std::ostringstream out, err;
    EXPECT_EQ(cli_main(static_cast<int>(argv.size()), argv.data(), out, err, false), 0);
    EXPECT_THAT(out.str(),
                ::testing::HasSubstr(
                    "libb.so.1  => /opt/a/lib/libb.so.1  [DT_RUNPATH of liba.so: /opt/a/lib]"));
  }
}

TEST(DepsLoad, RealDlopenOfAFixtureAndAFailureExplained) {
  REQUIRE_COMPILER();
  Root r;
  r.lib("/dep/libdep.so.1", "libdep.so.1")
      .lib("/top/libtop.so", "libtop.so", {"/dep/libdep.so.1"}, {}, "int top(void) { return 0; }");
  // libtop needs libdep.so.1, which is on no search path: dlopen fails.
  const std::string top = r.at("/top/libtop.so").string();
  std::vector<const char*> argv = {"dlenv", "load", top.c_str(), "--json"};
  std::ostringstream out, err;
  EXPECT_EQ(cli_main(static_cast<int>(argv.size()), argv.data(), out, err, false), 1);
  auto j = json::parse(out.str());
  EXPECT_FALSE(j["loaded"].get<bool>());
  EXPECT_THAT(j["error"].get<std::string>(), ::testing::HasSubstr("libdep.so.1"));
  bool explained = false;
  for (const auto& e : j["explanation"]) {
    explained |= e.get<std::string>().find("libdep.so.1 (needed by libtop.so) was not found") !=
                 std::string::npos;
  }
  EXPECT_TRUE(explained) << out.str();
  // The dependency itself loads; its path is reported.
  const std::string dep = r.at("/dep/libdep.so.1").string();
  std::vector<const char*> argv2 = {"dlenv", "load", dep.c_str()};
  std::ostringstream out2, err2;
  EXPECT_EQ(cli_main(static_cast<int>(argv2.size()), argv2.data(), out2, err2, false), 0);
  EXPECT_THAT(out2.str(), ::testing::HasSubstr("path     " + dep));
}

// The real toolkit, when installed: every DT_NEEDED entry resolves to the file
// ldd reports, and the run-time companions are listed and resolved.
TEST(DepsReal, CudnnFromTheInstalledToolkit) {
  const std::string path = "/usr/local/cuda/lib64/libcudnn.so.9";
  if (!fs::exists(path)) GTEST_SKIP() << path << " not present";
  std::vector<const char*> argv = {"dlenv", "deps", path.c_str(), "--json"};
  std::ostringstream out, err;
  const int code = cli_main(static_cast<int>(argv.size()), argv.data(), out, err, false);
  EXPECT_NE(code, kExitUsage) << err.str();
  auto j = json::parse(out.str());
  DepsRun run;
  run.j = j;
  auto kb = Kb::load_embedded();
  ASSERT_TRUE(kb);
  for (const auto& f : (*kb)->cudnn_library_files(9, Os::linux)) {
    if (f == "libcudnn.so.9") continue;
    SCOPED_TRACE(f);
    const auto& o = run.obj(f, path);
    EXPECT_TRUE(o["companion"].get<bool>());
    EXPECT_FALSE(o["missing"].get<bool>());
  }
  auto ldd = run_process({"ldd", path});
  if (!ldd || ldd->exit_code != 0) GTEST_SKIP() << "ldd unavailable";
  std::istringstream lines(ldd->out);
  std::string line;
  size_t compared = 0;
  for (const auto& needed : j["objects"][0]["children"]) {
    const auto& o = j["objects"][needed.get<size_t>()];
    if (o["companion"].get<bool>()) continue;
    const std::string name = o["name"];
    const std::string mark = "\t" + name + " => ";
    const auto at = ldd->out.find(mark);
    ASSERT_NE(at, std::string::npos) << name << " not in ldd output:\n" << ldd->out;
    const auto end = ldd->out.find(" (", at);
    const std::string ldd_path = ldd->out.substr(at + mark.size(), end - at - mark.size());
    EXPECT_EQ(fs::canonical(o["path"].get<std::string>()), fs::canonical(ldd_path)) << name;
    ++compared;
  }
  EXPECT_GE(compared, 5u);
}

}  // namespace
}  // namespace dlenv
