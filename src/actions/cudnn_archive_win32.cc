// Windows: archives are read with the system's tar.exe (bsdtar, shipped in
// %SystemRoot%\System32 since Windows 10 1803) through cudnn_archive_tar.cc;
// nothing is extracted to disk. Extracted directories work as everywhere.
#include <fmt/format.h>

#include "actions/cudnn_source.h"
#include "platform/env.h"

namespace dlenv {

ArchiveReaders default_archive_readers() {
  std::string root = "C:\\Windows";
  if (auto v = make_process_env()->get("SystemRoot"); v && !v->empty()) root = *v;
  return {{}, {root + "\\System32\\tar.exe"}};
}

Result<std::unique_ptr<CudnnSource>> open_archive_source(const std::string& file,
                                                         const SourceLimits& limits,
                                                         const ArchiveReaders& readers) {
  for (const auto& prog : readers.tar_programs) {
    auto tar = probe_tar_program(prog);
    if (!tar) continue;
    return open_tar_program_source(file, limits, *tar);
  }
  return fail(fmt::format(
      "{}: cannot read the archive: {} did not run (it comes with Windows 10 1803 and later). "
      "Extract it (Explorer \"Extract All\") and pass the extracted directory",
      file,
      readers.tar_programs.empty() ? std::string("no tar program") : readers.tar_programs[0]));
}

Result<std::unique_ptr<CudnnSource>> open_libarchive_source(const std::string& file,
                                                            const SourceLimits& /*limits*/,
                                                            const std::vector<std::string>&) {
  return fail(file + ": this Windows build reads archives with tar.exe, not libarchive");
}

}  // namespace dlenv
