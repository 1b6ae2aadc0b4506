// Windows loader model: one test per search rule and per flag, over small PE
// images built in-test (pe_test_builder.h) inside a temporary tree read as
// drive C: through the rooted file system.
#include "probe/loader_model_win.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "binfmt/pe_test_builder.h"
#include "util/strings.h"
#include "util/temp_dir_test_support.h"

namespace dlenv {
namespace {

namespace fs = std::filesystem;
using testbuild::build_pe;
using testbuild::PeSpec;

class WinTree {
 public:
  WinTree() {
    root_ = testing::make_unique_temp_dir("winld");
    fs_ = make_rooted_filesystem(root_.string());
    auto kb = Kb::load_embedded();
    if (!kb) throw std::runtime_error(kb.error().message);
    kb_ = *kb;
  }
  ~WinTree() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  WinTree(const WinTree&) = delete;
  WinTree& operator=(const WinTree&) = delete;

  // A PE file at a logical path ("/CUDA/bin/x.dll").
  WinTree& pe(const std::string& logical, const PeSpec& spec) {
    const fs::path p = root_ / logical.substr(1);
    fs::create_directories(p.parent_path());
    const auto img = build_pe(spec);
    std::ofstream(p, std::ios::binary)
        .write(reinterpret_cast<const char*>(img.bytes.data()),
               static_cast<std::streamsize>(img.bytes.size()));
    return *this;
  }
  // A DLL importing `imports` (each with no functions unless given).
  WinTree& dll(const std::string& logical, const std::vector<std::string>& imports = {},
               bool is64 = true) {
    PeSpec s;
    s.is64 = is64;
    s.machine = is64 ? 0x8664 : 0x14c;
    for (const auto& i : imports) s.imports.push_back({i, {}});
    return pe(logical, s);
  }
  WinTree& text(const std::string& logical, const std::string& content) {
    const fs::path p = root_ / logical.substr(1);
    fs::create_directories(p.parent_path());
    std::ofstream(p) << content;
    return *this;
  }

  Result<LoadTree> model(const std::string& target, const WindowsLoaderSettings& s) const {
    return model_windows_load(*fs_, *kb_, target, s);
  }
  LoadTree ok(const std::string& target, const WindowsLoaderSettings& s = {}) const {
    auto t = model(target, s);
    if (!t) throw std::runtime_error(t.error().message);
    return *t;
  }

 private:
  fs::path root_;
  std::unique_ptr<FileSystem> fs_;
  std::shared_ptr<const Kb> kb_;
};

WindowsLoaderSettings no_companions() {
  WindowsLoaderSettings s;
  s.companions = false;
  return s;
}

const LoadedObject& find(const LoadTree& t, const std::string& name) {
  for (const auto& o : t.objects) {
    if (to_lower(o.name) == to_lower(name)) return o;
  }
  throw std::runtime_error("no object " + name);
}

TEST(WindowsPaths, LogicalAndDisplayForms) {
  EXPECT_EQ(windows_logical_path("C:\\Windows\\System32"), "/Windows/System32");
  EXPECT_EQ(windows_logical_path("c:/x/y/"), "/x/y");
  EXPECT_EQ(windows_logical_path("\\\\?\\C:\\a\\b"), "/a/b");
  EXPECT_EQ(windows_logical_path("D:\\data"), "/D:/data");
  EXPECT_EQ(windows_logical_path("/already/logical"), "/already/logical");
  EXPECT_EQ(windows_logical_path(""), "");
  EXPECT_EQ(windows_display_path("/Windows/System32"), "C:\\Windows\\System32");
  EXPECT_EQ(windows_display_path("/D:/data"), "D:\\data");
}

TEST(WindowsLoader, KnownDllsAndApiSetsArePresentInAPartialTree) {
  WinTree t;
  t.dll("/app/a.dll", {"KERNEL32.dll", "api-ms-win-crt-runtime-l1-1-0.dll", "ext-ms-win-x.dll"});
  auto tree = t.ok("C:\\app\\a.dll", no_companions());
  EXPECT_EQ(tree.errors, 0);
  EXPECT_EQ(find(tree, "kernel32.dll").rule, SearchRule::known_dll);
  EXPECT_FALSE(find(tree, "kernel32.dll").missing);
  EXPECT_EQ(find(tree, "api-ms-win-crt-runtime-l1-1-0.dll").rule, SearchRule::api_set);
  EXPECT_EQ(find(tree, "ext-ms-win-x.dll").rule, SearchRule::api_set);
}

TEST(WindowsLoader, KnownDllWinsOverACopyInTheApplicationDirectory) {
  WinTree t;
  t.dll("/app/prog.exe", {"user32.dll"}).dll("/app/user32.dll").dll("/Windows/System32/user32.dll");
  auto tree = t.ok("/app/prog.exe", no_companions());
  const auto& u = find(tree, "user32.dll");
  EXPECT_EQ(u.rule, SearchRule::known_dll);
  EXPECT_EQ(u.path, "/Windows/System32/user32.dll");
}

TEST(WindowsLoader, StandardOrderAppDirThenSystem32SystemWindowsCwdPath) {
  WinTree t;
  t.dll("/app/prog.exe", {"a.dll", "b.dll", "c.dll", "d.dll", "e.dll", "f.dll"});
  for (const char* d :
       {"/app", "/Windows/System32", "/Windows/System", "/Windows", "/cwd", "/p1"}) {
    t.dll(std::string(d) + "/f.dll");
  }
  t.dll("/app/a.dll").dll("/Windows/System32/b.dll").dll("/p1/b.dll");
  t.dll("/Windows/System/c.dll").dll("/Windows/d.dll").dll("/cwd/e.dll").dll("/p1/e.dll");
  WindowsLoaderSettings s = no_companions();
  s.current_dir = "C:\\cwd";
  s.path = {"C:\\p1"};
  auto tree = t.ok("/app/prog.exe", s);
  EXPECT_EQ(tree.errors, 0);
  EXPECT_EQ(find(tree, "a.dll").rule, SearchRule::app_dir);
  EXPECT_EQ(find(tree, "b.dll").rule, SearchRule::system32);
  ASSERT_EQ(find(tree, "b.dll").shadowed.size(), 1u);
  EXPECT_EQ(find(tree, "b.dll").shadowed[0].path, "/p1/b.dll");
  EXPECT_EQ(find(tree, "c.dll").rule, SearchRule::system16);
  EXPECT_EQ(find(tree, "d.dll").rule, SearchRule::windows_dir);
  EXPECT_EQ(find(tree, "e.dll").rule, SearchRule::current_dir);
  // f.dll everywhere: the application directory, the other five shadowed in order.
  const auto& f = find(tree, "f.dll");
  EXPECT_EQ(f.rule, SearchRule::app_dir);
  ASSERT_EQ(f.shadowed.size(), 5u);
  EXPECT_EQ(f.shadowed[0].rule, SearchRule::system32);
  EXPECT_EQ(f.shadowed[3].rule, SearchRule::current_dir);
  EXPECT_EQ(f.shadowed[4].rule, SearchRule::path_env);
}

TEST(WindowsLoader, SafeDllSearchModeOffPutsTheCurrentDirectoryBeforeSystem32) {
  WinTree t;
  t.dll("/app/prog.exe", {"x.dll"}).dll("/cwd/x.dll").dll("/Windows/System32/x.dll");
  WindowsLoaderSettings s = no_companions();
  s.current_dir = "/cwd";
  EXPECT_EQ(find(t.ok("/app/prog.exe", s), "x.dll").rule, SearchRule::system32);
  s.safe_dll_search = false;
  EXPECT_EQ(find(t.ok("/app/prog.exe", s), "x.dll").rule, SearchRule::current_dir);
}

TEST(WindowsLoader, NamesCompareCaseInsensitivelyAndGetDllAppended) {
  WinTree t;
  t.dll("/app/prog.exe", {"CUBLAS64_12"}).dll("/p/cuBLAS64_12.DLL");
  WindowsLoaderSettings s = no_companions();
  s.path = {"/p"};
  auto tree = t.ok("/app/prog.exe", s);
  const auto& c = find(tree, "cublas64_12.dll");
  EXPECT_EQ(c.rule, SearchRule::path_env);
  EXPECT_EQ(c.path, "/p/cuBLAS64_12.DLL");
}

TEST(WindowsLoader, PlainLoadLibraryOfAPathDoesNotSearchTheDllsOwnDirectory) {
  WinTree t;
  t.dll("/cudnn/bin/cudnn64_8.dll", {"cublasLt64_11.dll"}).dll("/cudnn/bin/cublasLt64_11.dll");
  t.dll("/CUDA/v11.8/bin/cublasLt64_11.dll");
  WindowsLoaderSettings s = no_companions();
  s.hint_dirs = {"C:\\CUDA\\v11.8\\bin"};
  auto tree = t.ok("C:\\cudnn\\bin\\cudnn64_8.dll", s);
  // The DLL's own directory is not searched, but it is where the model finds a copy.
  const auto& lt = find(tree, "cublasLt64_11.dll");
  EXPECT_TRUE(lt.missing);
  EXPECT_EQ(lt.win_error, 126);
  EXPECT_EQ(tree.errors, 1);
  EXPECT_NE(lt.problem.find("a copy exists in C:\\CUDA\\v11.8\\bin, which is not on PATH"),
            std::string::npos)
      << lt.problem;
  // With LOAD_WITH_ALTERED_SEARCH_PATH the DLL's directory comes first.
  s.flags = kLoadWithAlteredSearchPath;
  auto tree2 = t.ok("C:\\cudnn\\bin\\cudnn64_8.dll", s);
  EXPECT_EQ(find(tree2, "cublasLt64_11.dll").rule, SearchRule::dll_load_dir);
  EXPECT_EQ(tree2.errors, 0);
}

TEST(WindowsLoader, PythonExtensionModulesDoNotSearchPath) {
  WinTree t;
  t.dll("/Python311/python.exe");
  t.dll("/site/torch/_C.pyd", {"torch_python.dll"});
  t.dll("/site/torch/lib/torch_python.dll", {"cudart64_12.dll", "python311.dll"});
  t.dll("/Python311/python311.dll");
  t.dll("/CUDA/bin/cudart64_12.dll");
  WindowsLoaderSettings s = no_companions();
  s.flags = kLoadLibrarySearchDefaultDirs | kLoadLibrarySearchDllLoadDir;
  s.python_extension = true;
  s.app_dir = "C:\\Python311";
  s.user_dirs = {"C:\\site\\torch\\lib"};
  s.path = {"C:\\CUDA\\bin"};
  auto tree = t.ok("/site/torch/_C.pyd", s);
  EXPECT_EQ(find(tree, "torch_python.dll").rule, SearchRule::user_dirs);
  EXPECT_EQ(find(tree, "python311.dll").rule, SearchRule::app_dir);
  const auto& rt = find(tree, "cudart64_12.dll");
  ASSERT_TRUE(rt.missing);
  EXPECT_NE(rt.problem.find("which is on PATH, but this load does not search PATH"),
            std::string::npos)
      << rt.problem;
  EXPECT_NE(rt.problem.find("os.add_dll_directory(r\"C:\\CUDA\\bin\")"), std::string::npos);
  // os.add_dll_directory for it: found as a user directory.
  s.user_dirs.push_back("C:\\CUDA\\bin");
  auto tree2 = t.ok("/site/torch/_C.pyd", s);
  EXPECT_EQ(find(tree2, "cudart64_12.dll").rule, SearchRule::user_dirs);
  EXPECT_EQ(tree2.errors, 0);
  // The same load through plain LoadLibrary (Python 3.7): PATH is searched.
  WindowsLoaderSettings old = no_companions();
  old.app_dir = "C:\\Python311";
  old.path = {"C:\\site\\torch\\lib", "C:\\CUDA\\bin"};
  EXPECT_EQ(find(t.ok("/site/torch/_C.pyd", old), "cudart64_12.dll").rule, SearchRule::path_env);
}

TEST(WindowsLoader, DllLoadDirFlagSearchesTheRootsDirectoryFirst) {
  WinTree t;
  t.dll("/lib/a.dll", {"b.dll"}).dll("/lib/b.dll").dll("/Windows/System32/b.dll");
  WindowsLoaderSettings s = no_companions();
  s.flags = kLoadLibrarySearchDllLoadDir | kLoadLibrarySearchSystem32;
  const auto tree = t.ok("/lib/a.dll", s);  // keep the tree: find() returns a reference into it
  const auto& b = find(tree, "b.dll");
  EXPECT_EQ(b.rule, SearchRule::dll_load_dir);
  ASSERT_EQ(b.shadowed.size(), 1u);
  EXPECT_EQ(b.shadowed[0].rule, SearchRule::system32);
}

TEST(WindowsLoader, SetDllDirectoryReplacesTheCurrentDirectory) {
  WinTree t;
  t.dll("/app/prog.exe", {"x.dll"}).dll("/cwd/x.dll").dll("/extra/x.dll");
  WindowsLoaderSettings s = no_companions();
  s.current_dir = "/cwd";
  s.dll_directory = "C:\\extra";
  const auto tree = t.ok("/app/prog.exe", s);  // keep the tree: find() returns a reference into it
  const auto& x = find(tree, "x.dll");
  EXPECT_EQ(x.rule, SearchRule::user_dirs);
  EXPECT_EQ(x.rule_detail, "SetDllDirectory");
  EXPECT_TRUE(x.shadowed.empty());  // the current directory is no longer searched
}

TEST(WindowsLoader, AlreadyLoadedModulesMatchByNameCaseInsensitively) {
  WinTree t;
  t.dll("/app/a.dll", {"zlibwapi.dll", "b.dll", "B.DLL"}).dll("/app/b.dll").dll("/app/prog.exe");
  WindowsLoaderSettings s = no_companions();
  s.app_dir = "/app";
  s.preloaded = {"C:\\elsewhere\\ZLIBWAPI.dll"};
  auto tree = t.ok("/app/a.dll", s);
  EXPECT_EQ(find(tree, "zlibwapi.dll").rule, SearchRule::already_loaded);
  EXPECT_EQ(tree.errors, 0);
  // b.dll and B.DLL are one import.
  EXPECT_EQ(tree.objects[0].children.size(), 2u);
}

TEST(WindowsLoader, Wrong32BitDllFirstOnPathIs193EvenWithA64BitCopyLater) {
  WinTree t;
  t.dll("/app/prog.exe", {"zlibwapi.dll"}).dll("/x86/zlibwapi.dll", {}, false);
  t.dll("/x64/zlibwapi.dll");
  WindowsLoaderSettings s = no_companions();
  s.path = {"C:\\x86", "C:\\x64"};
  auto tree = t.ok("/app/prog.exe", s);
  const auto& z = find(tree, "zlibwapi.dll");
  EXPECT_EQ(z.win_error, 193);
  EXPECT_TRUE(z.wrong_class);
  EXPECT_EQ(z.path, "/x86/zlibwapi.dll");
  EXPECT_NE(z.problem.find("PE32 (x86)"), std::string::npos) << z.problem;
  EXPECT_NE(z.problem.find("copy exists in C:\\x64"), std::string::npos) << z.problem;
  EXPECT_EQ(tree.errors, 1);
  // The right copy first: no error.
  s.path = {"C:\\x64", "C:\\x86"};
  EXPECT_EQ(t.ok("/app/prog.exe", s).errors, 0);
}

TEST(WindowsLoader, ProcessBitnessFromSettingsFlagsA64BitRoot) {
  WinTree t;
  t.dll("/app/cudnn64_8.dll");
  WindowsLoaderSettings s = no_companions();
  s.machine = 0x14c;  // a 32-bit python.exe
  auto tree = t.ok("/app/cudnn64_8.dll", s);
  EXPECT_EQ(tree.objects[0].win_error, 193);
  EXPECT_EQ(tree.errors, 1);
}

TEST(WindowsLoader, MissingImportsByNameOrdinalAndForwarderAre127) {
  WinTree t;
  PeSpec top;
  top.imports = {{"lib.dll", {"present", "absent", "#2", "#9", "fwd_ok", "fwd_bad"}}};
  t.pe("/app/top.dll", top);
  PeSpec lib;
  lib.export_name = "lib.dll";
  lib.exports = {
      {"present", ""}, {"second", ""}, {"fwd_ok", "other.real"}, {"fwd_bad", "other.gone"}};
  t.pe("/app/lib.dll", lib);
  PeSpec other;
  other.export_name = "other.dll";
  other.exports = {{"real", ""}};
  t.pe("/app/other.dll", other);
  WindowsLoaderSettings s = no_companions();
  s.app_dir = "C:\\app";
  auto tree = t.ok("/app/top.dll", s);
  const auto& o = tree.objects[0];
  EXPECT_EQ(o.win_error, 127);
  ASSERT_EQ(o.missing_symbols.size(), 3u) << join(o.missing_symbols, " | ");
  EXPECT_EQ(o.missing_symbols[0], "absent (lib.dll)");
  EXPECT_EQ(o.missing_symbols[1], "ordinal 9 (lib.dll)");
  EXPECT_NE(o.missing_symbols[2].find("fwd_bad (lib.dll: forwarded to other.gone"),
            std::string::npos)
      << o.missing_symbols[2];
  EXPECT_NE(o.problem.find("LoadLibrary error 127"), std::string::npos);
}

TEST(WindowsLoader, MixedCudnnFileVersionsAreFlagged) {
  WinTree t;
  PeSpec main;
  main.version_resource = true;
  main.file_version[0] = 8, main.file_version[1] = 9, main.file_version[2] = 7;
  main.file_version[3] = 29;
  t.pe("/cudnn/cudnn64_8.dll", main);
  PeSpec sub = main;
  sub.file_version[1] = 2, sub.file_version[2] = 2, sub.file_version[3] = 26;
  for (const char* n :
       {"cudnn_ops_infer64_8.dll", "cudnn_ops_train64_8.dll", "cudnn_cnn_infer64_8.dll",
        "cudnn_cnn_train64_8.dll", "cudnn_adv_infer64_8.dll", "cudnn_adv_train64_8.dll"}) {
    t.pe(std::string("/old/") + n, sub);
  }
  t.dll("/old/zlibwapi.dll").dll("/Windows/System32/nvcuda.dll").dll("/cuda/cublasLt64_11.dll");
  WindowsLoaderSettings s;
  s.path = {"C:\\old"};
  s.flags = kLoadWithAlteredSearchPath;
  auto tree = t.ok("C:\\cudnn\\cudnn64_8.dll", s);
  const auto& ops = find(tree, "cudnn_ops_infer64_8.dll");
  EXPECT_TRUE(ops.companion);
  EXPECT_EQ(ops.version, "8.2.2.26");
  EXPECT_NE(ops.family_mismatch.find("cuDNN DLLs of different file versions are mixed"),
            std::string::npos);
  EXPECT_NE(tree.objects[0].family_mismatch.find("C:\\cudnn\\cudnn64_8.dll 8.9.7.29"),
            std::string::npos)
      << tree.objects[0].family_mismatch;
  // The main DLL's version is the reference: the six 8.2 sub-DLLs carry the error.
  EXPECT_EQ(tree.objects[0].severity, LoadSeverity::none);
  EXPECT_EQ(ops.win_error, 127);
  EXPECT_NE(ops.problem.find("cudnn_ops_infer64_8.dll is 8.2.2.26 while cudnn64_8.dll is 8.9.7.29"),
            std::string::npos)
      << ops.problem;
  EXPECT_EQ(tree.errors, 6);
  // 8.2 sub-DLLs do not ask for zlibwapi.dll.
  for (const auto& o : tree.objects) EXPECT_NE(to_lower(o.name), "zlibwapi.dll");
}

TEST(WindowsLoader, Cudnn8CompanionsZlibwapiAndDriver) {
  WinTree t;
  PeSpec v;
  v.version_resource = true;
  v.file_version[0] = 8, v.file_version[1] = 9, v.file_version[2] = 7, v.file_version[3] = 29;
  v.imports = {{"cublasLt64_11.dll", {}}};
  t.pe("/cudnn/bin/cudnn64_8.dll", v);
  v.imports.clear();
  for (const char* n :
       {"cudnn_ops_infer64_8.dll", "cudnn_ops_train64_8.dll", "cudnn_cnn_infer64_8.dll",
        "cudnn_cnn_train64_8.dll", "cudnn_adv_infer64_8.dll", "cudnn_adv_train64_8.dll"}) {
    t.pe(std::string("/cudnn/bin/") + n, v);
  }
  t.dll("/cudnn/bin/cublasLt64_11.dll");
  WindowsLoaderSettings s;
  s.flags = kLoadWithAlteredSearchPath;
  auto tree = t.ok("/cudnn/bin/cudnn64_8.dll", s);
  const auto& z = find(tree, "zlibwapi.dll");
  EXPECT_TRUE(z.companion);
  EXPECT_TRUE(z.missing);
  EXPECT_EQ(z.severity, LoadSeverity::error);
  EXPECT_NE(z.companion_note.find("zlibwapi"), std::string::npos);
  const auto& nv = find(tree, "nvcuda.dll");
  EXPECT_TRUE(nv.companion);
  EXPECT_EQ(nv.severity, LoadSeverity::warning);
  EXPECT_EQ(tree.warnings, 1);
  EXPECT_EQ(tree.errors, 1);  // zlibwapi.dll (asked for by both infer DLLs: once, then loaded)
  EXPECT_FALSE(find(tree, "cudnn_adv_train64_8.dll").missing);
}

TEST(WindowsLoader, CublasNeedsCublasLtAndCudnnNamesInBytesAreCompanions) {
  WinTree t;
  t.dll("/cuda/cublas64_12.dll");
  auto tree = t.ok("/cuda/cublas64_12.dll");
  EXPECT_TRUE(find(tree, "cublasLt64_12.dll").companion);
  EXPECT_TRUE(find(tree, "cublasLt64_12.dll").missing);
  // A cuDNN 9 sub-DLL naming cublasLt64_12.dll and nvrtc64_120_0.dll in its data.
  using namespace std::string_literals;
  const std::string extra = "\0cublasLt64_12.dll\0nvrtc64_120_0.dll\0xcublasLt64_1.dll\0"s;
  auto bytes = build_pe(PeSpec{}).bytes;
  bytes.insert(bytes.end(), extra.begin(), extra.end());
  t.text("/cudnn9/cudnn_engines_runtime_compiled64_9.dll", std::string(bytes.begin(), bytes.end()));
  auto tree9 = t.ok("/cudnn9/cudnn_engines_runtime_compiled64_9.dll");
  EXPECT_TRUE(find(tree9, "nvrtc64_120_0.dll").companion);
  EXPECT_TRUE(find(tree9, "cublasLt64_12.dll").companion);
  for (const auto& o : tree9.objects) EXPECT_NE(o.name, "xcublasLt64_1.dll");
}

TEST(WindowsLoader, MissingDelayLoadImportIsAWarning) {
  WinTree t;
  PeSpec s;
  s.delay_imports = {{"nvToolsExt64_1.dll", {"nvtxRangePushA"}}};
  t.pe("/app/a.dll", s);
  auto tree = t.ok("/app/a.dll", no_companions());
  const auto& n = find(tree, "nvToolsExt64_1.dll");
  EXPECT_TRUE(n.delay_load);
  EXPECT_TRUE(n.missing);
  EXPECT_EQ(n.severity, LoadSeverity::warning);
  EXPECT_EQ(tree.errors, 0);
}

TEST(WindowsLoader, BareNameIsSearchedAndRootErrorsAreErrors) {
  WinTree t;
  t.dll("/p/cudnn64_9.dll").text("/p/notpe.dll", "hello");
  WindowsLoaderSettings s = no_companions();
  s.path = {"C:\\p"};
  auto tree = t.ok("CUDNN64_9", s);
  EXPECT_EQ(tree.objects[0].path, "/p/cudnn64_9.dll");
  EXPECT_EQ(tree.objects[0].rule, SearchRule::path_env);
  auto missing = t.ok("nothere.dll", s);
  EXPECT_TRUE(missing.objects[0].missing);
  EXPECT_EQ(missing.errors, 1);
  EXPECT_FALSE(t.model("/p/absent.dll", s).has_value());
  auto notpe = t.model("/p/notpe.dll", s);
  ASSERT_FALSE(notpe.has_value());
  EXPECT_NE(notpe.error().message.find("not a PE file"), std::string::npos);
}

}  // namespace
}  // namespace dlenv
