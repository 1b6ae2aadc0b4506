// Linked into the Linux release binary built against the glibc 2.31 sysroot
// (cmake/linux-glibc-baseline.cmake), and only there: the glibc symbols newer than 2.31
// that the toolchain's static libstdc++ and libgcc_eh reference. Each is hidden, so the
// binary neither exports it nor lets it replace glibc's own in a library dlenv loads, and
// the linker resolves those references here instead of asking the user's glibc for a
// version it may not have (tests/package checks the binary needs nothing newer than 2.31).
//
//   arc4random               GLIBC_2.36  std::random_device's default source
//   _dl_find_object          GLIBC_2.35  libgcc's unwinder: where a throwing frame's
//                                        .eh_frame_hdr is
//   __libc_single_threaded   GLIBC_2.32  libstdc++'s shortcut for reference counts
//
// A symbol missing from this list fails the link (the sysroot's libc lacks it), so a new
// toolchain cannot add a requirement silently.
#ifndef DLENV_GLIBC_BASELINE
#error "only for the glibc baseline build (cmake/linux-glibc-baseline.cmake)"
#endif

#include <cstdint>
#include <cstdlib>

#include "platform/glibc_compat.h"

extern "C" {

// The layout is dlenv::DlFindObject (glibc 2.35's struct dl_find_object on x86-64).
__attribute__((visibility("hidden"))) int _dl_find_object(void* address,
                                                          dlenv::DlFindObject* result) {
  return dlenv::find_loaded_object(address, result);
}

__attribute__((visibility("hidden"))) std::uint32_t arc4random(void) {
  if (auto value = dlenv::kernel_random_u32()) return *value;
  // glibc's own arc4random also terminates when the kernel gives no randomness.
  std::abort();
}

// 0: "other threads may exist", so libstdc++ always uses atomic reference counts
// (correct in every case; glibc's own variable only lets it skip them before a thread).
__attribute__((visibility("hidden"))) char __libc_single_threaded = 0;

}  // extern "C"
