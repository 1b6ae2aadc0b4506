#!/usr/bin/env bash
# Runs dlenv for real on a GPU machine and collects everything under $OUT:
# doctor outputs, the timing benchmark, and the ground truth to compare against
# (nvidia-smi, torch's own view, collect_env, where the cuDNN copies are).
# Usage: OUT=dir bench/h200_collect.sh path/to/dlenv
set -uo pipefail
DLENV="${1:?usage: OUT=dir bench/h200_collect.sh path/to/dlenv}"
OUT="${OUT:?set OUT}"
mkdir -p "$OUT"
PY="$(command -v python3 || command -v python)"
for p in python3 python; do
  if command -v "$p" >/dev/null && "$p" -c 'import torch' 2>/dev/null; then PY="$(command -v "$p")"; break; fi
done
{
  date -u; uname -a; cat /etc/os-release | head -3; nproc
  echo "--- /proc/driver/nvidia/version"; cat /proc/driver/nvidia/version
  echo "--- nvidia-smi"; nvidia-smi
  echo "--- python: $PY"
  "$PY" -c 'import torch,sys; print(sys.version); print(torch.__file__, torch.__version__, torch.version.cuda, torch.backends.cudnn.version())' 2>&1
  echo "--- libcudnn copies"; find / -xdev \( -name 'libcudnn.so*' -o -name 'cudnn_version*.h' \) 2>/dev/null | xargs ls -la 2>/dev/null
  echo "--- ld cache"; ldconfig -p | grep -E 'cudnn|libcuda|nvidia-ml|cublas' | head -30
  echo "--- env"; env | grep -E 'CUDA|LD_|PATH|CONDA|VIRTUAL' | sort
} > "$OUT/ground_truth.txt" 2>&1
"$DLENV" doctor --no-color > "$OUT/doctor.txt" 2>&1; echo "exit=$?" >> "$OUT/doctor.txt"
"$DLENV" doctor --json > "$OUT/doctor.json" 2> "$OUT/doctor.json.err"
"$DLENV" doctor --markdown > "$OUT/doctor.md" 2>&1
"$DLENV" doctor -v --no-color > "$OUT/doctor-verbose.txt" 2>&1
"$DLENV" doctor --no-live --no-color > "$OUT/doctor-nolive.txt" 2>&1
"$PY" -m torch.utils.collect_env > "$OUT/collect_env.txt" 2>&1
mkdir -p "$OUT/proc"; cp -r /proc/driver/nvidia/gpus "$OUT/proc/" 2>/dev/null; cp /proc/driver/nvidia/version "$OUT/proc/" 2>/dev/null
bash "$(dirname "$0")/doctor_bench.sh" "$DLENV" 31 "$PY" > "$OUT/bench.txt" 2>&1
# Everything in one archive (the device hands back a limited number of files).
tar -C "$OUT" -czf "$OUT/../h200-results.tgz" . && rm -rf "${OUT:?}"/* && mv "$OUT/../h200-results.tgz" "$OUT/"
