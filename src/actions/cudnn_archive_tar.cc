// The tar-program archive reader: a listing from `tar -tvf`, member bytes from
// `tar -xOf ARCHIVE MEMBER...` (stdout streamed piece by piece and split by the
// listed sizes: no member is ever in memory whole). Nothing is extracted to disk. Used on Windows
// (the system's tar.exe, bsdtar) and on Linux when libarchive is not installed (bsdtar, else GNU
// tar).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "actions/cudnn_source.h"
#include "platform/process.h"
#include "util/strings.h"

namespace dlenv {
namespace {

// Reads of this many bytes at most per tar process (the rest in a further run).
constexpr uint64_t kBatchBytes = 512ull << 20;

class TarProgramSource : public CudnnSource {
 public:
  TarProgramSource(std::string file, std::vector<SourceEntry> entries, TarProgram tar)
      : file_(std::move(file)), entries_(std::move(entries)), tar_(std::move(tar)) {}
  std::string description() const override { return "archive " + file_; }
  std::string file_name() const override { return path_basename(file_); }
  const std::vector<SourceEntry>& entries() const override { return entries_; }

  Result<void> stream_files(const std::function<bool(const SourceEntry&)>& want,
                            const FilePieceVisitor& visit) const override {
    std::vector<const SourceEntry*> batch;
    uint64_t batch_bytes = 0;
    auto flush = [&]() -> Result<void> {
      if (batch.empty()) return {};
      auto r = read_batch(batch, batch_bytes, visit);
      batch.clear();
      batch_bytes = 0;
      return r;
    };
    for (const auto& e : entries_) {  // archive order: the order tar writes them in
      if (e.type != SourceEntryType::file || !want(e)) continue;
      if (!batch.empty() && batch_bytes + e.size > kBatchBytes) {
        auto r = flush();
        if (!r) return r;
      }
      batch.push_back(&e);
      batch_bytes += e.size;
    }
    return flush();
  }

 private:
  Result<void> read_batch(const std::vector<const SourceEntry*>& batch, uint64_t total,
                          const FilePieceVisitor& visit) const {
    // -P: names exactly as stored (GNU tar would strip a leading '/' otherwise).
    std::vector<std::string> argv = {tar_.path, "-P", "-xOf", file_};
    for (const auto* e : batch) {
      // bsdtar takes member names as patterns: a name with pattern characters
      // could select more than the listed entry.
      if (tar_.flavor == TarFlavor::bsd &&
          e->raw_path.find_first_of("*?[\\") != std::string::npos) {
        return fail(fmt::format(
            "{}: {}: the name holds a wildcard character, which {} would read as a pattern; "
            "extract the archive and pass the directory",
            file_, e->raw_path, tar_.path));
      }
      argv.push_back(e->raw_path);
    }
    // The output is the members one after the other: each piece goes to the member
    // it belongs to by the listed sizes; a byte past the total stops the program.
    size_t member = 0;
    uint64_t at = 0, written = 0;
    std::optional<Error> failed;
    auto deliver = [&](std::string_view data) -> bool {
      if (written + data.size() > total) {
        failed = Error{fmt::format(
            "{}: {} wrote more than the {} bytes the listed sizes of its members add up to (the "
            "archive is damaged, or the program changed the bytes); download it again or "
            "extract it and pass the directory",
            file_, tar_.path, total)};
        return false;
      }
      written += data.size();
      while (member < batch.size() && (!data.empty() || batch[member]->size == 0)) {
        const SourceEntry& e = *batch[member];
        const size_t n = static_cast<size_t>(std::min<uint64_t>(e.size - at, data.size()));
        if (n > 0 || e.size == 0) {
          if (auto v = visit(e, at, data.substr(0, n)); !v) {
            failed = v.error();
            return false;
          }
        }
        at += n;
        data.remove_prefix(n);
        if (at == e.size) {
          ++member;
          at = 0;
        }
      }
      return true;
    };
    ProcessOptions opt;
    opt.timeout = std::chrono::minutes(10);
    opt.on_stdout = deliver;
    auto run = run_process(argv, opt);
    if (!run) return std::unexpected(run.error());
    if (failed) return std::unexpected(*failed);
    if (run->timed_out) {
      return fail(fmt::format("{}: {} -xOf did not finish within 10 minutes", file_, tar_.path));
    }
    if (run->exit_code != 0) {
      return fail(fmt::format("{}: {} -xOf failed (exit {}): {}", file_, tar_.path, run->exit_code,
                              trim(run->err)));
    }
    // Members at the end with nothing (left) to deliver: 0-byte files.
    if (!deliver({})) return std::unexpected(*failed);
    if (written != total || member != batch.size()) {
      return fail(fmt::format(
          "{}: {} wrote {} bytes for members whose listed sizes add up to {} (the archive is "
          "damaged, or the program changed the bytes); download it again or extract it and "
          "pass the directory",
          file_, tar_.path, written, total));
    }
    return {};
  }

  std::string file_;
  std::vector<SourceEntry> entries_;
  TarProgram tar_;
};

}  // namespace

std::optional<TarProgram> probe_tar_program(const std::string& path) {
  ProcessOptions opt;
  opt.timeout = std::chrono::seconds(20);
  auto run = run_process({path, "--version"}, opt);
  if (!run || run->exit_code != 0) return std::nullopt;
  TarProgram t;
  t.path = path;
  t.flavor = run->out.find("GNU tar") != std::string::npos ? TarFlavor::gnu : TarFlavor::bsd;
  return t;
}

Result<std::unique_ptr<CudnnSource>> open_tar_program_source(const std::string& file,
                                                             const SourceLimits& limits,
                                                             const TarProgram& tar) {
  ProcessOptions opt;
  opt.timeout = std::chrono::minutes(5);
  // The listing is read as it comes: at the first line over a limit tar is stopped, before
  // it decompresses the rest of a bomb; check_source_entries then refuses, naming the entry.
  std::string listing;
  size_t parsed_up_to = 0, count = 0;
  uint64_t total = 0;
  bool over = false;
  opt.on_stdout = [&](std::string_view piece) {
    listing.append(piece);
    const size_t end = listing.rfind('\n');
    if (end == std::string::npos || end + 1 <= parsed_up_to) return true;
    auto lines = parse_tar_listing(
        std::string_view(listing).substr(parsed_up_to, end + 1 - parsed_up_to), tar.flavor);
    parsed_up_to = end + 1;
    if (!lines) return true;  // the whole listing's parse below says what is wrong
    for (const auto& e : *lines) {
      total += e.size;
      if (++count > limits.max_entries || e.size > limits.max_entry_bytes ||
          total > limits.max_total_bytes) {
        over = true;
        return false;
      }
    }
    return listing.size() < (64u << 20);
  };
  // -P: list names exactly as stored (GNU tar strips a leading '/' otherwise, which
  // would hide an absolute path from the safety check).
  auto run = run_process({tar.path, "-P", "-tvf", file}, opt);
  if (!run) return std::unexpected(run.error());
  if (over) listing.resize(parsed_up_to);  // the complete lines: the last is the culprit
  if (!over && run->timed_out) {
    return fail(fmt::format("{}: {} -tvf did not finish within 5 minutes", file, tar.path));
  }
  if (!over && run->exit_code != 0) {
    return fail(fmt::format("{}: {} cannot list it (exit {}): {}", file, tar.path, run->exit_code,
                            trim(run->err)));
  }
  auto raw = parse_tar_listing(listing, tar.flavor);
  if (!raw) return fail(fmt::format("{}: {}", file, raw.error().message));
  if (raw->empty()) return fail(file + ": the archive is empty");
  auto checked = check_source_entries(std::move(*raw), "archive " + file, limits);
  if (!checked) return std::unexpected(checked.error());
  return std::unique_ptr<CudnnSource>(new TarProgramSource(file, std::move(*checked), tar));
}

}  // namespace dlenv
