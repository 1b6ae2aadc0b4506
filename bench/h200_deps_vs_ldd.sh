#!/usr/bin/env bash
# `dlenv deps` against ldd on the same files, alternated, N runs each (default 11):
# torch's libtorch_cuda.so (pip layout, $ORIGIN RPATHs), the wheel's and the system's
# libcudnn.so.9. `ldd -r` (which also checks every symbol, as deps does) for reference.
# Usage: OUT=dir bench/h200_deps_vs_ldd.sh path/to/dlenv [N]
set -uo pipefail
DLENV="$(realpath "${1:?usage: OUT=dir bench/h200_deps_vs_ldd.sh path/to/dlenv [N]}")"
N="${2:-11}"
OUT="${OUT:?set OUT}"
# shellcheck source=bench/h200_common.sh
source "$(dirname "$0")/h200_common.sh"
for lib in "$site/torch/lib/libtorch_cuda.so" "$site/nvidia/cudnn/lib/libcudnn.so.9" /lib/x86_64-linux-gnu/libcudnn.so.9; do
  [[ -e "$lib" ]] || continue
  echo "file: $lib"
  ldd "$lib" > /dev/null 2>&1; "$DLENV" deps "$lib" --flat > /dev/null 2>&1   # warm the page cache
  for i in $(seq "$N"); do
    s=$(date +%s%N); ldd "$lib" > /dev/null 2>&1; echo "ldd $(ms $s)"
    s=$(date +%s%N); "$DLENV" deps "$lib" --flat > /dev/null 2>&1; echo "deps $(ms $s)"
    s=$(date +%s%N); "$DLENV" deps "$lib" --json > /dev/null 2>&1; echo "deps-json $(ms $s)"
    s=$(date +%s%N); ldd -r "$lib" > /dev/null 2>&1; echo "ldd-r $(ms $s)"
  done
done > "$OUT/deps-vs-ldd.txt" 2>&1
"$DLENV" deps "$site/torch/lib/libtorch_cuda.so" > "$OUT/deps-torch-tree.txt" 2>&1
ldd -r "$site/torch/lib/libtorch_cuda.so" > "$OUT/ldd-r-torch.txt" 2>&1
python3 - "$OUT/deps-vs-ldd.txt" <<'PY' > "$OUT/deps-vs-ldd-summary.txt"
import sys, statistics
cur, data = None, {}
for line in open(sys.argv[1]):
    if line.startswith("file: "):
        cur = line[6:].strip(); data[cur] = {}
        continue
    k, v = line.split()
    data[cur].setdefault(k, []).append(float(v))
for f, d in data.items():
    print(f)
    for k, v in d.items():
        print(f"  {k:10} n={len(v):3} median {statistics.median(v):6.1f} ms  min {min(v):.1f}  max {max(v):.1f}")
PY
cat "$OUT/deps-vs-ldd-summary.txt"
