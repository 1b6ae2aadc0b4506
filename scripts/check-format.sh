#!/usr/bin/env bash
# Fails when any C++ source is not clang-format clean (fuzz seeds under tests/fuzz/corpus/
# are input bytes, not sources: kept exactly as they are).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "check-format: clang-format not installed" >&2; exit 1; }
git ls-files '*.cc' '*.h' ':!:tests/fuzz/corpus/**' | xargs clang-format --dry-run -Werror
echo "check-format: clean"
