# Cross-compiling dlenv.exe for 64-bit Windows with mingw-w64 (posix threads model, so
# std::thread / std::mutex work) on Debian: `cmake --preset mingw`.
#
# Only the header-only libraries' include folders are given to the cross compiler
# (cmake/staged-deps.cmake stages links to them); never the host's /usr/include, whose
# glibc headers would silently replace the mingw ones.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(DLENV_MINGW_TRIPLE x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${DLENV_MINGW_TRIPLE}-gcc-posix)
set(CMAKE_CXX_COMPILER ${DLENV_MINGW_TRIPLE}-g++-posix)
set(CMAKE_RC_COMPILER ${DLENV_MINGW_TRIPLE}-windres)
# The 32-bit compiler builds the wrong-bitness fixture DLL (LoadLibrary error 193).
set(DLENV_MINGW32_CXX_COMPILER i686-w64-mingw32-g++-posix)

set(CMAKE_FIND_ROOT_PATH /usr/${DLENV_MINGW_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# A self-contained .exe: libstdc++, libgcc and winpthread linked in.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")

# Tests (and anything else CMake runs for the target) go through Wine. A prefix of
# our own inside the build tree keeps ~/.wine untouched; WINEDEBUG=-all keeps the
# output to the program's own; no Mono/Gecko installers are offered.
find_program(DLENV_WINE NAMES wine64 wine PATHS /usr/lib/wine)
if(DLENV_WINE)
  set(DLENV_WINE_ENV WINEPREFIX=${CMAKE_BINARY_DIR}/wineprefix WINEDEBUG=-all
      WINEDLLOVERRIDES=mscoree,mshtml=)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_COMMAND} -E env ${DLENV_WINE_ENV} ${DLENV_WINE})
endif()
set(DLENV_STAGED_HEADERS ON)
