// libFuzzer target for the tar listing parser (built with -DDLENV_FUZZ=ON and clang; see the
// end of tests/CMakeLists.txt and scripts/fuzz.sh). Seeds: tests/fuzz/corpus/tar_listing/.
#include <cstddef>
#include <cstdint>

#include "actions/tar_listing_fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  volatile uint64_t sink = dlenv::fuzz::tar_listing_one_input(data, size);
  (void)sink;
  return 0;
}
