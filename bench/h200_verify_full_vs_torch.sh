#!/usr/bin/env bash
# On the GPU machine: verify --full next to PyTorch (bench/verify_compare.sh) and
# the quick-mode wall time (with its phase timings) next to PyTorch's first CUDA tensor.
# Usage: OUT=dir bench/h200_verify_full_vs_torch.sh path/to/dlenv
set -uo pipefail
DLENV="${1:?usage: OUT=dir bench/h200_verify_full_vs_torch.sh path/to/dlenv}"
OUT="${OUT:?set OUT}"
PY=/opt/torch/.venv/bin/python3
[[ -x "$PY" ]] || PY=python3
export PATH="$(dirname "$PY"):$PATH"
w="$OUT/r4"; mkdir -p "$w"
t() { local s=$(date +%s%N); "$@"; local rc=$?; echo "wall_ms=$(( ($(date +%s%N) - s) / 1000000 )) rc=$rc" >&2; return $rc; }
for i in 1 2 3; do
  { t "$PY" -c "import torch; torch.zeros(1, device='cuda')"; } 2>&1 | tail -1
  { t "$DLENV" verify --quick --json > "$w/quick-$i.json"; } 2>&1 | tail -1
done > "$w/quick-vs-torch-time.txt"
OUT="$w" bash "$(dirname "$0")/verify_compare.sh" "$DLENV" --full "$PY" > "$w/compare-full.txt" 2>&1
tar -C "$w" -czf "$OUT/verify_full_vs_torch.tgz" . && rm -rf "$w"
