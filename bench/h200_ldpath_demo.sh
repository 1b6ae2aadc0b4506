#!/usr/bin/env bash
# The real "system cuDNN on LD_LIBRARY_PATH under a pip-wheel torch" case on the GPU
# machine: what doctor predicts from files alone, and what the process really maps
# and does (dlenv which -- python ... conv2d), with and without the variable.
# Usage: OUT=dir bench/h200_ldpath_demo.sh path/to/dlenv [SYSTEM_CUDNN_DIR]
set -uo pipefail
DLENV="$(realpath "${1:?usage: OUT=dir bench/h200_ldpath_demo.sh path/to/dlenv [DIR]}")"
SYS="${2:-/lib/x86_64-linux-gnu}"
OUT="${OUT:?set OUT}"
PY=/opt/torch/.venv/bin/python3
[[ -x "$PY" ]] || PY=python3
CONV="import torch, torch.nn.functional as F
x = F.conv2d(torch.randn(8,16,32,32,device='cuda'), torch.randn(32,16,3,3,device='cuda'))
torch.cuda.synchronize(); print('conv ok', tuple(x.shape), 'cudnn', torch.backends.cudnn.version())"
for mode in plain ldpath; do
  if [[ $mode == ldpath ]]; then export LD_LIBRARY_PATH="$SYS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; fi
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}" > "$OUT/$mode-env.txt"
  "$DLENV" doctor --python "$PY" > "$OUT/$mode-doctor.txt" 2>&1; echo "exit $?" >> "$OUT/$mode-doctor.txt"
  "$DLENV" which -- "$PY" -c "$CONV" > "$OUT/$mode-which.txt" 2>&1; echo "exit $?" >> "$OUT/$mode-which.txt"
  "$PY" -c "$CONV" > "$OUT/$mode-python.txt" 2>&1; echo "exit $?" >> "$OUT/$mode-python.txt"
done
