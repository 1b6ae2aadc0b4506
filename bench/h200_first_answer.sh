#!/usr/bin/env bash
# On the GPU machine: what issue 24's first answers cost. doctor --json alternating with
# nvidia-smi and the NVML floor (bench/doctor_vs_nvidia_smi.sh), then `verify --quick --json`
# three times with its per-step timing (step_ms) and the wall clock including process start,
# and whether `perf` is there for a profile. With a second binary, doctor is timed for both.
# Usage: OUT=dir bench/h200_first_answer.sh path/to/dlenv [path/to/other-dlenv]
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
DLENV="$(realpath "${1:?usage: OUT=dir bench/h200_first_answer.sh path/to/dlenv [other]}")"
OTHER="${2:-}"
OUT="${OUT:?set OUT}"
source "$here/h200_common.sh"
PYTHON="$PY" bash "$here/doctor_vs_nvidia_smi.sh" "$DLENV" $OTHER 31 >"$OUT/doctor_vs_nvidia_smi.txt" 2>&1
for i in 1 2 3; do
  s=$(date +%s%N)
  "$DLENV" verify --quick --json >"$OUT/verify-quick.$i.json" 2>"$OUT/verify-quick.$i.err"
  echo "run $i: rc=$? wall_ms=$(ms "$s")" >>"$OUT/verify-quick-wall.txt"
done
"$PY" - "$OUT" >"$OUT/verify-steps.txt" 2>&1 <<'PYEOF'
import json, sys, statistics
out = sys.argv[1]
runs = [json.load(open(f"{out}/verify-quick.{i}.json")) for i in (1, 2, 3)]
names = [s[0] if isinstance(s, list) else s["step"] for s in runs[0]["step_ms"]]
def ms(run, i):
    s = run["step_ms"][i]
    return s[1] if isinstance(s, list) else s["ms"]
print(f"{'step':44s} " + " ".join(f"run{i+1:>8}" for i in range(3)) + "   median")
for i, n in enumerate(names):
    v = [ms(r, i) for r in runs]
    print(f"{n:44s} " + " ".join(f"{x:11.1f}" for x in v) + f" {statistics.median(v):8.1f}")
print("wall_ms", [r.get("wall_ms") for r in runs])
print("timing_ms", json.dumps(runs[0].get("timing_ms"), indent=None))
PYEOF
command -v perf >"$OUT/perf.txt" 2>&1 || echo "perf: not installed" >"$OUT/perf.txt"
