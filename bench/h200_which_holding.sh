#!/usr/bin/env bash
# The lean collection (h200_verify_fp8_deps_envs_lean.sh)
# (verify --full with fp8 and the NVML health line next to torch's fp8 GEMM; deps on
# libtorch_cuda.so vs ldd and vs `dlenv which`; doctor with several environments),
# plus `dlenv which --holding` against a live PyTorch process and ldd/deps timed over
# more runs. Everything lands in one archive, since a device run returns at most 8 files.
# Usage: OUT=dir bench/h200_which_holding.sh path/to/dlenv
set -uo pipefail
DLENV="$(realpath "${1:?usage: OUT=dir bench/h200_which_holding.sh path/to/dlenv}")"
FINAL="${OUT:?set OUT}"
here="$(cd "$(dirname "$0")" && pwd)"
work=$(mktemp -d)
PY=/opt/torch/.venv/bin/python3
[[ -x "$PY" ]] || PY=python3
{ date -u; uname -a; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } > "$work/machine.txt" 2>&1
OUT="$work" bash "$here/h200_verify_fp8_deps_envs_lean.sh" "$DLENV"
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
site=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
lib="$site/torch/lib/libtorch_cuda.so"
# ldd and deps alternated, 11 runs each, after the lean script warmed the page cache.
{ for i in $(seq 11); do
    s=$(date +%s%N); ldd "$lib" > /dev/null 2>&1; echo "ldd $(ms $s)"
    s=$(date +%s%N); "$DLENV" deps "$lib" --flat > /dev/null 2>&1; echo "deps $(ms $s)"
    s=$(date +%s%N); "$DLENV" deps "$lib" --json > /dev/null 2>&1; echo "deps-json $(ms $s)"
  done; } > "$work/deps-vs-ldd-11.txt"
# A live PyTorch process that holds cuDNN: who holds libcudnn.so.9 right now?
"$PY" -c "import torch, torch.nn.functional as F, time
F.conv2d(torch.zeros(1,1,8,8,device='cuda'), torch.zeros(1,1,3,3,device='cuda')); print('ready', flush=True); time.sleep(30)" > "$work/holder.txt" 2>&1 &
holder=$!
for _ in $(seq 120); do grep -q ready "$work/holder.txt" 2>/dev/null && break; sleep 0.25; done
echo "holder pid $holder" >> "$work/holder.txt"
s=$(date +%s%N); "$DLENV" which --holding libcudnn.so.9 > "$work/holding.txt" 2>&1; echo "exit $? wall_ms=$(ms $s)" >> "$work/holding.txt"
"$DLENV" which --holding libcudnn_cnn.so.9 --json > "$work/holding-cnn.json" 2>&1
"$DLENV" which --pid "$holder" > "$work/which-pid.txt" 2>&1
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
# doctor with the venvs the lean script made, 11 runs for a median, and once in text.
{ for i in $(seq 11); do
    s=$(date +%s%N)
    "$DLENV" doctor --json --python /tmp/dlenv-venv-a/bin/python --python /tmp/dlenv-venv-b/bin/python \
      --python /tmp/dlenv-venv-c/bin/python > "$work/doctor-4envs.json" 2>/dev/null
    echo "doctor $(ms $s)"
  done; } > "$work/doctor-4envs-11.txt"
"$DLENV" doctor --python /tmp/dlenv-venv-a/bin/python --python /tmp/dlenv-venv-b/bin/python \
  --python /tmp/dlenv-venv-c/bin/python > "$work/doctor-4envs.txt" 2>&1
tar -C "$work" -czf "$FINAL/which_holding.tgz" .
ls -la "$work"
