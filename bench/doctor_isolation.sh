#!/usr/bin/env bash
# The cost of running the live probes in a child process (issue 20): `dlenv doctor --json`
# of a build without the isolation (BEFORE) and one with it (AFTER), run alternately on the
# same machine so that drift hits both alike, after one warm-up each.
# Usage: bench/doctor_isolation.sh BEFORE/dlenv AFTER/dlenv [RUNS]
# Prints, per binary: runs, median/min/max wall ms; then AFTER's median timing_ms.live_wait
# (how long doctor waited for the child after its file probes) and live_children.
set -uo pipefail
BEFORE="${1:?usage: bench/doctor_isolation.sh BEFORE/dlenv AFTER/dlenv [RUNS]}"
AFTER="${2:?usage: bench/doctor_isolation.sh BEFORE/dlenv AFTER/dlenv [RUNS]}"
RUNS="${3:-21}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

now_ns() { date +%s%N; }
one() {  # one BIN OUTFILE: appends the wall time in microseconds
  local t0 t1
  t0=$(now_ns)
  "$1" doctor --json >"$TMP/last.json" 2>/dev/null
  t1=$(now_ns)
  echo $(((t1 - t0) / 1000)) >>"$2"
}
stats() {  # stats NAME FILE
  sort -n "$2" | awk -v name="$1" '
    { a[NR] = $1 }
    END {
      med = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
      printf "%-8s runs=%-3d median_ms=%8.1f min_ms=%8.1f max_ms=%8.1f\n", name, NR, med / 1000, a[1] / 1000, a[NR] / 1000
    }'
}

echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "host: $(uname -n) $(uname -r) $(nproc) cpus"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "command: $BEFORE doctor --json  vs  $AFTER doctor --json, $RUNS runs each, alternating"
"$BEFORE" doctor --json >/dev/null 2>&1
"$AFTER" doctor --json >/dev/null 2>&1
for ((i = 0; i < RUNS; i++)); do
  one "$BEFORE" "$TMP/before"
  one "$AFTER" "$TMP/after"
  python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["timing_ms"]; print(t.get("live_wait", -1), t.get("live_children", -1))' \
    "$TMP/last.json" >>"$TMP/live" 2>/dev/null || true
done
stats before "$TMP/before"
stats after "$TMP/after"
sort -n "$TMP/live" | awk '{ w[NR] = $1; c[NR] = $2 } END {
  if (NR) printf "after: median timing_ms.live_wait=%.1f live_children=%s\n", w[int((NR + 1) / 2)], c[1] }'
