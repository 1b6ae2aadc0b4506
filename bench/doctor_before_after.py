#!/usr/bin/env python3
"""`dlenv doctor --json` of two builds, run alternately on this machine.

Usage: bench/doctor_before_after.py BEFORE_DLENV AFTER_DLENV [RUNS [DOCTOR_ARG...]]
(DOCTOR_ARGs follow `doctor --json`, e.g. --no-live.)
Prints the median and minimum wall time of each (the first run of each dropped: a cold
cache), their ratio, and the medians of the report's own timing_ms phases. On a shared
machine only the ratio of the two, measured in the same run, means anything.
"""
import json
import statistics
import subprocess
import sys
import time

before, after = sys.argv[1], sys.argv[2]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 81
extra = sys.argv[4:]
bins = [("before", before), ("after", after)]
wall = {k: [] for k, _ in bins}
phases = {k: {} for k, _ in bins}
for i in range(runs):
    for name, exe in (bins if i % 2 == 0 else list(reversed(bins))):
        t = time.perf_counter()
        r = subprocess.run([exe, "doctor", "--json", *extra], capture_output=True, text=True)
        wall[name].append((time.perf_counter() - t) * 1000)
        for key, v in json.loads(r.stdout).get("timing_ms", {}).items():
            if isinstance(v, (int, float)):
                phases[name].setdefault(key, []).append(v)
for name, exe in bins:
    v = wall[name][1:]
    print(f"{name} ({exe}): median {statistics.median(v):.1f} ms, min {min(v):.1f} ms, n={len(v)}")
b, a = (statistics.median(wall[n][1:]) for n, _ in bins)
print(f"after/before (median wall) = {a / b:.3f}")
for key in ("wall", "total", "loader", "live_wait", "cudnn", "python", "driver_files", "system"):
    if key in phases["before"] and key in phases["after"]:
        pb, pa = statistics.median(phases["before"][key]), statistics.median(phases["after"][key])
        print(f"  timing_ms.{key:14s} before {pb:7.2f}  after {pa:7.2f}")
