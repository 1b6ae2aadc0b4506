#!/usr/bin/env bash
# On the GPU machine: process start-up floor (/bin/true, a C++ hello, dlenv
# --version), `dlenv deps` against ldd on torch's libtorch_cuda.so (new build and,
# when given, an older one, in the same run), deps' timeline (--trace) and phase
# times, deps against what a real PyTorch process mapped (`dlenv which`), and where
# cuDNN keeps its dlopen names (what the earlier bench/h200_round7.sh did, folded in here).
# Usage: OUT=dir bench/h200_startup_and_deps.sh path/to/dlenv [path/to/old-dlenv] [N]
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
DLENV="$(realpath "$1")"
OLD="${2:-}"
N="${3:-21}"
OUT="${OUT:?set OUT}"
# shellcheck source=bench/h200_common.sh
source "$here/h200_common.sh"
lib="$site/torch/lib/libtorch_cuda.so"
{ date -u; uname -r; nproc; grep -m1 "model name" /proc/cpuinfo; "$DLENV" --version; } > "$OUT/machine.txt" 2>&1
for i in $(seq "$N"); do
  s=$(date +%s%N); /bin/true; echo "true $(ms $s)"
  s=$(date +%s%N); "$DLENV" --version > /dev/null; echo "dlenv-version $(ms $s)"
  s=$(date +%s%N); "$DLENV" deps --help > /dev/null; echo "dlenv-deps-help $(ms $s)"
  s=$(date +%s%N); /lib64/ld-linux-x86-64.so.2 --list "$lib" > /dev/null 2>&1; echo "ld.so-list $(ms $s)"
done > "$OUT/startup.txt" 2>&1
mkdir -p "$OUT/new"
OUT="$OUT/new" "$here/h200_deps_vs_ldd.sh" "$DLENV" "$N" > /dev/null 2>&1
if [[ -n "$OLD" ]]; then
  mkdir -p "$OUT/old"
  OUT="$OUT/old" "$here/h200_deps_vs_ldd.sh" "$(realpath "$OLD")" "$N" > /dev/null 2>&1
fi
for i in 1 2 3; do
  "$DLENV" deps "$lib" --json --trace > "$OUT/deps-trace-$i.json" 2>/dev/null
  "$DLENV" deps "$lib" --trace 2>/dev/null | sed -n '/^trace/,$p' > "$OUT/deps-trace-$i.txt"
done
for i in 1 2 3 4 5; do
  "$DLENV" deps "$lib" --json > "$OUT/deps.json" 2>/dev/null
  python3 -c "import json,sys; print({k: round(v, 2) for k, v in json.load(open(sys.argv[1]))['timing_ms'].items()})" "$OUT/deps.json"
done > "$OUT/deps-timing.txt" 2>&1
"$DLENV" which --json -- "$PY" -c "import torch, torch.nn.functional as F; F.conv2d(torch.zeros(1,1,8,8,device='cuda'), torch.zeros(1,1,3,3,device='cuda')); torch.zeros(8,8,device='cuda') @ torch.zeros(8,8,device='cuda')" > "$OUT/which-torch.json" 2> "$OUT/which-torch.err"
"$PY" "$here/deps_vs_which.py" "$OUT/deps.json" "$OUT/which-torch.json" > "$OUT/deps-vs-which.txt" 2>&1
# Where cuDNN keeps the sonames it dlopens (the sections deps scans).
{ for f in "$site"/nvidia/cudnn/lib/libcudnn*.so.9; do
    echo "== $f $(stat -c %s "$f")"
    grep -abo 'libcublasLt\.so\.[0-9.]*\|libnvrtc\.so\.[0-9.]*' "$f" | head -5
    readelf -SW "$f" | grep -E '\.l?rodata|\.dynstr'
  done; } > "$OUT/cudnn-strings.txt" 2>&1
python3 - "$OUT/startup.txt" <<'PY' > "$OUT/startup-summary.txt"
import sys, statistics
d = {}
for line in open(sys.argv[1]):
    k, v = line.split()
    d.setdefault(k, []).append(float(v))
for k, v in d.items():
    print(f"  {k:16} n={len(v):3} median {statistics.median(v):6.1f} ms  min {min(v):.1f}  max {max(v):.1f}")
PY
cat "$OUT/startup-summary.txt" "$OUT/new/deps-vs-ldd-summary.txt" "$OUT/deps-timing.txt"
[[ -n "$OLD" ]] && cat "$OUT/old/deps-vs-ldd-summary.txt"
tail -2 "$OUT/deps-vs-which.txt"
# Everything in one file: the device run returns only a few files.
tar -C "$OUT" -czf "$OUT.tar.gz" . && rm -rf "${OUT:?}"/*
