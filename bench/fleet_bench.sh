#!/usr/bin/env bash
# `dlenv fleet` over N generated reports (bench/fleet_reports.py: three stacks, each report a
# copy of the real H200 report): wall time and peak RSS, RUNS times each, for a directory of
# N files and for N JSON Lines on stdin. The issue's bar: 10 000 reports in < 1 s on 2 cores,
# memory bounded.
#
# Usage: bench/fleet_bench.sh DLENV [N=10000] [RUNS=5]
set -euo pipefail
dlenv=$(realpath "$1")
n=${2:-10000}
runs=${3:-5}
here=$(dirname "$(realpath "$0")")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 "$here/fleet_reports.py" "$n" "$tmp/dir"
python3 "$here/fleet_reports.py" "$n" "$tmp/lines" --jsonl
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)," \
  "$(uname -sr); $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "reports: $n files, $(du -sh "$tmp/dir" | cut -f1) on disk;" \
  "JSON Lines $(du -h "$tmp/lines/reports.jsonl" | cut -f1)"

# Prints "wall_s max_rss_kib cpu_s" (user + system) of one run; fleet exits 1 on a non-uniform fleet (expected).
# GNU time where it is installed, else the same three figures from Python's os.wait4 (the GPU
# machine has no /usr/bin/time); its peak RSS then includes the forked Python's (~7 MiB).
measure() {
  if [[ -x /usr/bin/time ]]; then
    /usr/bin/time -f '%e %M %U %S' -o "$tmp/time" "$@" >"$tmp/out" 2>/dev/null || true
    tail -1 "$tmp/time" | awk '{ print $1, $2, $3 + $4 }'  # (after "Command exited ... 1")
  else
    python3 - "$tmp/out" "$@" <<'PY'
import os, subprocess, sys, time
t0 = time.monotonic()
with open(sys.argv[1], "wb") as out:
    p = subprocess.Popen(sys.argv[2:], stdout=out, stderr=subprocess.DEVNULL)
    _, _, r = os.wait4(p.pid, 0)  # this child's own usage (RUSAGE_CHILDREN holds more)
wall = time.monotonic() - t0
print(f"{wall:.3f} {r.ru_maxrss} {r.ru_utime + r.ru_stime:.3f}")
PY
  fi
}

for form in dir stdin; do
  for fmt in text json; do
    flag=(); [[ $fmt == json ]] && flag=(--json)
    walls=(); rss=(); cpus=()
    for ((i = 0; i < runs; i++)); do
      if [[ $form == dir ]]; then
        read -r w m c < <(measure "$dlenv" fleet "${flag[@]}" "$tmp/dir")
      else
        read -r w m c < <(measure sh -c '"$1" fleet $2 - < "$3"' _ "$dlenv" "${flag[*]}" \
          "$tmp/lines/reports.jsonl")
      fi
      walls+=("$w"); rss+=("$m"); cpus+=("$c")
    done
    head -1 "$tmp/out" | sed "s/^/  ($form, $fmt) first line: /"
    printf '%s\n' "${walls[@]}" | sort -n | awk -v form="$form" -v fmt="$fmt" -v runs="$runs" \
      -v rss="$(printf '%s\n' "${rss[@]}" | sort -n | tail -1)" \
      -v cpu="$(printf '%s\n' "${cpus[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')" \
      '{ a[NR] = $1 } END { printf "%-5s %-4s runs %d  wall median %.2f s (min %.2f, max %.2f)  CPU median %.2f s  peak RSS %.1f MiB\n", form, fmt, runs, a[int((NR + 1) / 2)], a[1], a[NR], cpu, rss / 1024 }'
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
