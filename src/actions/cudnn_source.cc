#include "actions/cudnn_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "platform/filesystem.h"
#include "platform/read_beneath.h"
#include "util/sha256.h"
#include "util/strings.h"

namespace dlenv {

const char* source_entry_type_name(SourceEntryType type) {
  switch (type) {
    case SourceEntryType::file: return "file";
    case SourceEntryType::directory: return "directory";
    case SourceEntryType::symlink: return "symlink";
    case SourceEntryType::hardlink: return "hardlink";
    case SourceEntryType::device: return "device file";
    case SourceEntryType::fifo: return "FIFO";
    case SourceEntryType::socket: return "socket";
    case SourceEntryType::other: return "special file";
  }
  return "special file";
}

const SourceEntry* CudnnSource::find(std::string_view path) const {
  for (const auto& e : entries()) {
    if (e.path == path) return &e;
  }
  return nullptr;
}

Result<std::string> CudnnSource::read(std::string_view path) const {
  const SourceEntry* e = find(path);
  if (!e) return fail(fmt::format("{}: {} is not in it", description(), path));
  if (e->type != SourceEntryType::file) {
    return fail(fmt::format("{}: {} is a {}, not a file", description(), path,
                            source_entry_type_name(e->type)));
  }
  std::string out;
  bool found = false;
  auto r = read_files([&](const SourceEntry& x) { return x.path == path; },
                      [&](const SourceEntry&, std::string_view data) -> Result<void> {
                        out.assign(data);
                        found = true;
                        return {};
                      });
  if (!r) return std::unexpected(r.error());
  if (!found) return fail(fmt::format("{}: {} could not be read", description(), path));
  return out;
}

Result<void> CudnnSource::read_files(
    const std::function<bool(const SourceEntry&)>& want,
    const std::function<Result<void>(const SourceEntry&, std::string_view)>& visit) const {
  std::string data;
  return stream_files(want, [&](const SourceEntry& e, uint64_t offset, std::string_view piece) {
    if (offset == 0) {
      data.clear();
      data.reserve(static_cast<size_t>(e.size));
    }
    data.append(piece);
    if (offset + piece.size() < e.size) return Result<void>{};
    return visit(e, data);
  });
}

namespace {

bool is_drive_path(std::string_view p) {
  return p.size() >= 2 && p[1] == ':' &&
         ((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z'));
}

// Splits a stored path into clean components; Error text (without the entry
// name) when the path is absolute or climbs with "..".
Result<std::vector<std::string>> clean_components(std::string_view raw) {
  if (raw.empty()) return fail("empty name");
  if (raw.find('\0') != std::string_view::npos) return fail("the name contains a NUL byte");
  std::string p(raw);
  std::replace(p.begin(), p.end(), '\\', '/');
  if (p.front() == '/') return fail("absolute path");
  if (is_drive_path(p)) return fail("absolute path with a drive letter");
  std::vector<std::string> out;
  for (auto& c : split(p, '/')) {
    if (c == ".") continue;
    if (c == "..") return fail("\"..\" in the path");
    out.push_back(c);
  }
  if (out.empty()) return fail("the name is only \".\" or \"/\"");
  return out;
}

}  // namespace

Result<std::vector<SourceEntry>> check_source_entries(std::vector<SourceEntry> entries,
                                                      const std::string& where,
                                                      const SourceLimits& limits) {
  auto refuse = [&](const SourceEntry& e, const std::string& why,
                    ErrorCode code = ErrorCode::invalid) {
    return fail(fmt::format("{}: unsafe entry \"{}\": {}. Nothing was extracted or installed; get "
                            "the archive again from NVIDIA (https://developer.nvidia.com/"
                            "cudnn-downloads)",
                            where, e.raw_path.empty() ? e.path : e.raw_path, why),
                code);
  };
  if (entries.size() > limits.max_entries) {
    return fail(fmt::format("{}: more than {} entries: not a cuDNN distribution (NVIDIA's "
                            "archives hold fewer than 100; --max-files raises the limit)",
                            where, limits.max_entries),
                ErrorCode::limit);
  }
  uint64_t total = 0;
  std::vector<std::vector<std::string>> comps;
  comps.reserve(entries.size());
  for (auto& e : entries) {
    if (e.raw_path.empty()) e.raw_path = e.path;
    auto c = clean_components(e.raw_path);
    if (!c) return refuse(e, c.error().message);
    switch (e.type) {
      case SourceEntryType::device:
      case SourceEntryType::fifo:
      case SourceEntryType::socket:
      case SourceEntryType::other:
        return refuse(e, std::string("a ") + source_entry_type_name(e.type) +
                             " has no place in a cuDNN distribution");
      default: break;
    }
    if (e.size > limits.max_entry_bytes) {
      return refuse(e,
                    fmt::format("{} is larger than the {} limit for one file (--max-file-size "
                                "raises it)",
                                human_bytes(e.size), human_bytes(limits.max_entry_bytes)),
                    ErrorCode::limit);
    }
    total += e.size;
    if (total > limits.max_total_bytes) {
      return refuse(
          e,
          fmt::format("the files add up to more than {} (--max-total-size raises the limit)",
                      human_bytes(limits.max_total_bytes)),
          ErrorCode::limit);
    }
    comps.push_back(std::move(*c));
  }
  // Strip one common top directory (NVIDIA's archives hold cudnn-...-archive/).
  size_t strip = 0;
  if (!comps.empty()) {
    const std::string& top = comps[0][0];
    bool all_under = true, any_deeper = false;
    for (size_t i = 0; i < comps.size(); ++i) {
      if (comps[i][0] != top) all_under = false;
      if (comps[i].size() > 1) any_deeper = true;
      if (comps[i].size() == 1 && entries[i].type != SourceEntryType::directory) all_under = false;
    }
    if (all_under && any_deeper) strip = 1;
  }
  std::vector<SourceEntry> out;
  std::map<std::string, SourceEntryType> kinds;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (comps[i].size() <= strip) continue;  // the top directory itself
    std::vector<std::string> c(comps[i].begin() + static_cast<long>(strip), comps[i].end());
    SourceEntry e = std::move(entries[i]);
    e.path = join(c, "/");
    if (!kinds.emplace(e.path, e.type).second && e.type != SourceEntryType::directory) {
      return refuse(e, "the same path appears twice (a later copy could replace a checked one)");
    }
    out.push_back(std::move(e));
  }
  for (const auto& e : out) {
    // Nothing may sit below a link: "lib -> elsewhere" then "lib/x" writes through it.
    std::string prefix;
    auto parts = split(e.path, '/');
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      prefix = prefix.empty() ? parts[i] : prefix + "/" + parts[i];
      auto it = kinds.find(prefix);
      if (it != kinds.end() && it->second != SourceEntryType::directory) {
        return refuse(e, "it lies below " + prefix + ", which is a " +
                             source_entry_type_name(it->second) + ", not a directory");
      }
    }
    if (e.type == SourceEntryType::symlink || e.type == SourceEntryType::hardlink) {
      std::string t = e.link_target;
      std::replace(t.begin(), t.end(), '\\', '/');
      if (t.empty()) return refuse(e, "a link without a target");
      if (t.find('\0') != std::string::npos) return refuse(e, "the link target contains a NUL");
      if (t.front() == '/' || is_drive_path(t)) {
        return refuse(e, "the link points to the absolute path " + e.link_target +
                             ", outside the distribution");
      }
      // Symlinks resolve from their own directory; hardlinks name an archive path.
      std::vector<std::string> stack;
      if (e.type == SourceEntryType::symlink) {
        stack.assign(parts.begin(), parts.end() - 1);
      } else {
        // Archive hardlink targets carry the top directory too.
        auto tc = split(t, '/');
        if (strip && !tc.empty() && tc[0] == comps[0][0]) {
          tc.erase(tc.begin());
          t = join(tc, "/");
        }
      }
      bool climbed_after_name = false, seen_name = false;
      for (const auto& c : split(t, '/')) {
        if (c == ".") continue;
        if (c == "..") {
          if (seen_name) climbed_after_name = true;
          if (stack.empty()) {
            return refuse(e, "the link target " + e.link_target + " leaves the distribution");
          }
          stack.pop_back();
        } else {
          seen_name = true;
          stack.push_back(c);
        }
      }
      if (climbed_after_name) {
        // "x -> d/.." climbs out of wherever d really points: never needed, never allowed.
        return refuse(e, "the link target " + e.link_target + " climbs (\"..\") after a name");
      }
      if (stack.empty()) return refuse(e, "the link points at the distribution's top directory");
    }
  }
  return out;
}

namespace {

class DirectorySource : public CudnnSource {
 public:
  DirectorySource(std::string dir, std::vector<SourceEntry> entries)
      : dir_(std::move(dir)), entries_(std::move(entries)) {}
  std::string description() const override { return "directory " + dir_; }
  std::string file_name() const override { return path_basename(dir_); }
  const std::vector<SourceEntry>& entries() const override { return entries_; }
  Result<void> stream_files(const std::function<bool(const SourceEntry&)>& want,
                            const FilePieceVisitor& visit) const override {
    for (const auto& e : entries_) {
      if (e.type != SourceEntryType::file || !want(e)) continue;
      // Never through a link (a file or directory swapped for one since the listing),
      // never a FIFO or device; never more or fewer bytes than listed: the file may
      // have changed since.
      auto r = stream_file_beneath(dir_, e.raw_path, e.size + 1,
                                   [&](uint64_t offset, std::string_view piece) -> Result<void> {
                                     if (offset + piece.size() > e.size) return changed(e, ">");
                                     return visit(e, offset, piece);
                                   });
      if (!r) return std::unexpected(r.error());
      if (*r != e.size) return changed(e, std::to_string(*r));
      if (e.size == 0) {
        if (auto v = visit(e, 0, {}); !v) return v;
      }
    }
    return {};
  }

 private:
  std::unexpected<Error> changed(const SourceEntry& e, const std::string& got) const {
    return fail(fmt::format("{}: {} changed while being read ({} bytes, listed as {})",
                            description(), e.path, got, e.size));
  }
  std::string dir_;
  std::vector<SourceEntry> entries_;
};

SourceEntryType entry_type(FileType t) {
  switch (t) {
    case FileType::regular: return SourceEntryType::file;
    case FileType::directory: return SourceEntryType::directory;
    case FileType::symlink: return SourceEntryType::symlink;
    case FileType::char_device:
    case FileType::block_device: return SourceEntryType::device;
    case FileType::other: return SourceEntryType::other;
  }
  return SourceEntryType::other;
}

}  // namespace

Result<std::unique_ptr<CudnnSource>> open_directory_source(const std::string& dir,
                                                           const SourceLimits& limits) {
  auto fs = make_real_filesystem();
  if (!fs->is_dir(dir)) return fail(dir + ": not a directory");
  std::vector<SourceEntry> raw;
  // Breadth-first, never following links (a link to a directory is an entry).
  std::vector<std::string> queue = {""};
  for (size_t qi = 0; qi < queue.size(); ++qi) {
    const std::string rel = queue[qi];
    auto list = fs->list_dir(rel.empty() ? dir : path_join(dir, rel));
    if (!list) return std::unexpected(list.error());
    for (const auto& de : *list) {
      std::string r = rel.empty() ? de.name : rel + "/" + de.name;
      std::string host = path_join(dir, r);
      auto st = fs->lstat(host);
      if (!st) return fail(host + ": cannot stat");
      SourceEntry e;
      e.path = e.raw_path = r;
      e.type = entry_type(st->type);
      e.mode = st->mode & 07777;
      if (e.type == SourceEntryType::file) e.size = st->size;
      if (e.type == SourceEntryType::symlink) {
        auto t = fs->read_link(host);
        if (!t) return std::unexpected(t.error());
        e.link_target = *t;
      }
      if (e.type == SourceEntryType::directory) queue.push_back(r);
      raw.push_back(std::move(e));
      if (raw.size() > limits.max_entries) break;
    }
  }
  auto checked = check_source_entries(std::move(raw), "directory " + dir, limits);
  if (!checked) return std::unexpected(checked.error());
  // A directory holding only the extracted cudnn-...-archive/ folder is accepted too
  // (its name was stripped like an archive's top directory; raw_path keeps it).
  return std::unique_ptr<CudnnSource>(new DirectorySource(dir, std::move(*checked)));
}

Result<std::unique_ptr<CudnnSource>> open_archive_source(const std::string& file,
                                                         const SourceLimits& limits) {
  return open_archive_source(file, limits, default_archive_readers());
}

Result<std::string> source_sha256(const std::string& path, const SourceProgressReport& report) {
  auto fs = make_real_filesystem();
  auto st = fs->stat(path);
  if (!st || st->type != FileType::regular) {
    return fail(path + ": not an archive file (a SHA-256 is taken of the downloaded archive)");
  }
  SourceProgress p;
  p.total_bytes = st->size;
  p.total_files = 1;
  auto tell = [&] {
    if (report) report(p);
  };
  tell();
  Sha256 sha;
  std::string buf(1u << 20, '\0');
  for (uint64_t at = 0;;) {
    auto n = fs->read_at(path, at, std::span<char>(buf.data(), buf.size()));
    if (!n) {
      p.done = true;
      tell();
      return std::unexpected(n.error());
    }
    if (*n == 0) break;
    sha.update(std::string_view(buf.data(), *n));
    at += *n;
    p.bytes = at;
    tell();
  }
  p.files = 1;
  p.done = true;
  tell();
  return sha.hex_digest();
}

namespace {

class ProgressSource : public CudnnSource {
 public:
  ProgressSource(std::unique_ptr<CudnnSource> inner, SourceProgressReport report)
      : inner_(std::move(inner)), report_(std::move(report)) {}
  std::string description() const override { return inner_->description(); }
  std::string file_name() const override { return inner_->file_name(); }
  const std::vector<SourceEntry>& entries() const override { return inner_->entries(); }
  Result<void> stream_files(const std::function<bool(const SourceEntry&)>& want,
                            const FilePieceVisitor& visit) const override {
    SourceProgress p;
    for (const auto& e : inner_->entries()) {
      if (e.type != SourceEntryType::file || !want(e)) continue;
      p.total_bytes += e.size;
      ++p.total_files;
    }
    report_(p);
    auto r = inner_->stream_files(
        want, [&](const SourceEntry& e, uint64_t offset, std::string_view piece) {
          auto v = visit(e, offset, piece);
          p.bytes += piece.size();
          if (offset + piece.size() == e.size) ++p.files;
          report_(p);
          return v;
        });
    p.done = true;
    report_(p);
    return r;
  }

 private:
  std::unique_ptr<CudnnSource> inner_;
  SourceProgressReport report_;
};

}  // namespace

std::unique_ptr<CudnnSource> reporting_progress(std::unique_ptr<CudnnSource> inner,
                                                SourceProgressReport report) {
  return std::make_unique<ProgressSource>(std::move(inner), std::move(report));
}

Result<std::unique_ptr<CudnnSource>> open_cudnn_source(const std::string& path,
                                                       const SourceLimits& limits) {
  auto fs = make_real_filesystem();
  auto st = fs->stat(path);
  if (!st) {
    return fail(path +
                ": no such file or directory (give the cuDNN archive, e.g. "
                "cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz, or its extracted directory)");
  }
  if (st->type == FileType::directory) return open_directory_source(path, limits);
  if (st->type != FileType::regular) {
    // A FIFO would block the archive reader and a device never ends: named, never opened.
    const char* what = st->type == FileType::char_device    ? "a character device"
                       : st->type == FileType::block_device ? "a block device"
                                                            : "a FIFO or a socket";
    return fail(path + " is " + what +
                ", not an archive file or a directory: give the downloaded cuDNN archive "
                "(.tar.xz, .zip) or the directory it was extracted to");
  }
  return open_archive_source(path, limits);
}

}  // namespace dlenv
