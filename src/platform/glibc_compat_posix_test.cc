#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <exception>
#include <set>
#include <string>
#include <vector>

#include "platform/glibc_compat.h"

namespace dlenv {
namespace {

int function_in_this_binary() {
  return 7;
}

// glibc >= 2.35 has the real _dl_find_object: the replacement must agree with it on
// every object it is asked about (looked up at run time, so this builds on any glibc).
using RealFn = int (*)(void*, DlFindObject*);

std::vector<const void*> probe_addresses() {
  std::vector<const void*> out;
  out.push_back(reinterpret_cast<const void*>(&function_in_this_binary));  // the test binary
  out.push_back(reinterpret_cast<const void*>(&dlopen));                   // libc / libdl
  // libstdc++ (a shared library in the test binary)
  out.push_back(reinterpret_cast<const void*>(static_cast<void (*)()>(&std::terminate)));
  static int a_global = 0;
  out.push_back(&a_global);  // data segment of the test binary
  return out;
}

TEST(GlibcCompat, FindLoadedObjectFindsTheObjectOfCodeAndData) {
  for (const void* address : probe_addresses()) {
    DlFindObject object;
    ASSERT_EQ(find_loaded_object(address, &object), 0) << address;
    EXPECT_LE(object.map_start, address);
    EXPECT_GT(object.map_end, address);
    EXPECT_NE(object.eh_frame, nullptr) << "every object gcc links has .eh_frame_hdr";
  }
}

TEST(GlibcCompat, FindLoadedObjectSaysNoForUnmappedAddresses) {
  DlFindObject object;
  EXPECT_EQ(find_loaded_object(nullptr, &object), -1);
  EXPECT_EQ(find_loaded_object(reinterpret_cast<const void*>(std::uintptr_t{16}), &object), -1);
}

TEST(GlibcCompat, AgreesWithGlibcsOwnDlFindObject) {
  auto real = reinterpret_cast<RealFn>(dlsym(RTLD_DEFAULT, "_dl_find_object"));
  if (!real) GTEST_SKIP() << "this glibc is older than 2.35: no _dl_find_object to compare with";
  for (const void* address : probe_addresses()) {
    DlFindObject want;
    ASSERT_EQ(real(const_cast<void*>(address), &want), 0) << address;
    DlFindObject got;
    ASSERT_EQ(find_loaded_object(address, &got), 0) << address;
    EXPECT_EQ(got.eh_frame, want.eh_frame) << address;
    EXPECT_EQ(got.map_start, want.map_start) << address;
    EXPECT_EQ(got.map_end, want.map_end) << address;
  }
  DlFindObject none;
  EXPECT_EQ(real(nullptr, &none), -1);
}

TEST(GlibcCompat, KernelRandomGivesDifferentValues) {
  std::set<std::uint32_t> seen;
  for (int i = 0; i < 16; ++i) {
    auto v = kernel_random_u32();
    ASSERT_TRUE(v);
    seen.insert(*v);
  }
  // 16 draws of 32 bits: a repeat has probability ~3e-8; all equal means it is broken.
  EXPECT_GE(seen.size(), 15u);
}

TEST(GlibcCompat, DlopenInsideDlmopenNamespacesIsSafeFromGlibc234) {
  EXPECT_FALSE(dlopen_in_dlmopen_namespace_is_safe("2.31"));
  EXPECT_FALSE(dlopen_in_dlmopen_namespace_is_safe("2.33"));
  EXPECT_TRUE(dlopen_in_dlmopen_namespace_is_safe("2.34"));
  EXPECT_TRUE(dlopen_in_dlmopen_namespace_is_safe("2.36"));
  EXPECT_TRUE(dlopen_in_dlmopen_namespace_is_safe("2.40"));
  EXPECT_TRUE(dlopen_in_dlmopen_namespace_is_safe("3.0"));
  EXPECT_FALSE(dlopen_in_dlmopen_namespace_is_safe("1.99"));
  for (const char* bad : {"", "2", ".34", "2.", "x.34", "2.x"}) {
    EXPECT_FALSE(dlopen_in_dlmopen_namespace_is_safe(bad)) << bad;
  }
}

}  // namespace
}  // namespace dlenv
