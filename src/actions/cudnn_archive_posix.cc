// The archive reader behind open_archive_source: libarchive, reading the
// archive in place (tar.xz, tgz, tar, zip). Entries are listed (and checked)
// first; file bytes are read in a later pass, only for the entries asked for.
#include <archive.h>
#include <archive_entry.h>
#include <fmt/format.h>

#include <map>
#include <memory>

#include "actions/cudnn_source.h"
#include "util/strings.h"

namespace dlenv {
namespace {

struct ArchiveFree {
  void operator()(archive* a) const { archive_read_free(a); }
};
using ArchivePtr = std::unique_ptr<archive, ArchiveFree>;

Result<ArchivePtr> open_reader(const std::string& file) {
  ArchivePtr a(archive_read_new());
  if (!a) return fail(file + ": libarchive could not allocate a reader");
  archive_read_support_filter_all(a.get());
  archive_read_support_format_tar(a.get());
  archive_read_support_format_gnutar(a.get());
  archive_read_support_format_zip(a.get());
  if (archive_read_open_filename(a.get(), file.c_str(), 1 << 16) != ARCHIVE_OK) {
    const char* why = archive_error_string(a.get());
    return fail(
        fmt::format("{}: cannot open as an archive: {}", file, why ? why : "unknown error"));
  }
  return a;
}

std::string entry_name(archive_entry* e) {
  const char* p = archive_entry_pathname_utf8(e);
  if (!p) p = archive_entry_pathname(e);
  return p ? p : "";
}

SourceEntryType entry_type(archive_entry* e) {
  if (archive_entry_hardlink(e)) return SourceEntryType::hardlink;
  switch (archive_entry_filetype(e)) {
    case AE_IFREG: return SourceEntryType::file;
    case AE_IFDIR: return SourceEntryType::directory;
    case AE_IFLNK: return SourceEntryType::symlink;
    case AE_IFCHR:
    case AE_IFBLK: return SourceEntryType::device;
    case AE_IFIFO: return SourceEntryType::fifo;
    case AE_IFSOCK: return SourceEntryType::socket;
    default: return SourceEntryType::other;
  }
}

class ArchiveSource : public CudnnSource {
 public:
  ArchiveSource(std::string file, std::vector<SourceEntry> entries, SourceLimits limits)
      : file_(std::move(file)), entries_(std::move(entries)), limits_(limits) {
    for (size_t i = 0; i < entries_.size(); ++i) by_raw_[entries_[i].raw_path] = i;
  }
  std::string description() const override { return "archive " + file_; }
  std::string file_name() const override { return path_basename(file_); }
  const std::vector<SourceEntry>& entries() const override { return entries_; }

  Result<void> read_files(const std::function<bool(const SourceEntry&)>& want,
                          const std::function<Result<void>(const SourceEntry&, std::string_view)>&
                              visit) const override {
    auto a = open_reader(file_);
    if (!a) return std::unexpected(a.error());
    archive_entry* ae = nullptr;
    std::string data;
    for (;;) {
      int r = archive_read_next_header(a->get(), &ae);
      if (r == ARCHIVE_EOF) break;
      if (r < ARCHIVE_WARN) return error_here(a->get(), "reading the next entry");
      auto it = by_raw_.find(entry_name(ae));
      if (it == by_raw_.end()) continue;  // the top directory or a skipped entry
      const SourceEntry& e = entries_[it->second];
      if (e.type != SourceEntryType::file || !want(e)) continue;
      // The bytes must not exceed what the header promised (nor the limit).
      const uint64_t cap = archive_entry_size_is_set(ae) ? e.size : limits_.max_entry_bytes;
      data.clear();
      char buf[1 << 16];
      for (;;) {
        la_ssize_t n = archive_read_data(a->get(), buf, sizeof buf);
        if (n == 0) break;
        if (n < 0) return error_here(a->get(), "reading " + e.raw_path);
        if (data.size() + static_cast<uint64_t>(n) > cap) {
          return fail(
              fmt::format("{}: {} holds more data than its header says ({} bytes): the "
                          "archive is corrupt; download it again",
                          file_, e.raw_path, e.size));
        }
        data.append(buf, static_cast<size_t>(n));
      }
      auto v = visit(e, data);
      if (!v) return v;
    }
    return {};
  }

 private:
  std::unexpected<Error> error_here(archive* a, const std::string& what) const {
    const char* why = archive_error_string(a);
    return fail(fmt::format("{}: {}: {} (the archive is damaged or truncated; download it again)",
                            file_, what, why ? why : "unknown error"));
  }

  std::string file_;
  std::vector<SourceEntry> entries_;
  SourceLimits limits_;
  std::map<std::string, size_t> by_raw_;
};

}  // namespace

Result<std::unique_ptr<CudnnSource>> open_archive_source(const std::string& file,
                                                         const SourceLimits& limits) {
  auto a = open_reader(file);
  if (!a) return std::unexpected(a.error());
  std::vector<SourceEntry> raw;
  archive_entry* ae = nullptr;
  for (;;) {
    int r = archive_read_next_header(a->get(), &ae);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) {
      const char* why = archive_error_string(a->get());
      return fail(fmt::format("{}: not a readable .tar.xz/.zip archive: {}", file,
                              why ? why : "unknown error"));
    }
    SourceEntry e;
    e.raw_path = entry_name(ae);
    e.path = e.raw_path;
    e.type = entry_type(ae);
    e.mode = static_cast<uint32_t>(archive_entry_perm(ae)) & 07777;
    if (e.type == SourceEntryType::file) {
      e.size = archive_entry_size_is_set(ae) ? static_cast<uint64_t>(archive_entry_size(ae)) : 0;
    }
    if (e.type == SourceEntryType::symlink) {
      const char* t = archive_entry_symlink_utf8(ae);
      if (!t) t = archive_entry_symlink(ae);
      e.link_target = t ? t : "";
    } else if (e.type == SourceEntryType::hardlink) {
      const char* t = archive_entry_hardlink_utf8(ae);
      if (!t) t = archive_entry_hardlink(ae);
      e.link_target = t ? t : "";
    }
    raw.push_back(std::move(e));
    if (raw.size() > limits.max_entries) break;  // check_source_entries refuses it
    archive_read_data_skip(a->get());
  }
  if (raw.empty()) return fail(file + ": the archive is empty");
  auto checked = check_source_entries(std::move(raw), "archive " + file, limits);
  if (!checked) return std::unexpected(checked.error());
  return std::unique_ptr<CudnnSource>(new ArchiveSource(file, std::move(*checked), limits));
}

}  // namespace dlenv
