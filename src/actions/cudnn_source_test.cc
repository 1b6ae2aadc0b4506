#include "actions/cudnn_source.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>

#include "actions/cudnn_inspect.h"
#include "actions/cudnn_test_support.h"
#include "kb/kb.h"
#include "platform/process.h"
#include "util/strings.h"

namespace dlenv {
namespace {

using testing::ArchiveEntry;
using testing::ArchiveFormat;
using testing::TempDir;
using testing::write_archive;

std::vector<ArchiveEntry> small_tree(const std::string& top) {
  return {{top, "", ArchiveEntry::dir, "", 0755},
          {top + "/include/cudnn_version.h", testing::version_header(9, 1, 0)},
          {top + "/lib/libcudnn.so.9.1.0", "ELF?", ArchiveEntry::file, "", 0755},
          {top + "/lib/libcudnn.so.9", "", ArchiveEntry::symlink, "libcudnn.so.9.1.0", 0777},
          {top + "/LICENSE", "license\n"}};
}

// The tar programs installed here that can read `fmt` (GNU tar cannot read .zip).
std::vector<TarProgram> testing_tar_programs(ArchiveFormat fmt) {
  std::vector<TarProgram> out;
  for (const char* p : {"bsdtar", "tar"}) {
    auto t = probe_tar_program(p);
    if (!t || (fmt == ArchiveFormat::zip && t->flavor == TarFlavor::gnu)) continue;
    out.push_back(*t);
  }
  return out;
}

class SourceFormats : public ::testing::TestWithParam<ArchiveFormat> {};

TEST_P(SourceFormats, ListsEntriesWithoutTheTopDirectoryAndReadsFiles) {
  TempDir tmp("src");
  std::string file = tmp.at(GetParam() == ArchiveFormat::zip ? "c.zip" : "c.tar.xz");
  write_archive(file, GetParam(), small_tree("cudnn-linux-x86_64-9.1.0.70_cuda12-archive"));
  auto src = open_cudnn_source(file);
  ASSERT_TRUE(src) << src.error().message;
  std::vector<std::string> paths;
  for (const auto& e : (*src)->entries()) paths.push_back(e.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"include/cudnn_version.h", "lib/libcudnn.so.9.1.0",
                                             "lib/libcudnn.so.9", "LICENSE"}));
  const SourceEntry* link = (*src)->find("lib/libcudnn.so.9");
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(link->type, SourceEntryType::symlink);
  EXPECT_EQ(link->link_target, "libcudnn.so.9.1.0");
  EXPECT_EQ((*src)->find("lib/libcudnn.so.9.1.0")->mode, 0755u);
  auto text = (*src)->read("include/cudnn_version.h");
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(*text, testing::version_header(9, 1, 0));
  EXPECT_EQ((*src)->file_name(), path_basename(file));
  auto missing = (*src)->read("include/nope.h");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("include/nope.h"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Archive, SourceFormats,
                         ::testing::Values(ArchiveFormat::tar_xz, ArchiveFormat::zip));

TEST_P(SourceFormats, TarProgramReaderMatchesLibarchive) {
  auto tars = testing_tar_programs(GetParam());
  if (tars.empty()) GTEST_SKIP() << "no tar program here reads this format";
  TempDir tmp("tarprog");
  std::string file = tmp.at(GetParam() == ArchiveFormat::zip ? "c.zip" : "c.tar.xz");
  auto tree = small_tree("cudnn-linux-x86_64-9.1.0.70_cuda12-archive");
  tree.push_back({"cudnn-linux-x86_64-9.1.0.70_cuda12-archive/lib/libcudnn_ops.so.9.1.0",
                  std::string(300000, '\x7f') + "tail", ArchiveEntry::file, "", 0755});
  tree.push_back({"cudnn-linux-x86_64-9.1.0.70_cuda12-archive/include/empty.h", ""});
  write_archive(file, GetParam(), tree);
  auto ref = open_libarchive_source(file, {}, {"libarchive.so.13"});
  ASSERT_TRUE(ref) << ref.error().message;
  for (const auto& tar : tars) {
    SCOPED_TRACE(tar.path);
    auto src = open_tar_program_source(file, {}, tar);
    ASSERT_TRUE(src) << src.error().message;
    ASSERT_EQ((*src)->entries().size(), (*ref)->entries().size());
    for (size_t i = 0; i < (*ref)->entries().size(); ++i) {
      const auto& a = (*ref)->entries()[i];
      const auto& b = (*src)->entries()[i];
      EXPECT_EQ(a.path, b.path);
      EXPECT_EQ(a.type, b.type) << a.path;
      EXPECT_EQ(a.size, b.size) << a.path;
      EXPECT_EQ(a.mode, b.mode) << a.path;
      EXPECT_EQ(a.link_target, b.link_target) << a.path;
    }
    // Several members in one pass, split by their listed sizes.
    std::map<std::string, std::string> got, want;
    auto all = [](const SourceEntry&) { return true; };
    auto r = (*src)->read_files(all, [&](const SourceEntry& e, std::string_view d) -> Result<void> {
      got[e.path] = std::string(d);
      return {};
    });
    ASSERT_TRUE(r) << r.error().message;
    r = (*ref)->read_files(all, [&](const SourceEntry& e, std::string_view d) -> Result<void> {
      want[e.path] = std::string(d);
      return {};
    });
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(got, want);
    EXPECT_EQ(got.size(), 5u);
  }
}

TEST(CudnnSource, WithoutLibarchiveATarProgramReadsTheArchive) {
  if (testing_tar_programs(ArchiveFormat::tar_xz).empty()) GTEST_SKIP() << "no tar program";
  TempDir tmp("nolibarchive");
  write_archive(tmp.at("c.tar.xz"), ArchiveFormat::tar_xz, small_tree("top"));
  ArchiveReaders readers{{"libdlenv-no-such-libarchive.so.13"}, {"bsdtar", "tar"}};
  auto src = open_archive_source(tmp.at("c.tar.xz"), {}, readers);
  ASSERT_TRUE(src) << src.error().message;
  auto text = (*src)->read("include/cudnn_version.h");
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(*text, testing::version_header(9, 1, 0));
  // Neither libarchive nor a tar program: the message says what to install.
  readers.tar_programs = {"dlenv-no-such-tar-program"};
  src = open_archive_source(tmp.at("c.tar.xz"), {}, readers);
  ASSERT_FALSE(src);
  EXPECT_NE(src.error().message.find("install libarchive13 (apt install libarchive13t64"),
            std::string::npos)
      << src.error().message;
  EXPECT_NE(src.error().message.find("libdlenv-no-such-libarchive.so.13"), std::string::npos);
}

TEST(CudnnSource, ExtractedDirectoryLooksLikeTheArchive) {
  TempDir tmp("srcdir");
  std::string top = tmp.at("cudnn-linux-x86_64-9.1.0.70_cuda12-archive");
  testing::write_file(top + "/include/cudnn_version.h", testing::version_header(9, 1, 0));
  testing::write_file(top + "/lib/libcudnn.so.9.1.0", "ELF?", 0755);
  std::filesystem::create_symlink("libcudnn.so.9.1.0", top + "/lib/libcudnn.so.9");
  // The directory itself, and the folder holding it (the download folder), both work.
  for (const std::string& dir : {top, tmp.path()}) {
    auto src = open_cudnn_source(dir);
    ASSERT_TRUE(src) << src.error().message;
    ASSERT_NE((*src)->find("lib/libcudnn.so.9"), nullptr) << dir;
    EXPECT_EQ((*src)->find("lib/libcudnn.so.9")->link_target, "libcudnn.so.9.1.0");
    auto text = (*src)->read("include/cudnn_version.h");
    ASSERT_TRUE(text) << text.error().message;
    EXPECT_EQ(*text, testing::version_header(9, 1, 0));
  }
}

struct UnsafeCase {
  const char* name;
  std::vector<ArchiveEntry> extra;
  const char* why;  // part of the expected message
};

class UnsafeEntries : public ::testing::TestWithParam<UnsafeCase> {};

TEST_P(UnsafeEntries, AreRefusedNamingTheEntry) {
  for (auto fmt : {ArchiveFormat::tar_xz, ArchiveFormat::zip}) {
    if (fmt == ArchiveFormat::zip && std::string(GetParam().name) == "device") continue;
    TempDir tmp("unsafe");
    auto entries = small_tree("top");
    for (auto e : GetParam().extra) entries.push_back(e);
    std::string file = tmp.at(fmt == ArchiveFormat::zip ? "a.zip" : "a.tar.xz");
    write_archive(file, fmt, entries);
    auto src = open_cudnn_source(file);
    ASSERT_FALSE(src) << GetParam().name;
    SCOPED_TRACE(src.error().message);
    const std::string& m = src.error().message;
    EXPECT_NE(m.find("unsafe entry"), std::string::npos) << m;
    EXPECT_NE(m.find(GetParam().why), std::string::npos) << m;
    EXPECT_NE(m.find("Nothing was extracted"), std::string::npos) << m;
    EXPECT_EQ(src.error().code, ErrorCode::invalid) << m;
    // The tar-program reader refuses the same entries from its listing.
    for (const auto& tar : testing_tar_programs(fmt)) {
      auto t = open_tar_program_source(file, {}, tar);
      ASSERT_FALSE(t) << tar.path << " " << GetParam().name;
      EXPECT_NE(t.error().message.find(GetParam().why), std::string::npos)
          << tar.path << ": " << t.error().message;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Archive, UnsafeEntries,
    ::testing::Values(
        UnsafeCase{"absolute", {{"/etc/cron.d/x", "boom"}}, "absolute path"},
        UnsafeCase{"dotdot", {{"top/../../x", "boom"}}, "\"..\""},
        UnsafeCase{"drive", {{"C:/Windows/x.dll", "boom"}}, "drive letter"},
        UnsafeCase{"abs_link",
                   {{"top/lib/evil", "", ArchiveEntry::symlink, "/etc/passwd"}},
                   "absolute path /etc/passwd"},
        UnsafeCase{"escaping_link",
                   {{"top/lib/evil", "", ArchiveEntry::symlink, "../../../etc"}},
                   "leaves the distribution"},
        UnsafeCase{"climbing_link",
                   {{"top/lib/d", "", ArchiveEntry::symlink, "libcudnn.so.9"},
                    {"top/lib/evil", "", ArchiveEntry::symlink, "d/../.."}},
                   "climbs"},
        UnsafeCase{"file_below_link",
                   {{"top/inc", "", ArchiveEntry::symlink, "include"}, {"top/inc/x.h", "x"}},
                   "lies below inc, which is a symlink"},
        UnsafeCase{"device", {{"top/lib/null", "", ArchiveEntry::chardev}}, "device file"},
        UnsafeCase{"duplicate", {{"top/LICENSE", "second copy"}}, "appears twice"}),
    [](const auto& p) { return std::string(p.param.name); });

TEST(CudnnSource, AbsurdSizesAreRefused) {
  TempDir tmp("big");
  auto entries = small_tree("top");
  entries.push_back({"top/lib/libcudnn_ops.so.9.1.0", std::string(4096, 'x')});
  write_archive(tmp.at("a.tar.xz"), ArchiveFormat::tar_xz, entries);
  SourceLimits limits;
  limits.max_entry_bytes = 1024;
  auto src = open_cudnn_source(tmp.at("a.tar.xz"), limits);
  ASSERT_FALSE(src);
  EXPECT_NE(src.error().message.find("larger than the 1.0 KiB limit"), std::string::npos)
      << src.error().message;
  limits.max_entry_bytes = 1 << 20;
  limits.max_total_bytes = 2048;
  src = open_cudnn_source(tmp.at("a.tar.xz"), limits);
  ASSERT_FALSE(src);
  EXPECT_NE(src.error().message.find("add up to more than"), std::string::npos);
}

// Every reader hands a file over in bounded pieces that add up to its bytes; a 0-byte
// file gets one empty piece.
TEST_P(SourceFormats, StreamsFilesInBoundedPieces) {
  TempDir tmp("stream");
  std::string file = tmp.at(GetParam() == ArchiveFormat::zip ? "c.zip" : "c.tar.xz");
  std::string big(3u << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 131) >> 7);
  auto tree = small_tree("top");
  tree.push_back({"top/lib/libcudnn_big.so.9.1.0", big});
  tree.push_back({"top/include/empty.h", ""});
  write_archive(file, GetParam(), tree);
  std::vector<std::unique_ptr<CudnnSource>> sources;
  auto ref = open_libarchive_source(file, {}, {"libarchive.so.13"});
  ASSERT_TRUE(ref) << ref.error().message;
  sources.push_back(std::move(*ref));
  for (const auto& tar : testing_tar_programs(GetParam())) {
    auto src = open_tar_program_source(file, {}, tar);
    ASSERT_TRUE(src) << src.error().message;
    sources.push_back(std::move(*src));
  }
  for (const auto& src : sources) {
    SCOPED_TRACE(src->description());
    std::map<std::string, std::string> got;
    std::map<std::string, int> calls;
    size_t largest = 0;
    auto r = src->stream_files(
        [](const SourceEntry&) { return true; },
        [&](const SourceEntry& e, uint64_t offset, std::string_view piece) -> Result<void> {
          EXPECT_EQ(offset, got[e.path].size()) << e.path;
          got[e.path].append(piece);
          ++calls[e.path];
          largest = std::max(largest, piece.size());
          return {};
        });
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(got["lib/libcudnn_big.so.9.1.0"], big);
    EXPECT_EQ(got["include/cudnn_version.h"], testing::version_header(9, 1, 0));
    EXPECT_EQ(calls["include/empty.h"], 1);
    EXPECT_GT(calls["lib/libcudnn_big.so.9.1.0"], 2);
    EXPECT_LE(largest, size_t{1} << 20);
  }
}

// What a progress line is fed: totals before the first byte, every byte and file counted
// as it is read, and a last report marked done, for a reading pass and for the hash.
TEST(CudnnSource, ReportingProgressCountsEveryByteAndEndsDone) {
  TempDir tmp("progress");
  const std::string file = tmp.at("c.tar.xz");
  std::string big(3u << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 131) >> 7);
  auto tree = small_tree("top");
  tree.push_back({"top/lib/libcudnn_big.so.9.1.0", big});
  write_archive(file, ArchiveFormat::tar_xz, tree);
  auto opened = open_cudnn_source(file);
  ASSERT_TRUE(opened) << opened.error().message;
  uint64_t want_bytes = 0;
  size_t want_files = 0;
  for (const auto& e : (*opened)->entries()) {
    if (e.type != SourceEntryType::file) continue;
    want_bytes += e.size;
    ++want_files;
  }
  std::vector<SourceProgress> seen;
  auto src =
      reporting_progress(std::move(*opened), [&](const SourceProgress& p) { seen.push_back(p); });
  for (int pass = 0; pass < 2; ++pass) {
    seen.clear();
    uint64_t visited = 0;
    auto r = src->stream_files([](const SourceEntry&) { return true; },
                               [&](const SourceEntry&, uint64_t, std::string_view piece) {
                                 visited += piece.size();
                                 return Result<void>{};
                               });
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_GE(seen.size(), 3u);
    EXPECT_EQ(seen.front().bytes, 0u);
    EXPECT_EQ(seen.front().total_bytes, want_bytes);
    EXPECT_EQ(seen.front().total_files, want_files);
    for (size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i].bytes, seen[i - 1].bytes);
    for (size_t i = 0; i + 1 < seen.size(); ++i) EXPECT_FALSE(seen[i].done) << i;
    EXPECT_TRUE(seen.back().done);
    EXPECT_EQ(seen.back().bytes, want_bytes);
    EXPECT_EQ(seen.back().files, want_files);
    EXPECT_EQ(visited, want_bytes);
  }
  // A pass that fails still ends with a done report (the line is cleared before the error).
  seen.clear();
  auto failed = src->stream_files(
      [](const SourceEntry&) { return true; },
      [&](const SourceEntry&, uint64_t, std::string_view) { return Result<void>(fail("stop")); });
  EXPECT_FALSE(failed);
  ASSERT_FALSE(seen.empty());
  EXPECT_TRUE(seen.back().done);

  seen.clear();
  auto sha = source_sha256(file, [&](const SourceProgress& p) { seen.push_back(p); });
  ASSERT_TRUE(sha) << sha.error().message;
  ASSERT_GE(seen.size(), 2u);
  EXPECT_EQ(seen.front().bytes, 0u);
  EXPECT_EQ(seen.front().total_bytes, std::filesystem::file_size(file));
  EXPECT_TRUE(seen.back().done);
  EXPECT_EQ(seen.back().bytes, std::filesystem::file_size(file));
}

// Peak resident memory of this process so far, in bytes.
uint64_t peak_rss() {
  struct rusage u {};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<uint64_t>(u.ru_maxrss) * 1024;
}

// A 4 GiB member (sparse: the archive is small) and an archive of 10 000 members are
// refused by the default limits, by every reader, within seconds and without memory.
TEST(CudnnSource, SparseAndManyMemberBombsAreRefusedFastInBoundedMemory) {
  TempDir tmp("bombs");
  const std::string top = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive";
  {
    std::filesystem::create_directories(tmp.at(top + "/lib"));
    const std::string huge = tmp.at(top + "/lib/libcudnn_ops.so.9.1.0");
    FILE* f = std::fopen(huge.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(ftruncate(fileno(f), 4ll << 30), 0);
    std::fclose(f);
  }
  ProcessOptions opt;
  opt.timeout = std::chrono::seconds(60);
  auto made =
      run_process({"tar", "-C", tmp.path(), "--sparse", "-cf", tmp.at("sparse.tar"), top}, opt);
  ASSERT_TRUE(made && made->exit_code == 0) << (made ? made->err : made.error().message);
  std::filesystem::remove(tmp.at(top + "/lib/libcudnn_ops.so.9.1.0"));
  std::vector<ArchiveEntry> many = {{top, "", ArchiveEntry::dir, "", 0755}};
  for (int i = 0; i < 10000; ++i) many.push_back({fmt::format("{}/include/h{}.h", top, i), "x"});
  write_archive(tmp.at("many.tar"), ArchiveFormat::tar, many);

  struct Case {
    std::string file, expect;
  };
  for (const auto& c : {Case{tmp.at("sparse.tar"), "larger than the 2.0 GiB limit for one file"},
                        Case{tmp.at("many.tar"), "more than 2000 entries"}}) {
    std::vector<std::function<Result<std::unique_ptr<CudnnSource>>()>> readers = {
        [&] { return open_libarchive_source(c.file, {}, {"libarchive.so.13"}); }};
    for (const auto& tar : testing_tar_programs(ArchiveFormat::tar)) {
      readers.push_back([&, tar] { return open_tar_program_source(c.file, {}, tar); });
    }
    for (const auto& open : readers) {
      const uint64_t rss_before = peak_rss();
      const auto t0 = std::chrono::steady_clock::now();
      auto src = open();
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ASSERT_FALSE(src) << c.file;
      EXPECT_NE(src.error().message.find(c.expect), std::string::npos) << src.error().message;
      EXPECT_EQ(src.error().code, ErrorCode::limit) << src.error().message;
      EXPECT_LT(s, 5.0) << c.file;
      EXPECT_LT(peak_rss() - rss_before, 200ull << 20) << c.file;
    }
  }
}

// A compressed bomb is refused at its header: the member's data is never decompressed. The
// archive here is cut short right after that header, so a reader that went on to skip the
// data would fail on the truncation instead of naming the limit.
TEST(CudnnSource, OversizedMemberIsRefusedAtItsHeader) {
  TempDir tmp("bombheader");
  const std::string top = "cudnn-linux-x86_64-9.1.0.70_cuda12-archive";
  std::filesystem::create_directories(tmp.at(top + "/lib"));
  {
    FILE* f = std::fopen(tmp.at(top + "/lib/libcudnn_ops.so.9.1.0").c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(ftruncate(fileno(f), 64ll << 20), 0);  // 64 MiB of zeros (not --sparse)
    std::fclose(f);
  }
  ProcessOptions opt;
  opt.timeout = std::chrono::seconds(60);
  auto made = run_process({"tar", "-C", tmp.path(), "-czf", tmp.at("bomb.tar.gz"), top}, opt);
  ASSERT_TRUE(made && made->exit_code == 0) << (made ? made->err : made.error().message);
  std::filesystem::resize_file(tmp.at("bomb.tar.gz"), 4096);  // the headers, little data
  SourceLimits limits;
  limits.max_entry_bytes = 1u << 20;
  std::vector<std::function<Result<std::unique_ptr<CudnnSource>>()>> readers = {
      [&] { return open_libarchive_source(tmp.at("bomb.tar.gz"), limits, {"libarchive.so.13"}); }};
  for (const auto& tar : testing_tar_programs(ArchiveFormat::tar_xz)) {
    readers.push_back(
        [&, tar] { return open_tar_program_source(tmp.at("bomb.tar.gz"), limits, tar); });
  }
  for (const auto& open : readers) {
    auto src = open();
    ASSERT_FALSE(src);
    EXPECT_NE(src.error().message.find("lib/libcudnn_ops.so.9.1.0"), std::string::npos)
        << src.error().message;
    EXPECT_NE(src.error().message.find("larger than the 1.0 MiB limit for one file"),
              std::string::npos)
        << src.error().message;
  }
}

TEST(CudnnSource, FifoOrDeviceAsTheSourceIsNamedNotOpened) {
  TempDir tmp("fifosource");
  ASSERT_EQ(::mkfifo(tmp.at("cudnn.tar.xz").c_str(), 0644), 0);
  const auto t0 = std::chrono::steady_clock::now();
  auto src = open_cudnn_source(tmp.at("cudnn.tar.xz"));  // a blocking open would hang here
  ASSERT_FALSE(src);
  EXPECT_NE(src.error().message.find("is a FIFO or a socket, not an archive file"),
            std::string::npos)
      << src.error().message;
  src = open_cudnn_source("/dev/zero");
  ASSERT_FALSE(src);
  EXPECT_NE(src.error().message.find("/dev/zero is a character device"), std::string::npos)
      << src.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_FALSE(source_sha256(tmp.at("cudnn.tar.xz")));
}

TEST(CudnnSource, NotAnArchiveAndMissingFileSayWhat) {
  TempDir tmp("notarch");
  testing::write_file(tmp.at("x.tar.xz"), "this is not an archive");
  auto src = open_cudnn_source(tmp.at("x.tar.xz"));
  ASSERT_FALSE(src);
  EXPECT_NE(src.error().message.find(tmp.at("x.tar.xz")), std::string::npos);
  src = open_cudnn_source(tmp.at("nope.tar.xz"));
  ASSERT_FALSE(src);
  EXPECT_NE(src.error().message.find("no such file"), std::string::npos);
}

TEST(CudnnSource, UnsafeDirectoryIsRefusedToo) {
  TempDir tmp("unsafedir");
  testing::write_file(tmp.at("d/include/cudnn_version.h"), testing::version_header(9, 1, 0));
  std::filesystem::create_symlink("/etc", tmp.at("d/include/etc"));
  auto src = open_cudnn_source(tmp.at("d"));
  ASSERT_FALSE(src);
  EXPECT_NE(src.error().message.find("absolute path /etc"), std::string::npos);
}

// A file of a directory source swapped for a link (or a FIFO), or a directory on its
// way swapped for a link, after the listing: the read refuses it, never follows it
// and never blocks.
TEST(CudnnSource, DirectorySourceSwappedAfterListingIsRefused) {
  TempDir tmp("swap");
  TempDir secret("secret");
  testing::write_file(secret.at("shadow"), "root:secret\n", 0600);
  const std::string top = tmp.at("cudnn");
  auto fill = [&] {
    std::filesystem::remove_all(top);
    testing::write_file(top + "/include/cudnn_version.h", testing::version_header(9, 1, 0));
    testing::write_file(top + "/lib/libcudnn.so.9.1.0", "ELF?", 0755);
  };
  struct Swap {
    const char* name;
    std::function<void()> swap;
    const char* why;
  };
  const std::vector<Swap> swaps = {
      {"file -> link",
       [&] {
         std::filesystem::remove(top + "/include/cudnn_version.h");
         std::filesystem::create_symlink(secret.at("shadow"), top + "/include/cudnn_version.h");
       },
       "is a symbolic link now"},
      {"dir -> link",
       [&] {
         std::filesystem::remove_all(top + "/include");
         std::filesystem::create_directories(secret.at("inc"));
         testing::write_file(secret.at("inc/cudnn_version.h"), testing::version_header(9, 1, 0));
         std::filesystem::create_directory_symlink(secret.at("inc"), top + "/include");
       },
       "include is a symbolic link now"},
      {"file -> FIFO",
       [&] {
         std::filesystem::remove(top + "/include/cudnn_version.h");
         ASSERT_EQ(::mkfifo((top + "/include/cudnn_version.h").c_str(), 0644), 0);
       },
       "it is a FIFO"},
  };
  for (const auto& sw : swaps) {
    fill();
    auto src = open_cudnn_source(top);
    ASSERT_TRUE(src) << src.error().message;
    sw.swap();
    const auto start = std::chrono::steady_clock::now();
    auto text = (*src)->read("include/cudnn_version.h");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5)) << sw.name;
    ASSERT_FALSE(text) << sw.name << ": read " << *text;
    EXPECT_NE(text.error().message.find(sw.why), std::string::npos)
        << sw.name << ": " << text.error().message;
  }
}

// A FIFO (or a socket) in a directory source is refused when listed.
TEST(CudnnSource, FifoInADirectorySourceIsRefused) {
  TempDir tmp("fifo");
  testing::write_file(tmp.at("d/include/cudnn_version.h"), testing::version_header(9, 1, 0));
  std::filesystem::create_directories(tmp.at("d/lib"));
  ASSERT_EQ(::mkfifo(tmp.at("d/lib/libcudnn.so.9").c_str(), 0644), 0);
  auto src = open_cudnn_source(tmp.at("d"));
  ASSERT_FALSE(src);
  EXPECT_NE(src.error().message.find("lib/libcudnn.so.9"), std::string::npos)
      << src.error().message;
  EXPECT_NE(src.error().message.find("has no place in a cuDNN distribution"), std::string::npos)
      << src.error().message;
}

}  // namespace
}  // namespace dlenv
