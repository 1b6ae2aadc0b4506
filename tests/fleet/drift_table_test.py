#!/usr/bin/env python3
"""`dlenv fleet` over 64 generated reports of three stacks (bench/fleet_reports.py): the
drift table groups them as generated, from a directory and from JSON Lines on stdin.

Usage: drift_table_test.py DLENV SOURCE_DIR   (prints the drift table it checked)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

dlenv, source = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)


def fleet(*args, stdin=None):
    return subprocess.run([dlenv, "fleet", *args], input=stdin, capture_output=True, text=True,
                          timeout=60)


tmp = tempfile.mkdtemp(prefix="fleet64.", dir=os.environ.get("DLENV_TEST_TMP"))
try:
    generator = os.path.join(source, "bench", "fleet_reports.py")
    subprocess.run([sys.executable, generator, "64", os.path.join(tmp, "dir")], check=True)
    subprocess.run([sys.executable, generator, "64", os.path.join(tmp, "lines"), "--jsonl"],
                   check=True)

    text = fleet(os.path.join(tmp, "dir"))
    print(text.stdout)
    check(text.returncode == 1, f"not uniform: exit 1, got {text.returncode}: {text.stderr}")
    check(text.stdout.startswith("3 stacks across 64 nodes\n"), "header line")
    check("Not uniform: driver, kernel module, cuDNN copies differ" in text.stdout,
          "the drifting fields named")

    # As generated: node 17 (new driver), every 8th node (other cuDNN), the other 55.
    expected = [
        (["gpu017"], "gpu017", "580.105.08", "9.14.0 (CUDA 13)"),
        ([f"gpu{n:03d}" for n in range(8, 65, 8)], "gpu[008,016,024,032,040,048,056,064]",
         "580.159.04", "9.10.2 (CUDA 13)"),
        ([f"gpu{n:03d}" for n in range(1, 65) if n % 8 and n != 17],
         "gpu[001-007,009-015,018-023,025-031,033-039,041-047,049-055,057-063]", "580.159.04",
         "9.14.0 (CUDA 13)"),
    ]
    for label, args, stdin in (("dir", [os.path.join(tmp, "dir")], None),
                               ("stdin", ["-"], open(os.path.join(tmp, "lines", "reports.jsonl"),
                                                     encoding="utf-8").read())):
        r = fleet("--json", *args, stdin=stdin)
        check(r.returncode == 1, f"{label}: exit 1 with --json, got {r.returncode}")
        j = json.loads(r.stdout)
        s = j["summary"]
        check((s["nodes"], s["stacks"], s["uniform"], s["skipped"]) == (64, 3, False, 0),
              f"{label}: summary {s}")
        check(s["drift"] == ["driver", "kernel_module", "cudnn"], f"{label}: drift {s['drift']}")
        check(len(j["stacks"]) == 3, f"{label}: 3 stacks")
        for got, (nodes, hostlist, driver, cudnn) in zip(j["stacks"], expected):
            check(got["nodes"] == nodes, f"{label}: nodes of the stack {hostlist}: {got['nodes']}")
            check(got["hostlist"] == hostlist, f"{label}: hostlist {got['hostlist']} != {hostlist}")
            check(got["node_count"] == len(nodes), f"{label}: node_count of {hostlist}")
            check(got["driver"] == driver, f"{label}: driver of {hostlist}: {got['driver']}")
            check(cudnn in got["cudnn"], f"{label}: cuDNN of {hostlist}: {got['cudnn']}")

    allowed = fleet("--allow-drift", os.path.join(tmp, "dir"))
    check(allowed.returncode == 0, f"--allow-drift and no error finding: exit 0, got "
          f"{allowed.returncode}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("fleet drift table: 64 reports, 3 stacks grouped as generated (directory and stdin)")
