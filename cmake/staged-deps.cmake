# Dependencies of a build whose compiler must not see this machine's /usr/include, included
# by CMakeLists.txt instead of the host's find_package() calls: the mingw-w64 (Windows)
# build and the Linux release build against the glibc 2.31 sysroot
# (cmake/linux-glibc-baseline.cmake). Both toolchain files set DLENV_STAGED_HEADERS.
#
# The header-only libraries come from the host's Debian packages, but the compiler sees
# only a staging folder of links to their include folders (<build>/staged-include/{CLI,fmt,
# nlohmann}, and for the Linux build libarchive's two headers), never /usr/include itself,
# whose glibc headers would silently replace the mingw or the sysroot ones.
set(DLENV_STAGED_INCLUDE ${CMAKE_BINARY_DIR}/staged-include)
file(MAKE_DIRECTORY ${DLENV_STAGED_INCLUDE})
set(_staged CLI fmt nlohmann)
if(NOT WIN32)
  list(APPEND _staged archive.h archive_entry.h)
endif()
foreach(_entry IN LISTS _staged)
  if(NOT EXISTS /usr/include/${_entry})
    message(FATAL_ERROR "/usr/include/${_entry} is missing; run scripts/install-deps.sh")
  endif()
  if(NOT EXISTS ${DLENV_STAGED_INCLUDE}/${_entry})
    file(CREATE_LINK /usr/include/${_entry} ${DLENV_STAGED_INCLUDE}/${_entry} SYMBOLIC)
  endif()
endforeach()

add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
target_include_directories(nlohmann_json::nlohmann_json SYSTEM INTERFACE ${DLENV_STAGED_INCLUDE})

add_library(fmt::fmt-header-only INTERFACE IMPORTED)
target_include_directories(fmt::fmt-header-only SYSTEM INTERFACE ${DLENV_STAGED_INCLUDE})
target_compile_definitions(fmt::fmt-header-only INTERFACE FMT_HEADER_ONLY=1)

add_library(CLI11::CLI11 INTERFACE IMPORTED)
target_include_directories(CLI11::CLI11 SYSTEM INTERFACE ${DLENV_STAGED_INCLUDE})

set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)

if(WIN32)
  # mingw g++ 12 at -O2/-O3 reports -Wmaybe-uninitialized inside fmt for a
  # std::optional<int> read only under `if (opt)` (src/actions/cudnn_install.cc); the
  # same GCC bug family as the -Wno-restrict / -Wno-free-nonheap-object in CMakeLists.txt.
  cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR}
                 CALL target_compile_options dlenv_actions PRIVATE -Wno-maybe-uninitialized)
endif()
