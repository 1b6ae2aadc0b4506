#!/usr/bin/env bash
# The two set-up commands of the README:
#   ./build.sh doctor   install missing build packages, build, run `dlenv doctor`
#   ./build.sh test     install missing build packages, build, run every test
#                       (and the Windows build: dlenv.exe with mingw-w64, its tests under Wine)
#                       and the release files (./build.sh package) with their tests
#                       (with the cluster tests' packages: scripts/install-deps.sh --fleet)
# Other modes: ./build.sh asan (sanitizer build + all tests), ./build.sh build,
#              ./build.sh windows (only the mingw build and the Wine suite),
#              ./build.sh package (dist/: tarball, .deb, Windows zip, wheels, SHA256SUMS)
set -euo pipefail
cd "$(dirname "$0")"
mode="${1:-doctor}"
shift || true
jobs="$(nproc 2>/dev/null || echo 2)"
scripts/install-deps.sh
# dlenv.exe cross-built with mingw-w64 (preset mingw, build/mingw) and its test suite
# run under Wine (one ctest entry per test binary, plus real LoadLibrary failures).
windows_suite() {
  scripts/install-deps.sh --windows
  cmake --preset mingw >/dev/null
  cmake --build --preset mingw -j "$jobs"
  ctest --preset mingw -j "$jobs" "$@"
}

# The release files in dist/ (scripts/package.sh): the Linux binary built against the
# Debian bullseye sysroot (glibc 2.31; scripts/make-sysroot.sh, needs root for
# debootstrap) and dlenv.exe from the mingw build.
package_release() {
  scripts/install-deps.sh --windows --package
  if [[ ! -f build/sysroot/bullseye/.dlenv-sysroot-ok ]]; then
    if [[ $(id -u) -eq 0 ]]; then scripts/make-sysroot.sh; else sudo scripts/make-sysroot.sh; fi
  fi
  cmake --preset dist >/dev/null
  cmake --build --preset dist -j "$jobs"
  cmake --preset mingw >/dev/null
  cmake --build --preset mingw -j "$jobs" --target dlenv dlenv_zip
  scripts/package.sh build/dist build/mingw dist
}

case "$mode" in
  doctor)
    cmake --preset release >/dev/null
    cmake --build --preset release -j "$jobs"
    exec build/release/dlenv doctor "$@"
    ;;
  build)
    cmake --preset dev >/dev/null
    cmake --build --preset dev -j "$jobs"
    ;;
  test)
    scripts/install-deps.sh --fleet
    cmake --preset ci >/dev/null
    cmake --build --preset ci -j "$jobs"
    ctest --preset ci -j "$jobs" "$@"
    windows_suite
    package_release
    ctest --preset dist -j "$jobs"
    ;;
  package)
    package_release
    ;;
  windows)
    windows_suite "$@"
    ;;
  asan)
    cmake --preset asan >/dev/null
    cmake --build --preset asan -j "$jobs"
    ctest --preset asan -j "$jobs" "$@"
    ;;
  *)
    echo "usage: ./build.sh [doctor|test|asan|build|windows|package] [args...]" >&2
    exit 2
    ;;
esac
