#include "actions/cudnn_inspect.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "actions/cudnn_test_support.h"
#include "platform/filesystem.h"

namespace dlenv {
namespace {

using testing::ArchiveEntry;
using testing::ArchiveFormat;
using testing::TempDir;

std::shared_ptr<const Kb> kb() {
  static auto k = Kb::load_embedded();
  return *k;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string joined(const std::vector<std::string>& v) {
  std::string o;
  for (const auto& s : v) o += s + "\n";
  return o;
}

TEST(CudnnArchiveName, ModernLegacyAndOthers) {
  auto n = parse_cudnn_archive_name("cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->platform, "linux-x86_64");
  EXPECT_EQ(n->version->str(), "9.1.0.70");
  EXPECT_EQ(n->cuda_major, 12);
  n = parse_cudnn_archive_name("cudnn-windows-x86_64-8.3.2.44_cuda11.5-archive.zip");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->os, "windows");
  EXPECT_EQ(n->cuda_major, 11);
  n = parse_cudnn_archive_name("cudnn-linux-sbsa-9.10.1.4_cuda13-archive");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->platform, "linux-sbsa");
  n = parse_cudnn_archive_name("cudnn-11.2-linux-x64-v8.1.0.77.tgz");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->platform, "linux-x86_64");
  EXPECT_EQ(n->version->str(), "8.1.0.77");
  EXPECT_EQ(n->cuda_major, 11);
  EXPECT_FALSE(parse_cudnn_archive_name("my-cudnn-copy.tar.xz"));
}

TEST(CudnnVersionHeader, MacrosOnly) {
  EXPECT_EQ(parse_cudnn_version_header(testing::version_header(9, 19, 0))->str(), "9.19.0");
  EXPECT_EQ(parse_cudnn_version_header("#  define CUDNN_MAJOR 8\n#define CUDNN_MINOR 5\n")->str(),
            "8.5.0");
  // Other macros that start the same way and comments do not count.
  EXPECT_FALSE(parse_cudnn_version_header("// #define CUDNN_MAJOR 9\n#define CUDNN_MAJOR_X 1\n"));
  EXPECT_FALSE(parse_cudnn_version_header(""));
}

TEST(CudnnInspect, LinuxArchiveComplete) {
  TempDir tmp("insp");
  const std::string name = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive";
  testing::write_archive(tmp.at(name + ".tar.xz"), ArchiveFormat::tar_xz,
                         testing::fake_cudnn9_linux(name, 1, 0, 12));
  auto src = open_cudnn_source(tmp.at(name + ".tar.xz"));
  ASSERT_TRUE(src) << src.error().message;
  auto info = inspect_cudnn(**src, *kb());
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->version->str(), "9.1.0.70");
  EXPECT_EQ(*info->platform, "linux-x86_64");
  EXPECT_EQ(*info->cuda_major, 12);
  // Both the file name and the libraries' cuBLASLt name say CUDA 12.
  EXPECT_TRUE(std::any_of(
      info->cuda_evidence.begin(), info->cuda_evidence.end(),
      [](const std::string& s) { return s.find("loads libcublasLt.so.12") != std::string::npos; }))
      << joined(info->cuda_evidence);
  EXPECT_EQ(info->manifest, "cuDNN 9.x linux");
  EXPECT_TRUE(info->missing.empty()) << joined(info->missing);
  EXPECT_TRUE(info->extra.empty()) << joined(info->extra);
  EXPECT_TRUE(info->unexpected.empty()) << joined(info->unexpected);
  EXPECT_TRUE(info->errors.empty()) << joined(info->errors);
  EXPECT_TRUE(info->complete());
  auto lib = std::find_if(info->files.begin(), info->files.end(),
                          [](const CudnnDistFile& f) { return f.path == "lib/libcudnn.so.9"; });
  ASSERT_NE(lib, info->files.end());
  EXPECT_EQ(lib->dest, "lib64/libcudnn.so.9");
  EXPECT_EQ(lib->type, SourceEntryType::symlink);
  std::string text = render_cudnn_inspect_text(*info);
  EXPECT_NE(text.find("result: complete"), std::string::npos) << text;
  std::string json = render_cudnn_inspect_json(*info);
  EXPECT_NE(json.find("\"schema\": \"dlenv.cudnn-inspect/1\""), std::string::npos);
}

// Every archive the KB knows carries NVIDIA's name for what the row says it is.
TEST(CudnnInspect, EveryKnownArchiveNameSaysItsRow) {
  auto files = kb()->file_text("cudnn_archives.json");
  ASSERT_TRUE(files);
  size_t n = 0;
  const nlohmann::json doc = nlohmann::json::parse(*files);
  for (const auto& row : doc.at("archives")) {
    const std::string file = row["file"];
    SCOPED_TRACE(file);
    const CudnnArchive* a = kb()->cudnn_archive_by_file(file);
    ASSERT_NE(a, nullptr);
    auto name = parse_cudnn_archive_name(file);
    ASSERT_TRUE(name);
    EXPECT_EQ(name->platform, a->platform);
    EXPECT_EQ(name->version, a->cudnn);
    EXPECT_EQ(name->cuda_major, a->cuda_major);
    // The release is one the cuDNN table knows, for that CUDA major.
    bool built_for = false;
    for (const auto& b : kb()->cudnn_builds(a->cudnn)) {
      built_for |= b.cuda_min.major() <= a->cuda_major && a->cuda_major <= b.cuda_max.major();
    }
    EXPECT_TRUE(built_for);
    ++n;
  }
  EXPECT_GE(n, 80U);
}

TEST(CudnnInspect, ArchiveDigestAgainstTheKb) {
  const std::string known = "cudnn-linux-x86_64-9.17.0.29_cuda13-archive.tar.xz";
  const std::string sha = "455f15075493c82a1a8850aae6120f3fa6f7e457cbef56c1cb2e0a618b5b509e";
  const std::string other = std::string(64, 'a');
  // The digest of a known archive, under its own name or another: a match.
  for (const std::string& name : {known, std::string("renamed.tar.xz")}) {
    CudnnDistInfo info;
    info.file_name = name;
    add_archive_digest(info, *kb(), sha);
    ASSERT_TRUE(info.known_archive) << name;
    EXPECT_EQ(info.known_archive->file, known);
    EXPECT_TRUE(info.errors.empty());
    EXPECT_NE(render_cudnn_inspect_text(info).find("= NVIDIA's " + known), std::string::npos);
    EXPECT_NE(render_cudnn_inspect_json(info).find("\"known_archive\": {"), std::string::npos);
  }
  // NVIDIA's name with another digest: damaged, and the message says what NVIDIA published.
  CudnnDistInfo bad;
  bad.file_name = known;
  add_archive_digest(bad, *kb(), other);
  EXPECT_FALSE(bad.known_archive);
  ASSERT_EQ(bad.errors.size(), 1U);
  EXPECT_NE(bad.errors[0].find("SHA-256 is " + other + ", not the " + sha), std::string::npos)
      << bad.errors[0];
  EXPECT_NE(bad.errors[0].find("download it again"), std::string::npos);
  EXPECT_FALSE(bad.complete());
  EXPECT_NE(render_cudnn_inspect_json(bad).find("\"known_archive\": null"), std::string::npos);
  // An unknown name and digest: nothing to say.
  CudnnDistInfo unknown;
  unknown.file_name = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz";
  add_archive_digest(unknown, *kb(), other);
  EXPECT_FALSE(unknown.known_archive);
  EXPECT_TRUE(unknown.errors.empty() && unknown.warnings.empty());
  // An unconfirmed row: a warning, never an error.
  const CudnnArchive* newest =
      kb()->cudnn_archive_by_file("cudnn-linux-x86_64-9.24.0.43_cuda13-archive.tar.xz");
  ASSERT_NE(newest, nullptr);
  ASSERT_FALSE(newest->ref.confirmed);
  CudnnDistInfo soft;
  soft.file_name = newest->file;
  add_archive_digest(soft, *kb(), other);
  EXPECT_TRUE(soft.errors.empty());
  ASSERT_EQ(soft.warnings.size(), 1U);
  EXPECT_NE(soft.warnings[0].find("has not confirmed"), std::string::npos);
}

TEST(CudnnInspect, Windows8_5_0_96AgainstItsManifest) {
  TempDir tmp("inspw");
  const std::string name = "cudnn-windows-x86_64-8.5.0.96_cuda11-archive";
  auto entries = testing::fake_cudnn8_windows(name, 11);
  testing::write_archive(tmp.at("full.zip"), ArchiveFormat::zip, entries);
  {
    auto src = open_cudnn_source(tmp.at("full.zip"));
    ASSERT_TRUE(src) << src.error().message;
    auto info = inspect_cudnn(**src, *kb());
    ASSERT_TRUE(info) << info.error().message;
    // No NVIDIA name here: the platform comes from the .dll files, CUDA from the imports.
    EXPECT_EQ(info->os, Os::windows);
    EXPECT_EQ(info->version->str(), "8.5.0");
    EXPECT_EQ(*info->cuda_major, 11) << info->cuda_major.reason;
    EXPECT_EQ(info->manifest, "cuDNN 8.5.0.96 windows");
    EXPECT_EQ(info->manifest_files, 31u);
    EXPECT_EQ(info->file_count, 31u);
    EXPECT_TRUE(info->complete()) << joined(info->missing) << joined(info->errors);
  }
  // One import library less, one DLL less, and a stray program.
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [&](const ArchiveEntry& e) {
                                 return e.path == name + "/lib/x64/cudnn_adv_train.lib" ||
                                        e.path == name + "/bin/cudnn_cnn_infer64_8.dll";
                               }),
                entries.end());
  entries.push_back({name + "/bin/setup.exe", "MZ"});
  testing::write_archive(tmp.at(name + ".zip"), ArchiveFormat::zip, entries);
  auto src = open_cudnn_source(tmp.at(name + ".zip"));
  ASSERT_TRUE(src) << src.error().message;
  auto info = inspect_cudnn(**src, *kb());
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->version->str(), "8.5.0.96");
  EXPECT_TRUE(has(info->missing, "lib/x64/cudnn_adv_train.lib")) << joined(info->missing);
  EXPECT_TRUE(has(info->missing, "bin/cudnn_cnn_infer64_8.dll"));
  EXPECT_TRUE(has(info->unexpected, "bin/setup.exe"));
  EXPECT_FALSE(info->complete());
  // A missing DLL is an error even against an unconfirmed manifest; the .lib only "missing".
  EXPECT_EQ(info->errors.size(), 1u) << joined(info->errors);
  EXPECT_NE(joined(info->errors).find("cudnn_cnn_infer64_8.dll is missing"), std::string::npos);
}

TEST(CudnnInspect, ExtraFilesAndMismatchedNames) {
  TempDir tmp("inspx");
  // Named CUDA 13 but the libraries load the CUDA 12 cuBLASLt; one extra header.
  const std::string name = "cudnn-linux-x86_64-9.1.0.70_cuda13-archive";
  auto entries = testing::fake_cudnn9_linux(name, 1, 0, 12);
  entries.push_back({name + "/include/cudnn_new_feature.h", "/* new */"});
  testing::write_archive(tmp.at(name + ".tar.xz"), ArchiveFormat::tar_xz, entries);
  auto src = open_cudnn_source(tmp.at(name + ".tar.xz"));
  ASSERT_TRUE(src) << src.error().message;
  auto info = inspect_cudnn(**src, *kb());
  ASSERT_TRUE(info);
  EXPECT_TRUE(has(info->extra, "include/cudnn_new_feature.h")) << joined(info->extra);
  EXPECT_NE(joined(info->errors).find("the file name says CUDA 13 but"), std::string::npos)
      << joined(info->errors);
  EXPECT_FALSE(info->complete());
}

TEST(CudnnInspect, NoVersionHeaderIsNotADistribution) {
  TempDir tmp("insph");
  testing::write_archive(tmp.at("x.tar.xz"), ArchiveFormat::tar_xz,
                         {{"x/README", "hello"}, {"x/lib/libfoo.so", "ELF"}});
  auto src = open_cudnn_source(tmp.at("x.tar.xz"));
  ASSERT_TRUE(src);
  auto info = inspect_cudnn(**src, *kb());
  ASSERT_TRUE(info);
  EXPECT_FALSE(info->version);
  EXPECT_FALSE(info->complete());
  EXPECT_NE(joined(info->errors).find("cudnn_version.h"), std::string::npos);
  EXPECT_TRUE(has(info->unexpected, "lib/libfoo.so"));
}

// The real toolkit of this machine (CUDA 13 with cuDNN 9), read only.
TEST(CudnnInspect, RealToolkitReadOnly) {
  const std::string dir = "/usr/local/cuda";
  if (!make_real_filesystem()->exists(dir + "/include/cudnn_version.h")) {
    GTEST_SKIP() << "no cuDNN in " << dir;
  }
  auto before = make_real_filesystem()->stat(dir + "/include/cudnn_version.h");
  SourceLimits limits;
  limits.max_entries = 200000;
  limits.max_total_bytes = 64ull << 30;
  auto src = open_cudnn_source(dir, limits);
  ASSERT_TRUE(src) << src.error().message;
  auto info = inspect_cudnn(**src, *kb());
  ASSERT_TRUE(info) << info.error().message;
  ASSERT_TRUE(info->version) << info->version.reason;
  EXPECT_EQ(info->version->major(), 9);
  // cuDNN 9 names the cuBLASLt it loads; the toolkit is CUDA 13.
  ASSERT_TRUE(info->cuda_major) << info->cuda_major.reason << joined(info->errors);
  EXPECT_EQ(*info->cuda_major, 13) << joined(info->cuda_evidence);
  auto after = make_real_filesystem()->stat(dir + "/include/cudnn_version.h");
  EXPECT_EQ(before->mtime, after->mtime);
}

}  // namespace
}  // namespace dlenv
