// libFuzzer target for the dist metadata parser (built with -DDLENV_FUZZ=ON and clang; see the
// end of tests/CMakeLists.txt and scripts/fuzz.sh). Seeds: tests/fuzz/corpus/dist_metadata/.
#include <cstddef>
#include <cstdint>

#include "probe/text_formats_fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  volatile uint64_t sink = dlenv::fuzz::dist_metadata_one_input(data, size);
  (void)sink;
  return 0;
}
