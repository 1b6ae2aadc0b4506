#!/usr/bin/env bash
# `dlenv doctor --json` against `python3 -S -c pass` on this machine (no --root), in one
# alternating run (doctor, python, python, doctor, ...: a shared machine's load falls on
# both), then, where Debian's hyperfine is installed, hyperfine over the same two commands.
# Prints the medians and the doctor/python ratio.
# PYTHON: the interpreter (default: the real executable behind `python3`, not a pyenv shim,
# which is a shell script).
# Usage: bench/doctor_vs_python_startup.sh PATH/TO/dlenv [RUNS]
set -euo pipefail
DLENV="${1:?usage: bench/doctor_vs_python_startup.sh PATH/TO/dlenv [RUNS]}"
RUNS="${2:-31}"
PY="${PYTHON:-$(python3 -c 'import sys; print(sys.executable)')}"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "host: $(uname -n) $(uname -r) $(nproc) cpus; $("$PY" --version 2>&1) at $PY"
python3 - "$DLENV" "$RUNS" "$PY" <<'PY'
import os, statistics, subprocess, sys, time
dlenv, runs, py = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cmds = {"dlenv doctor --json": [dlenv, "doctor", "--json"],
        "python3 -S -c pass": [py, "-S", "-c", "pass"]}
names = list(cmds)
for n in names:  # warm-up
    subprocess.run(cmds[n], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
t = {n: [] for n in names}
for r in range(runs):
    for n in (names if r % 2 == 0 else names[::-1]):
        t0 = time.perf_counter()
        subprocess.run(cmds[n], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t[n].append(time.perf_counter() - t0)
for n in names:
    v = sorted(t[n])
    print(f"{n:24s} runs={runs} median_ms={statistics.median(v) * 1e3:8.2f} "
          f"min_ms={v[0] * 1e3:8.2f} max_ms={v[-1] * 1e3:8.2f}")
d, p = (statistics.median(t[n]) for n in names)
print(f"doctor/python (medians): {d / p:.2f}")
PY
if command -v hyperfine >/dev/null; then
  hyperfine -N --warmup 3 --runs "$RUNS" --style basic "$DLENV doctor --json" "$PY -S -c pass"
else
  echo "hyperfine: not installed (apt-get install hyperfine)"
fi
