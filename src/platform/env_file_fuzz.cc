// libFuzzer target for the env file parser (built with -DDLENV_FUZZ=ON and clang; see the
// end of tests/CMakeLists.txt and scripts/fuzz.sh). Seeds: tests/fuzz/corpus/env_file/.
#include <cstddef>
#include <cstdint>

#include "platform/env_file_fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  volatile uint64_t sink = dlenv::fuzz::env_file_one_input(data, size);
  (void)sink;
  return 0;
}
