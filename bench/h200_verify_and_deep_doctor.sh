#!/usr/bin/env bash
# On the GPU machine: verify (quick and full, next to PyTorch),
# doctor --deep next to collect_env, deps/load on the real cuDNN. Results in $OUT as one tgz.
set -uo pipefail
DLENV="${1:?usage: OUT=dir bench/h200_verify_and_deep_doctor.sh path/to/dlenv}"
OUT="${OUT:?set OUT}"
PY=/opt/torch/.venv/bin/python3
[[ -x "$PY" ]] || PY=python3
export PATH="$(dirname "$PY"):$PATH"
w="$OUT/r2"; mkdir -p "$w"
t() { local s=$(date +%s%N); "$@"; local rc=$?; echo "wall_ms=$(( ($(date +%s%N) - s) / 1000000 )) rc=$rc" >&2; return $rc; }
{ t "$DLENV" verify --quick; } > "$w/verify-quick.txt" 2>&1
{ t "$DLENV" verify --quick --json; } > "$w/verify-quick.json" 2> "$w/verify-quick.json.time"
for i in 1 2 3; do { t "$PY" -c "import torch; torch.zeros(1, device='cuda')"; } 2>&1 | tail -1; done > "$w/torch-zeros-time.txt"
for i in 1 2 3; do { t "$DLENV" verify --quick --json >/dev/null; } 2>&1 | tail -1; done > "$w/verify-quick-time.txt"
OUT="$w" bash "$(dirname "$0")/verify_compare.sh" "$DLENV" --full "$PY" > "$w/compare-full.txt" 2>&1
{ t "$DLENV" doctor --deep --no-color; } > "$w/doctor-deep.txt" 2>&1
{ t "$DLENV" doctor --deep --json; } > "$w/doctor-deep.json" 2> "$w/doctor-deep.json.time"
{ t "$PY" -m torch.utils.collect_env; } > "$w/collect_env.txt" 2>&1
{ t "$DLENV" deps /usr/lib/x86_64-linux-gnu/libcudnn.so.9; } > "$w/deps-system-cudnn.txt" 2>&1
{ t "$DLENV" deps "$(dirname "$PY")/../lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9"; } > "$w/deps-wheel-cudnn.txt" 2>&1
{ t "$DLENV" load libcudnn.so.9; } > "$w/load-cudnn.txt" 2>&1
{ t "$DLENV" load libcublas.so.13; } > "$w/load-cublas.txt" 2>&1
{ t "$DLENV" doctor --json; } > "$w/doctor.json" 2>&1
tar -C "$w" -czf "$OUT/verify_and_deep_doctor.tgz" . && rm -rf "$w"
