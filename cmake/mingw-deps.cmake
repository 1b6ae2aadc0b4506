# Dependencies of the mingw-w64 (Windows) build, included by CMakeLists.txt instead of
# the host's find_package() calls when cross compiling for Windows.
#
# The header-only libraries come from the host's Debian packages, but the cross
# compiler sees only a staging folder of links to their include folders
# (build/mingw/staged-include/{CLI,fmt,nlohmann}), never /usr/include itself.
set(DLENV_STAGED_INCLUDE ${CMAKE_BINARY_DIR}/staged-include)
file(MAKE_DIRECTORY ${DLENV_STAGED_INCLUDE})
foreach(_lib CLI fmt nlohmann)
  if(NOT EXISTS /usr/include/${_lib})
    message(FATAL_ERROR "mingw build: /usr/include/${_lib} is missing; run scripts/install-deps.sh --windows")
  endif()
  if(NOT EXISTS ${DLENV_STAGED_INCLUDE}/${_lib})
    file(CREATE_LINK /usr/include/${_lib} ${DLENV_STAGED_INCLUDE}/${_lib} SYMBOLIC)
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

# mingw g++ 12 at -O2/-O3 reports -Wmaybe-uninitialized inside fmt for a
# std::optional<int> read only under `if (opt)` (src/actions/cudnn_install.cc); the
# same GCC bug family as the -Wno-restrict / -Wno-free-nonheap-object in CMakeLists.txt.
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR}
               CALL target_compile_options dlenv_actions PRIVATE -Wno-maybe-uninitialized)
