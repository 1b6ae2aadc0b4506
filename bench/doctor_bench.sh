#!/usr/bin/env bash
# Times `dlenv doctor --json` against `nvidia-smi -q` and
# `python -m torch.utils.collect_env` on the same machine, in one run.
# Usage: bench/doctor_bench.sh PATH/TO/dlenv [RUNS] [PYTHON]
# Prints one line per tool: runs, median ms, min ms, max ms.
set -uo pipefail
DLENV="${1:?usage: bench/doctor_bench.sh PATH/TO/dlenv [RUNS] [PYTHON]}"
RUNS="${2:-21}"
PY="${3:-python3}"

now_ns() { date +%s%N; }

# time_cmd NAME RUNS CMD...: runs CMD RUNS times (after one warm-up), prints stats.
time_cmd() {
  local name="$1" runs="$2"
  shift 2
  "$@" >/dev/null 2>&1 || true  # warm-up (page cache)
  local times=()
  for ((i = 0; i < runs; i++)); do
    local t0 t1
    t0=$(now_ns)
    "$@" >/dev/null 2>&1
    t1=$(now_ns)
    times+=($(((t1 - t0) / 1000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk -v name="$name" -v runs="$runs" '
    { a[NR] = $1 }
    END {
      med = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
      printf "%-32s runs=%-3d median_ms=%9.1f min_ms=%9.1f max_ms=%9.1f\n", name, runs, med / 1000, a[1] / 1000, a[NR] / 1000
    }'
}

echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "host: $(uname -n) $(uname -r) $(nproc) cpus"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
time_cmd "dlenv doctor --json" "$RUNS" "$DLENV" doctor --json
time_cmd "dlenv doctor (text)" "$RUNS" "$DLENV" doctor --no-color
if command -v nvidia-smi >/dev/null; then
  time_cmd "nvidia-smi -q" "$RUNS" nvidia-smi -q
  time_cmd "nvidia-smi --query-gpu" "$RUNS" nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv
fi
if "$PY" -c "import torch" >/dev/null 2>&1; then
  time_cmd "python -m torch.utils.collect_env" 5 "$PY" -m torch.utils.collect_env
else
  echo "python -m torch.utils.collect_env: torch not importable with $PY (skipped)"
fi
