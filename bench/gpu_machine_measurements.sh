#!/usr/bin/env bash
# The measurements that need the GPU machine, in one call (its time is scarce):
#   1. doctor before/after the live-probe isolation (bench/doctor_isolation.sh BEFORE AFTER)
#   2. verify with its GPU work in a child vs in dlenv's own process, alternating, and one
#      `verify --full --json` in the child (its 32 GiB data cap under the full problem sizes)
#   3. `dlenv fleet` over 10 000 reports on two cores (bench/fleet_bench.sh under taskset)
# Usage: bench/gpu_machine_measurements.sh BEFORE/dlenv AFTER/dlenv OUTDIR [RUNS=21]
# Writes OUTDIR/{isolation,verify,fleet}.txt, verify-*.{txt,json}, doctor.{txt,json}.
set -uo pipefail
before="${1:?usage: bench/gpu_machine_measurements.sh BEFORE/dlenv AFTER/dlenv OUTDIR [RUNS]}"
after="${2:?usage: bench/gpu_machine_measurements.sh BEFORE/dlenv AFTER/dlenv OUTDIR [RUNS]}"
out="${3:?usage: bench/gpu_machine_measurements.sh BEFORE/dlenv AFTER/dlenv OUTDIR [RUNS]}"
runs="${4:-21}"
here=$(dirname "$(realpath "$0")")
mkdir -p "$out"

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  "$after" --version | head -n1
} >"$out/machine.txt"

"$after" doctor >"$out/doctor.txt" 2>&1
"$after" doctor --json >"$out/doctor.json" 2>/dev/null
bash "$here/doctor_isolation.sh" "$before" "$after" "$runs" >"$out/isolation.txt" 2>&1

ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }
{
  echo "verify (quick): wall ms, child vs --in-process, alternating, after one warm-up each"
  "$after" verify >/dev/null 2>&1
  "$after" verify --in-process >/dev/null 2>&1
  for i in 1 2 3 4 5; do
    t=$(date +%s%N); "$after" verify >"$out/verify-child.txt" 2>&1; rc_c=$?; c=$(ms_since "$t")
    t=$(date +%s%N); "$after" verify --in-process >"$out/verify-inproc.txt" 2>&1; rc_i=$?
    p=$(ms_since "$t")
    echo "run $i: child ${c} ms (exit $rc_c)  in-process ${p} ms (exit $rc_i)"
  done
  "$after" verify --json >"$out/verify-child.json" 2>"$out/verify-child.err"
  echo "verify --json exit $?"
  t=$(date +%s%N)
  "$after" verify --full --json >"$out/verify-full.json" 2>"$out/verify-full.err"
  echo "verify --full --json (child): exit $?, $(ms_since "$t") ms"
} >"$out/verify.txt" 2>&1

if command -v taskset >/dev/null; then
  taskset -c 0,1 bash "$here/fleet_bench.sh" "$after" 10000 5 >"$out/fleet.txt" 2>&1
else
  bash "$here/fleet_bench.sh" "$after" 10000 5 >"$out/fleet.txt" 2>&1
fi
echo "done: $(date -u +%H:%M:%S)" >>"$out/machine.txt"
