// libFuzzer target for the elf parser (built with -DDLENV_FUZZ=ON and clang;
// see the end of tests/CMakeLists.txt). Seeds: tests/fuzz/corpus/elf/.
#include <cstddef>
#include <cstdint>

#include "binfmt/fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  volatile uint64_t sink = dlenv::fuzz::elf_one_input(data, size);
  (void)sink;
  return 0;
}
