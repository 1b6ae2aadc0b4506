#!/usr/bin/env bash
# Round 7 on the GPU machine: `dlenv deps` against ldd on torch's libtorch_cuda.so
# (and the wheel's / the system's libcudnn.so.9), the new build and, when given,
# an older one in the same run; deps' own phase times; deps against what a real
# PyTorch process mapped (`dlenv which`); where cuDNN keeps its dlopen names.
# Usage: OUT=dir bench/h200_round7.sh path/to/dlenv [path/to/old-dlenv] [N]
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
mkdir -p "$OUT/new"
OUT="$OUT/new" "$here/h200_deps_vs_ldd.sh" "$DLENV" "$N" > /dev/null 2>&1
if [[ -n "$OLD" ]]; then
  mkdir -p "$OUT/old"
  OUT="$OUT/old" "$here/h200_deps_vs_ldd.sh" "$(realpath "$OLD")" "$N" > /dev/null 2>&1
fi
for i in 1 2 3 4 5; do
  "$DLENV" deps "$lib" --json > "$OUT/deps.json" 2>/dev/null
  python3 -c "import json,sys; print({k: round(v, 2) for k, v in json.load(open(sys.argv[1]))['timing_ms'].items()})" "$OUT/deps.json"
done > "$OUT/deps-timing.txt" 2>&1
"$DLENV" which --json -- "$PY" -c "import torch, torch.nn.functional as F; F.conv2d(torch.zeros(1,1,8,8,device='cuda'), torch.zeros(1,1,3,3,device='cuda')); torch.zeros(8,8,device='cuda') @ torch.zeros(8,8,device='cuda')" > "$OUT/which-torch.json" 2> "$OUT/which-torch.err"
"$PY" "$here/deps_vs_which.py" "$OUT/deps.json" "$OUT/which-torch.json" > "$OUT/deps-vs-which.txt" 2>&1
{ for f in "$site"/nvidia/cudnn/lib/libcudnn*.so.9; do
    echo "== $f $(stat -c %s "$f")"
    grep -abo 'libcublasLt\.so\.[0-9.]*\|libnvrtc\.so\.[0-9.]*' "$f" | head -5
    readelf -SW "$f" | grep -E '\.l?rodata|\.dynstr'
  done; } > "$OUT/cudnn-strings.txt" 2>&1
cat "$OUT/new/deps-vs-ldd-summary.txt" "$OUT/deps-timing.txt"
[[ -n "$OLD" ]] && cat "$OUT/old/deps-vs-ldd-summary.txt"
tail -2 "$OUT/deps-vs-which.txt"
