#!/usr/bin/env bash
# On the GPU machine: verify --full with fp8 and the NVML health
# line next to PyTorch; `dlenv deps` on libtorch_cuda.so against ldd (wall time, one run)
# and against what `dlenv which` sees torch really map; doctor with several
# environments present; doctor --deep.
# Usage: OUT=dir bench/h200_verify_fp8_deps_envs.sh path/to/dlenv
set -uo pipefail
DLENV="${1:?usage: OUT=dir bench/h200_verify_fp8_deps_envs.sh path/to/dlenv}"
OUT="${OUT:?set OUT}"
PY=/opt/torch/.venv/bin/python3
[[ -x "$PY" ]] || PY=python3
export PATH="$(dirname "$PY"):$PATH"
w="$OUT/r5"; mkdir -p "$w"
here="$(cd "$(dirname "$0")" && pwd)"
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

# 1. verify --full next to PyTorch (fp8 included), then a plain quick run.
OUT="$w" bash "$here/verify_compare.sh" "$DLENV" --full "$PY" > "$w/compare-full.txt" 2>&1
"$DLENV" verify --quick > "$w/verify-quick.txt" 2>&1; echo "exit $?" >> "$w/verify-quick.txt"

# 2. deps on libtorch_cuda.so vs ldd, wall time measured alternately (5 pairs).
site=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
lib="$site/torch/lib/libtorch_cuda.so"
{
  echo "file: $lib"
  for i in 1 2 3; do
    s=$(date +%s%N); ldd "$lib" > "$w/ldd.txt" 2>&1; echo "ldd wall_ms=$(ms $s)"
    s=$(date +%s%N); "$DLENV" deps "$lib" --flat > "$w/deps-flat.txt" 2>&1; echo "dlenv deps --flat wall_ms=$(ms $s)"
  done
} > "$w/deps-vs-ldd-time.txt" 2>&1
"$DLENV" deps "$lib" > "$w/deps-tree.txt" 2>&1
"$DLENV" deps "$lib" --json > "$w/deps.json" 2>&1
"$DLENV" which --json -- "$PY" -c "import torch; torch.zeros(1).cuda(); import torch.nn.functional as F; F.conv2d(torch.zeros(1,1,8,8,device='cuda'), torch.zeros(1,1,3,3,device='cuda'))" > "$w/which-torch.json" 2>"$w/which-torch.err"
"$PY" "$here/deps_vs_which.py" "$w/deps.json" "$w/which-torch.json" > "$w/deps-vs-which.txt" 2>&1

# 3. doctor with several environments: three more venvs beside torch's.
for v in a b c; do "$PY" -m venv --without-pip --system-site-packages "/tmp/dlenv-venv-$v" >/dev/null 2>&1; done
{
  for i in 1 2 3; do
    s=$(date +%s%N)
    "$DLENV" doctor --json --python /tmp/dlenv-venv-a/bin/python --python /tmp/dlenv-venv-b/bin/python \
      --python /tmp/dlenv-venv-c/bin/python > "$w/doctor-4envs.json" 2>&1
    echo "doctor (4 environments) wall_ms=$(ms $s) rc=$?"
  done
} > "$w/doctor-4envs-time.txt"
"$DLENV" doctor --python /tmp/dlenv-venv-a/bin/python > "$w/doctor.txt" 2>&1; echo "exit $?" >> "$w/doctor.txt"

# 4. doctor --deep, and collect_env for the time next to it.
s=$(date +%s%N); "$DLENV" doctor --deep > "$w/doctor-deep.txt" 2>&1; echo "doctor --deep wall_ms=$(ms $s) rc=$?" > "$w/deep-time.txt"
s=$(date +%s%N); "$PY" -m torch.utils.collect_env > "$w/collect_env.txt" 2>&1; echo "collect_env wall_ms=$(ms $s)" >> "$w/deep-time.txt"
"$DLENV" cudnn list > "$w/cudnn-list.txt" 2>&1
