# The Linux release binary, built against the Debian bullseye sysroot (glibc 2.31) that
# scripts/make-sysroot.sh makes, so that it starts on every glibc >= 2.31: Ubuntu 20.04 and
# 22.04, Debian 11 and 12, RHEL/Rocky 9, Colab, the nvidia/cuda and pytorch images.
# `cmake --preset dist` (./build.sh package).
#
# The compiler is this machine's g++ (C++23), with its libstdc++ and libgcc linked
# statically; glibc's headers, crt files and libc.so come from the sysroot. The few glibc
# symbols newer than 2.31 that the static libstdc++/libgcc_eh reference are defined in the
# binary (src/platform/glibc_baseline_symbols_exe.cc); anything else newer fails the link.
if(NOT DLENV_SYSROOT)
  set(DLENV_SYSROOT ${CMAKE_CURRENT_LIST_DIR}/../build/sysroot/bullseye)
endif()
get_filename_component(DLENV_SYSROOT ${DLENV_SYSROOT} ABSOLUTE)
if(NOT EXISTS ${DLENV_SYSROOT}/.dlenv-sysroot-ok)
  message(FATAL_ERROR "no glibc 2.31 sysroot at ${DLENV_SYSROOT}: run scripts/make-sysroot.sh")
endif()
set(DLENV_GLIBC_BASELINE 2.31)
set(DLENV_STAGED_HEADERS ON)

set(CMAKE_SYSROOT ${DLENV_SYSROOT})
# g++ searches its own install's lib dirs (this machine's /usr/lib/x86_64-linux-gnu, with
# the newer libc.so and crt1.o) before the sysroot's: -B and -L put the sysroot's first.
set(_multiarch ${DLENV_SYSROOT}/usr/lib/x86_64-linux-gnu)
# -s: the release binary carries no symbol table (1.1 MB of 8.7 MB); .dynsym stays.
set(CMAKE_EXE_LINKER_FLAGS_INIT
    "-B${_multiarch} -L${_multiarch} -L${DLENV_SYSROOT}/lib/x86_64-linux-gnu -s")
set(CMAKE_SHARED_LINKER_FLAGS_INIT ${CMAKE_EXE_LINKER_FLAGS_INIT})

set(CMAKE_FIND_ROOT_PATH ${DLENV_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
