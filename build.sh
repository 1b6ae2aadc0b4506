#!/usr/bin/env bash
# The two set-up commands of the README:
#   ./build.sh doctor   install missing build packages, build, run `dlenv doctor`
#   ./build.sh test     install missing build packages, build, run every test
# Other modes: ./build.sh asan (sanitizer build + all tests), ./build.sh build
set -euo pipefail
cd "$(dirname "$0")"
mode="${1:-doctor}"
shift || true
jobs="$(nproc 2>/dev/null || echo 2)"
scripts/install-deps.sh
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
    cmake --preset ci >/dev/null
    cmake --build --preset ci -j "$jobs"
    ctest --preset ci -j "$jobs" "$@"
    ;;
  asan)
    cmake --preset asan >/dev/null
    cmake --build --preset asan -j "$jobs"
    ctest --preset asan -j "$jobs" "$@"
    ;;
  *)
    echo "usage: ./build.sh [doctor|test|asan|build] [args...]" >&2
    exit 2
    ;;
esac
