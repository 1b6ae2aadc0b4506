#!/usr/bin/env bash
# Fails when any C++ source is not clang-format clean.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "check-format: clang-format not installed" >&2; exit 1; }
git ls-files '*.cc' '*.h' | xargs clang-format --dry-run -Werror
echo "check-format: clean"
