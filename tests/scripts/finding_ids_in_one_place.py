#!/usr/bin/env python3
"""Where finding ids are named in the sources (issue 21): a ratchet.

Every id is an entry of kb/findings.json and code names it as FindingId::<id with _>. This
fails when a finding id is written as a string literal in a non-test source, or when more
ids are named in several non-test files than the limit below (the number when this test was
written: lower it as checks move into one file per finding, never raise it).
Usage: finding_ids_in_one_place.py REPO
"""
import collections
import glob
import json
import os
import re
import sys

# Ids named (as FindingId::x) in more than one non-test source file (37 on 2026-12-06, 25 on
# 2026-12-08 once the --deep error signatures moved into the catalog, 15 once each finding's
# checks shared one file: the rest are dlenv verify's live detections, in src/gpu).
MAX_IN_SEVERAL_FILES = 15

repo = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ids = {f["id"] for f in json.load(open(os.path.join(repo, "kb", "findings.json"), encoding="utf-8"))["findings"]}
files = collections.defaultdict(set)
strings = []
for path in sorted(glob.glob(os.path.join(repo, "src", "*", "*.cc")) + glob.glob(os.path.join(repo, "src", "*", "*.h"))):
    name = os.path.basename(path)
    if "_test" in name or "test_support" in name:
        continue
    text = open(path, encoding="utf-8").read()
    rel = os.path.relpath(path, repo)
    for m in re.finditer(r'"([a-z0-9.-]+)"', text):
        if m.group(1) in ids:
            strings.append(f"{rel}:{text.count(chr(10), 0, m.start()) + 1}: \"{m.group(1)}\"")
    for m in re.finditer(r"FindingId::(\w+)", text):
        files[m.group(1)].add(rel)
several = {k: sorted(v) for k, v in files.items() if len(v) > 1}
ok = True
if strings:
    ok = False
    print("finding ids written as strings (use FindingId::...):")
    print("\n".join("  " + s for s in strings))
print(f"{len(files)} ids named in the sources, {len(several)} of them in more than one file "
      f"(limit {MAX_IN_SEVERAL_FILES})")
if len(several) > MAX_IN_SEVERAL_FILES:
    ok = False
    for k, v in sorted(several.items()):
        print(f"  {k}: {', '.join(v)}")
sys.exit(0 if ok else 1)
