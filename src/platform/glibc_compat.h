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

// glibc 2.35's struct dl_find_object on x86-64 (DLFO_STRUCT_HAS_EH_DBASE is 0 there): the
// one layout both the replacement and its test against glibc's own use.
struct DlFindObject {
  unsigned long long flags = 0;
  void* map_start = nullptr;
  void* map_end = nullptr;
  void* link_map = nullptr;
  void* eh_frame = nullptr;
  unsigned long long reserved[7] = {};
};
static_assert(sizeof(DlFindObject) == 96, "glibc 2.35 x86-64 layout");

// glibc 2.35's _dl_find_object over what glibc 2.31 has: the loaded object (executable,
// shared library, vDSO) whose PT_LOAD segments contain `address`, from the page its first
// segment starts in to the end of its last segment, and its PT_GNU_EH_FRAME (.eh_frame_hdr)
// address, nullptr when it has none; 0, or -1 when no object contains it. `link_map` is left
// null: libgcc's unwinder reads only the eh_frame, and glibc's link map would cost a lookup
// under the loader's lock per frame. Found with dl_iterate_phdr, which takes the loader's
// lock, so it is safe while other threads dlopen and dlclose (the same walk libgcc's
// unwinder made before glibc 2.35).
int find_loaded_object(const void* address, DlFindObject* result);

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
