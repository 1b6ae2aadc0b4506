// Whether this build runs under AddressSanitizer (GCC's -fsanitize=address defines
// __SANITIZE_ADDRESS__; clang says so through __has_feature). Code that must behave
// differently there (no memory cap under ASan's shadow reservation) and tests whose time
// bounds an unoptimized sanitizer build cannot meet ask this, and nothing else.
#pragma once

namespace dlenv {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitizerBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitizerBuild = true;
#else
inline constexpr bool kSanitizerBuild = false;
#endif
#else
inline constexpr bool kSanitizerBuild = false;
#endif

}  // namespace dlenv
