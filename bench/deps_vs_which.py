#!/usr/bin/env python3
"""Compares what `dlenv deps FILE --json` resolves (static, the loader model) with what
`dlenv which --json -- CMD` saw the process really map, for every library both name.
Usage: deps_vs_which.py deps.json which.json"""
import json
import os
import sys

deps = json.load(open(sys.argv[1]))
which = json.load(open(sys.argv[2]))


def real(p):
    return os.path.realpath(p) if p else p


mapped = {}
for lib in which.get("libraries", []):
    mapped[os.path.basename(lib["path"])] = lib["path"]
    if lib.get("soname"):
        mapped[lib["soname"]] = lib["path"]

same = differ = static_only = 0
print(f"{'library':34} {'dlenv deps (static)':60} verdict")
seen = set()
for o in deps["objects"]:
    name = o["name"]
    if name in seen or o.get("same_as") is not None:
        continue
    seen.add(name)
    path = o.get("path")
    if name not in mapped:
        static_only += 1
        continue
    ok = real(path) == real(mapped[name])
    same += ok
    differ += not ok
    tag = "same file" if ok else f"DIFFERENT: process mapped {mapped[name]}"
    kind = " (run-time companion)" if o.get("companion") else ""
    print(f"{name:34} {str(path):60} {tag}{kind}")
print(f"\n{same} resolved to the file the process mapped, {differ} differ; "
      f"{static_only} resolved statically but not mapped by this command "
      f"(companions loaded only by other operations, or libraries it never needed)")
