#!/usr/bin/env python3
"""Writes N doctor reports (schema dlenv.report/1) of a made-up fleet for `dlenv fleet`.

Every report is a copy of a real one (default: the H200 report in docs/measurements/) with
its own host name, gpu001...gpuN, and one of three stacks:
  stack A  every node not below;
  stack B  every 8th node (8, 16, ...): another cuDNN in the system directory (9.10.2);
  stack C  node 17 of every 64 (17, 81, ...): a newer driver (580.105.08).
With --stacks 1 every node is stack A; with --stacks 2 there is no stack C.

Usage: fleet_reports.py N OUT_DIR [--stacks 1|2|3] [--jsonl] [--template FILE]
  OUT_DIR/gpuNNN.json, one report a file (pretty, as `dlenv doctor --json` writes it),
  or with --jsonl one file OUT_DIR/reports.jsonl of JSON Lines.
"""
import argparse
import copy
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TEMPLATE = os.path.join(HERE, "..", "docs", "measurements", "h200-doctor-2026-12-02.json")
NEW_DRIVER = "580.105.08"
OTHER_CUDNN = "9.10.2"


def stack_of(node, stacks):
    """0, 1 or 2 (A, B, C) for node number `node` (from 1)."""
    if stacks >= 3 and node % 64 == 17:
        return 2
    if stacks >= 2 and node % 8 == 0:
        return 1
    return 0


def set_fact(obj, key, value):
    if isinstance(obj.get(key), dict) and "value" in obj[key]:
        obj[key]["value"] = value


def make_report(template, host, stack):
    r = copy.deepcopy(template)
    set_fact(r["host"], "hostname", host)
    if stack == 2:
        d = r["driver"]
        d["version"] = NEW_DRIVER
        for key in ("kernel_module_version", "sys_module_version", "nvml_driver_version"):
            set_fact(d, key, NEW_DRIVER)
    if stack == 1:
        system = [c for c in r["cudnn"] if not c.get("python_site")]
        if not system:
            sys.exit("fleet_reports: the template has no system cuDNN to change")
        for key in ("library_version", "header_version", "live_version"):
            set_fact(system[0], key, OTHER_CUDNN)
    return r


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("count", type=int)
    p.add_argument("out_dir")
    p.add_argument("--stacks", type=int, choices=(1, 2, 3), default=3)
    p.add_argument("--jsonl", action="store_true", help="one reports.jsonl (JSON Lines)")
    p.add_argument("--template", default=DEFAULT_TEMPLATE)
    a = p.parse_args()
    with open(a.template, encoding="utf-8") as f:
        template = json.load(f)
    if template.get("schema") != "dlenv.report/1":
        sys.exit(f"fleet_reports: {a.template} is not a dlenv.report/1 report")
    os.makedirs(a.out_dir, exist_ok=True)
    width = max(3, len(str(a.count)))
    # One serialized report per stack, the host name substituted by text: 10 000 reports
    # in seconds, not a deepcopy and a dump each.
    marker = "@@HOST@@"
    texts = {}
    lines = []
    for node in range(1, a.count + 1):
        stack = stack_of(node, a.stacks)
        if stack not in texts:
            r = make_report(template, marker, stack)
            texts[stack] = (json.dumps(r) + "\n") if a.jsonl else (json.dumps(r, indent=2) + "\n")
        host = f"gpu{node:0{width}d}"
        text = texts[stack].replace(marker, host)
        if a.jsonl:
            lines.append(text)
        else:
            with open(os.path.join(a.out_dir, host + ".json"), "w", encoding="utf-8") as f:
                f.write(text)
    if a.jsonl:
        with open(os.path.join(a.out_dir, "reports.jsonl"), "w", encoding="utf-8") as f:
            f.writelines(lines)


if __name__ == "__main__":
    main()
