#!/usr/bin/env bash
# On the GPU machine: `dlenv verify` with the cuDNN work
# (convolutions, activations, LSTM/GRU) quick and full next to PyTorch doing the same
# through the same libraries, the quick-mode wall time next to PyTorch's first CUDA
# tensor, and verify on the system cuDNN. Results in $OUT as one tgz.
# Usage: OUT=dir bench/h200_verify_dnn_vs_torch.sh path/to/dlenv
set -uo pipefail
DLENV="${1:?usage: OUT=dir bench/h200_verify_dnn_vs_torch.sh path/to/dlenv}"
OUT="${OUT:?set OUT}"
PY=/opt/torch/.venv/bin/python3
[[ -x "$PY" ]] || PY=python3
export PATH="$(dirname "$PY"):$PATH"
w="$OUT/r3"; mkdir -p "$w"
t() { local s=$(date +%s%N); "$@"; local rc=$?; echo "wall_ms=$(( ($(date +%s%N) - s) / 1000000 )) rc=$rc" >&2; return $rc; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw --format=csv > "$w/gpu.csv" 2>&1
{ t "$DLENV" verify --quick; } > "$w/verify-quick.txt" 2>&1
for i in 1 2 3; do { t "$PY" -c "import torch; torch.zeros(1, device='cuda')"; } 2>&1 | tail -1; done > "$w/torch-zeros-time.txt"
for i in 1 2 3; do { t "$DLENV" verify --quick --json >/dev/null; } 2>&1 | tail -1; done > "$w/verify-quick-time.txt"
OUT="$w" bash "$(dirname "$0")/verify_compare.sh" "$DLENV" --full "$PY" > "$w/compare-full.txt" 2>&1
{ t "$DLENV" verify --quick --libs toolkit; } > "$w/verify-quick-toolkit.txt" 2>&1
{ t "$DLENV" verify --quick --libs /lib/x86_64-linux-gnu; } > "$w/verify-quick-system-dir.txt" 2>&1
{ t "$DLENV" which -- "$PY" -c "import torch; torch.zeros(1, device='cuda'); import torch.nn.functional as F; F.conv2d(torch.zeros(1,1,8,8,device='cuda'), torch.zeros(1,1,3,3,device='cuda'))"; } > "$w/which-torch.txt" 2>&1
{ t "$DLENV" cudnn list; } > "$w/cudnn-list.txt" 2>&1
{ t "$DLENV" doctor --no-color; } > "$w/doctor.txt" 2>&1
tar -C "$w" -czf "$OUT/verify_dnn_vs_torch.tgz" . && rm -rf "$w"
