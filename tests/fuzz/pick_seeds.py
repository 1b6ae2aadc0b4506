#!/usr/bin/env python3
"""Picks a few new seeds from a grown libFuzzer corpus.

    tests/fuzz/pick_seeds.py FUZZER SEED_DIR GROWN_DIR N [--copy]

Runs FUZZER -merge=1 -use_counters=0 (coverage edges only, not hit counts) of
GROWN_DIR into a scratch copy of SEED_DIR, reads the merge control file, and
greedily picks at most N grown inputs, each the one adding the most edges not
yet covered by SEED_DIR and the inputs picked before it (the smaller on ties).
Prints one line per pick and a summary; with --copy, copies each pick into
SEED_DIR as fuzz-<first 12 hex digits of its name>.
"""
import os
import shutil
import subprocess
import sys
import tempfile


def main() -> int:
    args = [a for a in sys.argv[1:] if a != "--copy"]
    if len(args) != 4:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    fuzzer, seed_dir, grown_dir, limit = args[0], args[1], args[2], int(args[3])
    with tempfile.TemporaryDirectory() as tmp:
        merged = os.path.join(tmp, "merged")
        shutil.copytree(seed_dir, merged)
        ctl = os.path.join(tmp, "control.txt")
        subprocess.run([fuzzer, "-merge=1", "-use_counters=0", f"-merge_control_file={ctl}",
                        merged, grown_dir], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        lines = open(ctl).read().split("\n")
        nfiles, nfirst = int(lines[0]), int(lines[1])
        names = lines[2:2 + nfiles]
        cov = {}
        for line in lines[2 + nfiles:]:
            parts = line.split()
            if parts and parts[0] == "COV":
                cov[int(parts[1])] = set(parts[2:])
    seed_cov = set().union(*(cov.get(i, set()) for i in range(nfirst)))
    cands = {i: cov.get(i, set()) - seed_cov for i in range(nfirst, nfiles)}
    grown_new = set().union(*cands.values()) if cands else set()
    covered, picked = set(), []
    while len(picked) < limit and cands:
        best = max(cands, key=lambda i: (len(cands[i] - covered), -os.path.getsize(names[i])))
        gain = len(cands[best] - covered)
        if gain == 0:
            break
        covered |= cands.pop(best)
        picked.append(best)
        print(f"{names[best]}\t{os.path.getsize(names[best])} bytes\t+{gain} edges")
    print(f"seeds cover {len(seed_cov)} edges; the grown corpus adds {len(grown_new)}; "
          f"{len(picked)} picks add {len(covered)}")
    if "--copy" in sys.argv:
        for i in picked:
            shutil.copy(names[i], os.path.join(seed_dir, "fuzz-" + os.path.basename(names[i])[:12]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
