#!/usr/bin/env python3
"""How long doctor waits for its live-probe child, for two builds run alternately.

Usage: bench/doctor_live_wait.py DLENV_A DLENV_B [RUNS]
Runs `dlenv doctor --json` RUNS times with each build, alternating, and prints the median,
p90 and max of the report's timing_ms.live_wait and how many runs waited over 10 ms (the
run_process race of 2026-12-08 made about a third of the runs wait 20 ms).
"""
import json
import statistics
import subprocess
import sys

bins = sys.argv[1:3]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 150
waits = {b: [] for b in bins}
for i in range(runs):
    for b in bins if i % 2 == 0 else bins[::-1]:
        r = subprocess.run([b, "doctor", "--json"], capture_output=True, text=True)
        waits[b].append(json.loads(r.stdout)["timing_ms"]["live_wait"])
for b in bins:
    v = sorted(waits[b])
    slow = sum(1 for x in v if x > 10)
    print(f"{b}: live_wait median {statistics.median(v):.2f} ms, p90 {v[int(0.9 * len(v))]:.2f}, "
          f"max {v[-1]:.2f}, runs > 10 ms: {slow}/{len(v)}")
