#pragma once
// What the Linux release binary needs from glibc beyond its baseline (2.31), done with
// what glibc 2.31 already has. The toolchain's static libstdc++ and libgcc_eh were built
// on a newer glibc and call arc4random (2.36) and _dl_find_object (2.35); the release build
// links them against the bullseye sysroot, where those symbols do not exist, and
// platform/glibc_baseline_symbols_exe.cc defines them in the binary over these functions.
// Linux only.
#include <cstdint>
#include <optional>
#include <string_view>

namespace dlenv {

// The loaded object (executable, shared library, vDSO) whose PT_LOAD segments contain an
// address, as glibc 2.35's _dl_find_object reports it: from the page its first segment
// starts in to the end of its last segment, and its PT_GNU_EH_FRAME (.eh_frame_hdr) address,
// nullptr when it has none. Found with dl_iterate_phdr, which takes the loader's lock, so it is
// safe while other threads dlopen and dlclose (the same walk libgcc's unwinder made before
// glibc 2.35).
struct LoadedObjectSpan {
  const void* map_start = nullptr;
  const void* map_end = nullptr;
  const void* eh_frame = nullptr;
};
std::optional<LoadedObjectSpan> loaded_object_containing(const void* address);

// 32 random bits from the kernel: getrandom(2), else /dev/urandom (kernels before 3.17,
// seccomp filters that refuse the call). nullopt when neither gives any.
std::optional<std::uint32_t> kernel_random_u32();

// Whether a library loaded with dlmopen(LM_ID_NEWLM) may call dlopen itself on this glibc
// (its version, "2.31"): before 2.34 dlopen lived in libdl.so.2, of which such a namespace
// gets a second copy, and a failed dlopen there ends the whole process ("error while
// loading shared libraries", exit 127) instead of returning NULL. cuDNN 9's libcudnn.so
// dlopens its sub-libraries, so on glibc 2.31 (Ubuntu 20.04, Debian 11) a cuDNN copy whose
// sub-libraries are off the search path killed `dlenv doctor`. An unparsable version: false.
bool dlopen_in_dlmopen_namespace_is_safe(std::string_view glibc_version);

}  // namespace dlenv
