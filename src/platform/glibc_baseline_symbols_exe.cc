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

#include <link.h>

#include <cstdint>
#include <cstdlib>

#include "platform/glibc_compat.h"

extern "C" {

// glibc 2.35's struct dl_find_object on x86-64 (DLFO_STRUCT_HAS_EH_DBASE is 0 there).
struct dl_find_object {
  unsigned long long dlfo_flags;
  void* dlfo_map_start;
  void* dlfo_map_end;
  struct link_map* dlfo_link_map;
  void* dlfo_eh_frame;
  unsigned long long dlfo_reserved[7];
};
static_assert(sizeof(dl_find_object) == 96, "glibc 2.35 x86-64 layout");

__attribute__((visibility("hidden"))) int _dl_find_object(void* address, dl_find_object* result) {
  auto span = dlenv::loaded_object_containing(address);
  if (!span) return -1;
  result->dlfo_flags = 0;
  result->dlfo_map_start = const_cast<void*>(span->map_start);
  result->dlfo_map_end = const_cast<void*>(span->map_end);
  result->dlfo_eh_frame = const_cast<void*>(span->eh_frame);
  // libgcc's unwinder reads only the eh_frame; glibc's link map would cost a lookup under
  // the loader's lock per frame, so it is left out.
  result->dlfo_link_map = nullptr;
  return 0;
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
