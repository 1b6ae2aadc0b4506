// libFuzzer target for the PE parser (built with -DDLENV_FUZZ=ON and clang;
// see the end of tests/CMakeLists.txt). Seeds: tests/fuzz/corpus/pe/.
#include <cstddef>
#include <cstdint>

#include "binfmt/fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  volatile uint64_t sink = dlenv::fuzz::pe_one_input(data, size);
  (void)sink;
  return 0;
}
