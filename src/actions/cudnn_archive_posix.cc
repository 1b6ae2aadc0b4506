// The Linux archive readers behind open_archive_source: libarchive, loaded at
// run time through a symbol table (dlenv does not link it: doctor must start on
// a machine without libarchive13), reading the archive in place (tar.xz, tgz,
// tar, zip); else a tar program (cudnn_archive_tar.cc). Entries are listed (and
// checked) first; file bytes are read in a later pass, only for the entries
// asked for. <archive.h> is used for the declarations only.
#include <archive.h>
#include <archive_entry.h>
#include <fmt/format.h>

#include <map>
#include <memory>

#include "actions/cudnn_source.h"
#include "platform/dynamic_library.h"
#include "util/strings.h"

namespace dlenv {
namespace {

// The libarchive functions used here, bound from the loaded library.
struct LibArchive {
  DynamicLibrary lib;
  decltype(&::archive_read_new) read_new = nullptr;
  decltype(&::archive_read_free) read_free = nullptr;
  decltype(&::archive_read_support_filter_all) support_filter_all = nullptr;
  decltype(&::archive_read_support_format_tar) support_format_tar = nullptr;
  decltype(&::archive_read_support_format_gnutar) support_format_gnutar = nullptr;
  decltype(&::archive_read_support_format_zip) support_format_zip = nullptr;
  decltype(&::archive_read_open_filename) open_filename = nullptr;
  decltype(&::archive_error_string) error_string = nullptr;
  decltype(&::archive_read_next_header) next_header = nullptr;
  decltype(&::archive_read_data) read_data = nullptr;
  decltype(&::archive_read_data_skip) data_skip = nullptr;
  decltype(&::archive_entry_pathname) pathname = nullptr;
  decltype(&::archive_entry_pathname_utf8) pathname_utf8 = nullptr;  // optional
  decltype(&::archive_entry_hardlink) hardlink = nullptr;
  decltype(&::archive_entry_hardlink_utf8) hardlink_utf8 = nullptr;  // optional
  decltype(&::archive_entry_symlink) symlink = nullptr;
  decltype(&::archive_entry_symlink_utf8) symlink_utf8 = nullptr;  // optional
  decltype(&::archive_entry_filetype) filetype = nullptr;
  decltype(&::archive_entry_perm) perm = nullptr;
  decltype(&::archive_entry_size) size = nullptr;
  decltype(&::archive_entry_size_is_set) size_is_set = nullptr;
};

Result<std::shared_ptr<const LibArchive>> load_libarchive(const std::vector<std::string>& names) {
  auto api = std::make_shared<LibArchive>();
  void* p[21] = {};
  const SymbolSpec specs[] = {
      {"archive_read_new", &p[0], true, 0},
      {"archive_read_free", &p[1], true, 0},
      {"archive_read_support_filter_all", &p[2], true, 0},
      {"archive_read_support_format_tar", &p[3], true, 0},
      {"archive_read_support_format_gnutar", &p[4], true, 0},
      {"archive_read_support_format_zip", &p[5], true, 0},
      {"archive_read_open_filename", &p[6], true, 0},
      {"archive_error_string", &p[7], true, 0},
      {"archive_read_next_header", &p[8], true, 0},
      {"archive_read_data", &p[9], true, 0},
      {"archive_read_data_skip", &p[10], true, 0},
      {"archive_entry_pathname", &p[11], true, 0},
      {"archive_entry_pathname_utf8", &p[12], false, 0},
      {"archive_entry_hardlink", &p[13], true, 0},
      {"archive_entry_hardlink_utf8", &p[14], false, 0},
      {"archive_entry_symlink", &p[15], true, 0},
      {"archive_entry_symlink_utf8", &p[16], false, 0},
      {"archive_entry_filetype", &p[17], true, 0},
      {"archive_entry_perm", &p[18], true, 0},
      {"archive_entry_size", &p[19], true, 0},
      {"archive_entry_size_is_set", &p[20], true, 0},
  };
  auto lib = open_first_with_symbols(names, specs);
  if (!lib) return fail("libarchive is not available (" + lib.error().message + ")");
  auto as = [&](int i, auto& fn) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p[i]);
  };
  as(0, api->read_new);
  as(1, api->read_free);
  as(2, api->support_filter_all);
  as(3, api->support_format_tar);
  as(4, api->support_format_gnutar);
  as(5, api->support_format_zip);
  as(6, api->open_filename);
  as(7, api->error_string);
  as(8, api->next_header);
  as(9, api->read_data);
  as(10, api->data_skip);
  as(11, api->pathname);
  as(12, api->pathname_utf8);
  as(13, api->hardlink);
  as(14, api->hardlink_utf8);
  as(15, api->symlink);
  as(16, api->symlink_utf8);
  as(17, api->filetype);
  as(18, api->perm);
  as(19, api->size);
  as(20, api->size_is_set);
  api->lib = std::move(lib->lib);
  return std::shared_ptr<const LibArchive>(std::move(api));
}

// Frees the reader through the loaded library (kept alive by the shared_ptr).
struct ArchiveFree {
  std::shared_ptr<const LibArchive> la;
  void operator()(archive* a) const { la->read_free(a); }
};
using ArchivePtr = std::unique_ptr<archive, ArchiveFree>;

Result<ArchivePtr> open_reader(const std::shared_ptr<const LibArchive>& la,
                               const std::string& file) {
  ArchivePtr a(la->read_new(), ArchiveFree{la});
  if (!a) return fail(file + ": libarchive could not allocate a reader");
  la->support_filter_all(a.get());
  la->support_format_tar(a.get());
  la->support_format_gnutar(a.get());
  la->support_format_zip(a.get());
  if (la->open_filename(a.get(), file.c_str(), 1 << 16) != ARCHIVE_OK) {
    const char* why = la->error_string(a.get());
    return fail(
        fmt::format("{}: cannot open as an archive: {}", file, why ? why : "unknown error"));
  }
  return a;
}

std::string entry_name(const LibArchive& la, archive_entry* e) {
  const char* p = la.pathname_utf8 ? la.pathname_utf8(e) : nullptr;
  if (!p) p = la.pathname(e);
  return p ? p : "";
}

SourceEntryType entry_type(const LibArchive& la, archive_entry* e) {
  if (la.hardlink(e)) return SourceEntryType::hardlink;
  switch (la.filetype(e)) {
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
  ArchiveSource(std::shared_ptr<const LibArchive> la, std::string file,
                std::vector<SourceEntry> entries)
      : la_(std::move(la)), file_(std::move(file)), entries_(std::move(entries)) {
    for (size_t i = 0; i < entries_.size(); ++i) by_raw_[entries_[i].raw_path] = i;
  }
  std::string description() const override { return "archive " + file_; }
  std::string file_name() const override { return path_basename(file_); }
  const std::vector<SourceEntry>& entries() const override { return entries_; }

  Result<void> stream_files(const std::function<bool(const SourceEntry&)>& want,
                            const FilePieceVisitor& visit) const override {
    auto a = open_reader(la_, file_);
    if (!a) return std::unexpected(a.error());
    archive_entry* ae = nullptr;
    std::string buf(1u << 20, '\0');
    for (;;) {
      int r = la_->next_header(a->get(), &ae);
      if (r == ARCHIVE_EOF) break;
      if (r < ARCHIVE_WARN) return error_here(a->get(), "reading the next entry");
      auto it = by_raw_.find(entry_name(*la_, ae));
      if (it == by_raw_.end()) continue;  // the top directory or a skipped entry
      const SourceEntry& e = entries_[it->second];
      if (e.type != SourceEntryType::file || !want(e)) continue;
      // Exactly the bytes the header promised (which the limits have checked).
      uint64_t at = 0;
      for (;;) {
        la_ssize_t n = la_->read_data(a->get(), buf.data(), buf.size());
        if (n == 0) break;
        if (n < 0) return error_here(a->get(), "reading " + e.raw_path);
        if (at + static_cast<uint64_t>(n) > e.size) {
          return fail(
              fmt::format("{}: {} holds more data than its header says ({} bytes): the "
                          "archive is corrupt; download it again",
                          file_, e.raw_path, e.size));
        }
        auto v = visit(e, at, std::string_view(buf.data(), static_cast<size_t>(n)));
        if (!v) return v;
        at += static_cast<uint64_t>(n);
      }
      if (at != e.size) {
        return fail(fmt::format(
            "{}: {} holds {} bytes, its header says {}: the archive is damaged; download it again",
            file_, e.raw_path, at, e.size));
      }
      if (e.size == 0) {
        if (auto v = visit(e, 0, {}); !v) return v;
      }
    }
    return {};
  }

 private:
  std::unexpected<Error> error_here(archive* a, const std::string& what) const {
    const char* why = la_->error_string(a);
    return fail(fmt::format("{}: {}: {} (the archive is damaged or truncated; download it again)",
                            file_, what, why ? why : "unknown error"));
  }

  std::shared_ptr<const LibArchive> la_;
  std::string file_;
  std::vector<SourceEntry> entries_;
  std::map<std::string, size_t> by_raw_;
};

Result<std::unique_ptr<CudnnSource>> open_loaded(std::shared_ptr<const LibArchive> la_ptr,
                                                 const std::string& file,
                                                 const SourceLimits& limits) {
  auto* la = &la_ptr;
  auto a = open_reader(*la, file);
  if (!a) return std::unexpected(a.error());
  std::vector<SourceEntry> raw;
  uint64_t total = 0;
  archive_entry* ae = nullptr;
  for (;;) {
    int r = (*la)->next_header(a->get(), &ae);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) {
      const char* why = (*la)->error_string(a->get());
      return fail(fmt::format("{}: not a readable .tar.xz/.zip archive: {}", file,
                              why ? why : "unknown error"));
    }
    SourceEntry e;
    const LibArchive& l = **la;
    e.raw_path = entry_name(l, ae);
    e.path = e.raw_path;
    e.type = entry_type(l, ae);
    e.mode = static_cast<uint32_t>(l.perm(ae)) & 07777;
    if (e.type == SourceEntryType::file) {
      e.size = l.size_is_set(ae) ? static_cast<uint64_t>(l.size(ae)) : 0;
    }
    if (e.type == SourceEntryType::symlink) {
      const char* t = l.symlink_utf8 ? l.symlink_utf8(ae) : nullptr;
      if (!t) t = l.symlink(ae);
      e.link_target = t ? t : "";
    } else if (e.type == SourceEntryType::hardlink) {
      const char* t = l.hardlink_utf8 ? l.hardlink_utf8(ae) : nullptr;
      if (!t) t = l.hardlink(ae);
      e.link_target = t ? t : "";
    }
    // Over a limit: stop at this header, before its data is decompressed (a bomb's cost is
    // in skipping it); check_source_entries refuses the list, naming the entry.
    total += e.size;
    const bool over = e.size > limits.max_entry_bytes || total > limits.max_total_bytes;
    raw.push_back(std::move(e));
    if (over || raw.size() > limits.max_entries) break;
    l.data_skip(a->get());
  }
  if (raw.empty()) return fail(file + ": the archive is empty");
  auto checked = check_source_entries(std::move(raw), "archive " + file, limits);
  if (!checked) return std::unexpected(checked.error());
  return std::unique_ptr<CudnnSource>(
      new ArchiveSource(std::move(la_ptr), file, std::move(*checked)));
}

}  // namespace

Result<std::unique_ptr<CudnnSource>> open_libarchive_source(const std::string& file,
                                                            const SourceLimits& limits,
                                                            const std::vector<std::string>& names) {
  auto la = load_libarchive(names);
  if (!la) return std::unexpected(la.error());
  return open_loaded(std::move(*la), file, limits);
}

ArchiveReaders default_archive_readers() {
  return {{"libarchive.so.13", "libarchive.so"}, {"bsdtar", "tar"}};
}

Result<std::unique_ptr<CudnnSource>> open_archive_source(const std::string& file,
                                                         const SourceLimits& limits,
                                                         const ArchiveReaders& readers) {
  std::string why;
  if (!readers.libarchive_names.empty()) {
    auto la = load_libarchive(readers.libarchive_names);
    // A loaded libarchive's answer is final (a refusal of unsafe entries included).
    if (la) return open_loaded(std::move(*la), file, limits);
    why = la.error().message;
  }
  const bool zip = ends_with(to_lower(file), ".zip");
  for (const auto& prog : readers.tar_programs) {
    auto tar = probe_tar_program(prog);
    if (!tar) continue;
    if (zip && tar->flavor == TarFlavor::gnu) {
      why += (why.empty() ? "" : "; ") + prog + " is GNU tar, which cannot read .zip";
      continue;
    }
    return open_tar_program_source(file, limits, *tar);
  }
  return fail(fmt::format(
      "{}: cannot read the archive: {}{}no tar program that reads it ran (tried: {}); install "
      "libarchive13 (apt install libarchive13t64 / libarchive13) or extract the archive and "
      "pass the directory",
      file, why, why.empty() ? "" : "; ", join(readers.tar_programs, ", ")));
}

}  // namespace dlenv
