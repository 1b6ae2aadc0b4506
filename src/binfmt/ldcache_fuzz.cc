// libFuzzer target for the ldcache parser (built with -DDLENV_FUZZ=ON and clang;
// see the end of tests/CMakeLists.txt). Seeds: tests/fuzz/corpus/ldcache/.
#include <cstddef>
#include <cstdint>

#include "binfmt/fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  volatile uint64_t sink = dlenv::fuzz::ldcache_one_input(data, size);
  (void)sink;
  return 0;
}
