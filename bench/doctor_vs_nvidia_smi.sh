#!/usr/bin/env bash
# Times `dlenv doctor --json` side by side with its peers, alternating within each round so
# that drift on a shared machine hits every command alike: `nvidia-smi --query-gpu=...`, the
# C NVML floor (bench/nvml_floor.c, built here), `python3 -S -c pass`, `dlenv --version`, and
# `doctor --json --no-live`. With a second dlenv binary, it is timed in the same rounds
# (before/after). PYTHON picks the interpreter (a pyenv shim is a script: give the real
# one). Prints medians, min, max and the ratios issue 24 asks for, then the median of every
# key of the doctor's own timing_ms.
# Usage: bench/doctor_vs_nvidia_smi.sh path/to/dlenv [path/to/other-dlenv] [ROUNDS]
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
A="$(realpath "${1:?usage: bench/doctor_vs_nvidia_smi.sh path/to/dlenv [other-dlenv] [ROUNDS]}")"
B=""
if [[ $# -ge 2 && -x "$2" ]]; then B="$(realpath "$2")"; shift; fi
ROUNDS="${2:-31}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
floor=""
if ! cc -O2 -o "$work/nvml_floor" "$here/nvml_floor.c" -ldl 2>"$work/cc.err"; then
  echo "nvml_floor: not built ($(head -1 "$work/cc.err"))"
elif ! "$work/nvml_floor" >/dev/null 2>"$work/floor.err"; then
  echo "nvml_floor: left out, it failed here ($(head -1 "$work/floor.err"))"
else
  floor="$work/nvml_floor"
fi

declare -A cmds
order=()
add() { cmds[$1]="$2"; order+=("$1"); }
add "doctor --json" "$A doctor --json"
[[ -n $B ]] && add "doctor --json (other)" "$B doctor --json"
add "doctor --json --no-live" "$A doctor --json --no-live"
command -v nvidia-smi >/dev/null &&
  add "nvidia-smi --query-gpu" "nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv"
[[ -n $floor ]] && add "nvml floor (C)" "$floor"
add "python3 -S -c pass" "${PYTHON:-python3} -S -c pass"
add "dlenv --version" "$A --version"

echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  host: $(uname -n) $(uname -r), $(nproc) cpus, rounds: $ROUNDS"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sort | uniq -c
echo "dlenv: $("$A" --version | head -1)${B:+  other: $("$B" --version | head -1)}"
for name in "${order[@]}"; do ${cmds[$name]} >/dev/null 2>&1; done  # warm the page cache
for ((r = 0; r < ROUNDS; r++)); do
  for name in "${order[@]}"; do
    t0=$(date +%s%N)
    ${cmds[$name]} >/dev/null 2>&1
    t1=$(date +%s%N)
    echo "$(((t1 - t0) / 1000))" >>"$work/${name//[^A-Za-z0-9]/_}.us"
  done
  "$A" doctor --json 2>/dev/null >"$work/report.$r.json"
done
median() { sort -n "$1" | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.1f %.1f %.1f", m/1000, a[1]/1000, a[NR]/1000}'; }
declare -A med
for name in "${order[@]}"; do
  read -r m lo hi < <(median "$work/${name//[^A-Za-z0-9]/_}.us")
  med[$name]=$m
  printf '%-28s median %8.1f ms  min %8.1f  max %8.1f\n' "$name" "$m" "$lo" "$hi"
done
ratio() { [[ -n ${med[$1]:-} && -n ${med[$2]:-} ]] && awk -v a="${med[$1]}" -v b="${med[$2]}" -v n="$1 / $2" 'BEGIN {printf "ratio %-52s %.2f\n", n, a / b}'; }
ratio "doctor --json" "nvidia-smi --query-gpu"
ratio "doctor --json" "nvml floor (C)"
ratio "doctor --json" "python3 -S -c pass"
[[ -n $B ]] && ratio "doctor --json" "doctor --json (other)"
python3 - "$work" "$ROUNDS" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
keys = {}
for r in range(rounds):
    try:
        t = json.load(open(f"{work}/report.{r}.json")).get("timing_ms", {})
    except Exception as e:
        print("report", r, "unreadable:", e); continue
    for k, v in t.items():
        if isinstance(v, (int, float)): keys.setdefault(k, []).append(v)
print("doctor timing_ms (median over rounds):",
      ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in sorted(keys.items())))
PY
