// Builds without libarchive (the mingw/Windows build): archives cannot be read
// in place, so the user is asked for the extracted directory instead.
#include "actions/cudnn_source.h"

namespace dlenv {

Result<std::unique_ptr<CudnnSource>> open_archive_source(const std::string& file,
                                                         const SourceLimits& /*limits*/) {
  return fail(file +
              ": this dlenv build reads cuDNN archives only when extracted: unpack it "
              "(Explorer \"Extract All\", or `tar -xf " +
              file + "`) and give the extracted directory");
}

}  // namespace dlenv
