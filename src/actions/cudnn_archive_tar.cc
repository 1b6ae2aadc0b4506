// The tar-program archive reader: a listing from `tar -tvf`, member bytes from
// `tar -xOf ARCHIVE MEMBER...` (stdout, split by the listed sizes). Nothing is
// extracted to disk. Used on Windows (the system's tar.exe, bsdtar) and on
// Linux when libarchive is not installed (bsdtar, else GNU tar).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "actions/cudnn_source.h"
#include "platform/process.h"
#include "util/strings.h"

namespace dlenv {
namespace {

// Reads of this many bytes at most per tar process (the rest in a further run).
constexpr uint64_t kBatchBytes = 512ull << 20;

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
  opt.max_output = 64u << 20;
  // -P: list names exactly as stored (GNU tar strips a leading '/' otherwise, which
  // would hide an absolute path from the safety check).
  auto run = run_process({tar.path, "-P", "-tvf", file}, opt);
  if (!run) return std::unexpected(run.error());
  if (run->timed_out) {
    return fail(fmt::format("{}: {} -tvf did not finish within 5 minutes", file, tar.path));
  }
  if (run->exit_code != 0) {
    return fail(fmt::format("{}: {} cannot list it (exit {}): {}", file, tar.path, run->exit_code,
                            trim(run->err)));
  }
  auto raw = parse_tar_listing(run->out, tar.flavor);
  if (!raw) return fail(fmt::format("{}: {}", file, raw.error().message));
  if (raw->empty()) return fail(file + ": the archive is empty");
  auto checked = check_source_entries(std::move(*raw), "archive " + file, limits);
  if (!checked) return std::unexpected(checked.error());
  return std::unique_ptr<CudnnSource>(new TarProgramSource(file, std::move(*checked), tar));
}

}  // namespace dlenv
