// open_first_with_symbols: the "first candidate library that has every symbol" loop
// of the CUDA driver API, NVML health and libarchive loaders, on system libraries
// every machine has: a name that does not exist, one without the symbol (the C
// library has no cos), one with it (the math library; msvcrt.dll on Windows, where
// kernel32.dll is the one without).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "platform/dynamic_library.h"

namespace dlenv {
namespace {

#ifdef _WIN32
const std::string kMissing = "dlenv-no-such-library.dll";
const std::string kWithout = "kernel32.dll";
const std::string kWith = "msvcrt.dll";
#else
const std::string kMissing = "libdlenv-no-such-library.so.1";
const std::string kWithout = "libc.so.6";
const std::string kWith = "libm.so.6";
#endif

using CosFn = double (*)(double);

TEST(OpenFirstWithSymbols, TakesTheFirstCandidateWithEveryRequiredSymbol) {
  void* cos_slot = nullptr;
  void* optional_slot = reinterpret_cast<void*>(1);
  const SymbolSpec specs[] = {{"cos", &cos_slot, true, 0},
                              {"dlenv_no_such_symbol", &optional_slot, false, 0}};
  const std::vector<std::string> candidates = {kMissing, kWithout, kWith};
  auto r = open_first_with_symbols(candidates, specs);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->lib.requested_name(), kWith);
  ASSERT_NE(cos_slot, nullptr);
  EXPECT_EQ(optional_slot, nullptr) << "an optional symbol that is missing leaves a null slot";
  EXPECT_DOUBLE_EQ(reinterpret_cast<CosFn>(cos_slot)(0.0), 1.0);
  EXPECT_EQ(r->bound.bound_names, std::vector<std::string>{"cos"});
  EXPECT_EQ(r->bound.missing_optional, std::vector<std::string>{"dlenv_no_such_symbol"});
}

TEST(OpenFirstWithSymbols, FailsWithEveryCandidatesReason) {
  void* cos_slot = nullptr;
  const SymbolSpec specs[] = {{"cos", &cos_slot, true, 0}};
  // `accept` refuses the library that has the symbol: every candidate has failed.
  const std::vector<std::string> candidates = {kMissing, kWithout, kWith};
  int asked = 0;
  auto r = open_first_with_symbols(candidates, specs, [&](const DynamicLibrary& lib) {
    ++asked;
    return lib.requested_name() + ": refused by the test";
  });
  ASSERT_FALSE(r);
  EXPECT_EQ(asked, 1) << "accept only sees libraries that bound every required symbol";
  const std::string& m = r.error().message;
  EXPECT_NE(m.find(kMissing), std::string::npos) << m;
  EXPECT_NE(m.find("missing required symbol in "), std::string::npos) << m;
  EXPECT_NE(m.find(": cos; "), std::string::npos) << m;
  EXPECT_NE(m.find(kWith + ": refused by the test"), std::string::npos) << m;
  EXPECT_LT(m.find(kMissing), m.find("missing required symbol")) << "candidates in order: " << m;

  auto none = open_first_with_symbols(std::vector<std::string>{}, specs);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message, "no library to try");
}

}  // namespace
}  // namespace dlenv
