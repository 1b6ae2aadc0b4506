// Linked into every test binary: the live probes' child (probe/live_isolation.h) is the
// dlenv built beside the tests, since a test binary is not dlenv itself. Set before any test
// runs, unless the test's environment names one already (Wine: tests/CMakeLists.txt sets
// dlenv.exe by its Z: path).
#include <cstdlib>

namespace {

#ifndef _WIN32
[[maybe_unused]] const bool kLiveProbeProgramSet =
    ::setenv("DLENV_LIVE_PROBE_PROGRAM", DLENV_BINARY_DIR "/dlenv", 0) == 0;
#endif

}  // namespace
