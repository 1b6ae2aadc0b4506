#!/usr/bin/env python3
"""Times `dlenv doctor --json --root TREE --os linux` on generated trees (bench/scaling_tree.py)
for two builds, alternating them run by run, and checks that their reports are the same.

For each tree: the median wall time and the largest max-RSS of each build over RUNS runs
(one warm-up run of each first), the after/before ratio, and whether the two JSON reports
are identical once `timing_ms` is removed. Then the scaling figures of the second build
(time at N environments over time at 1) and an SVG of time against environments
(no plotting library: the SVG is written here).

Usage: bench/doctor_scaling.py BEFORE AFTER [--runs 11] [--envs 1,10,100,300]
         [--copies 1,10] [--gpus 8,64] [--work /tmp/dlenv-scale] [--svg FILE] [--keep]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def strip_timing(j):
    if isinstance(j, dict):
        return {k: strip_timing(v) for k, v in j.items() if k != "timing_ms"}
    if isinstance(j, list):
        return [strip_timing(x) for x in j]
    return j


def run_once(cmd):
    """Wall seconds and max RSS (KiB) of one run; stdout kept."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - t0, ru.ru_maxrss, out


def doctor_cmd(binary, root):
    return [binary, "doctor", "--json", "--root", root, "--os", "linux", "--env-file",
            os.path.join(root, "env")]


def measure(builds, root, runs):
    """Alternating runs of each build on one tree: {build: (median_s, max_rss_kib, report)}."""
    times = {b: [] for b in builds}
    rss = {b: 0 for b in builds}
    reports = {}
    for b in builds:  # warm-up: page cache, and the report to compare
        _, _, out = run_once(doctor_cmd(b, root))
        reports[b] = out
    for r in range(runs):
        order = builds if r % 2 == 0 else list(reversed(builds))
        for b in order:
            t, m, _ = run_once(doctor_cmd(b, root))
            times[b].append(t)
            rss[b] = max(rss[b], m)
    return {b: (statistics.median(times[b]), rss[b], reports[b]) for b in builds}


def same_report(a, b):
    try:
        return strip_timing(json.loads(a)) == strip_timing(json.loads(b))
    except json.JSONDecodeError:
        return False


def svg_plot(series, path, title):
    """series: [(label, colour, [(envs, ms)])]: a log-log plot of time against environments."""
    import math
    W, H, L, R, T, B = 640, 400, 70, 170, 40, 50
    xs = [x for _, _, pts in series for x, _ in pts]
    ys = [y for _, _, pts in series for _, y in pts]
    x0, x1 = math.log10(min(xs)), math.log10(max(xs))
    y0 = math.floor(math.log10(min(ys)))
    y1 = math.ceil(math.log10(max(ys)))
    if x1 == x0:
        x1 = x0 + 1

    def px(x):
        return L + (math.log10(x) - x0) / (x1 - x0) * (W - L - R)

    def py(y):
        return H - B - (math.log10(y) - y0) / (y1 - y0) * (H - T - B)

    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
         f'viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="{W / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>']
    for e in range(y0, y1 + 1):
        for m in (1, 2, 5):
            v = m * 10 ** e
            if v < 10 ** y0 or v > 10 ** y1:
                continue
            y = py(v)
            o.append(f'<line x1="{L}" y1="{y:.1f}" x2="{W - R}" y2="{y:.1f}" stroke="#ddd"/>')
            o.append(f'<text x="{L - 6}" y="{y + 4:.1f}" text-anchor="end">{v:g}</text>')
    for x in sorted(set(xs)):
        X = px(x)
        o.append(f'<line x1="{X:.1f}" y1="{T}" x2="{X:.1f}" y2="{H - B}" stroke="#ddd"/>')
        o.append(f'<text x="{X:.1f}" y="{H - B + 16}" text-anchor="middle">{x}</text>')
    o.append(f'<text x="{(L + W - R) / 2}" y="{H - 12}" text-anchor="middle">'
             'Python environments (log scale)</text>')
    o.append(f'<text x="16" y="{(T + H - B) / 2}" text-anchor="middle" '
             f'transform="rotate(-90 16 {(T + H - B) / 2})">doctor --json, median ms (log scale)'
             '</text>')
    o.append(f'<rect x="{L}" y="{T}" width="{W - L - R}" height="{H - T - B}" fill="none" '
             'stroke="black"/>')
    for k, (label, colour, pts) in enumerate(series):
        pts = sorted(pts)
        d = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
        o.append(f'<polyline points="{d}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for x, y in pts:
            o.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{colour}"/>')
        ly = T + 14 + 18 * k
        o.append(f'<line x1="{W - R + 10}" y1="{ly}" x2="{W - R + 30}" y2="{ly}" '
                 f'stroke="{colour}" stroke-width="2"/>')
        o.append(f'<text x="{W - R + 36}" y="{ly + 4}">{label}</text>')
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--envs", default="1,10,100,300")
    ap.add_argument("--copies", default="", help="environment counts for --files copy trees")
    ap.add_argument("--gpus", default="8,64", help="GPU counts (the first at every env count, "
                    "the others at the largest)")
    ap.add_argument("--work", default="/tmp/dlenv-scale")
    ap.add_argument("--svg", default="")
    ap.add_argument("--keep", action="store_true", help="keep the generated trees")
    a = ap.parse_args()
    builds = [os.path.abspath(a.before), os.path.abspath(a.after)]
    envs = [int(x) for x in a.envs.split(",") if x]
    copies = [int(x) for x in a.copies.split(",") if x]
    gpus = [int(x) for x in a.gpus.split(",") if x]
    print(f"date: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}")
    print(f"host: {os.uname().nodename} {os.uname().release} {os.cpu_count()} cpus")
    print(f"before: {builds[0]}\nafter:  {builds[1]}\nruns per build per tree: {a.runs} "
          "(alternating)")
    trees = [(n, "link", gpus[0]) for n in envs]
    trees += [(max(envs), "link", g) for g in gpus[1:]]
    trees += [(n, "copy", gpus[0]) for n in copies]
    rows = []
    print(f"{'envs':>5} {'files':>5} {'gpus':>4} {'before_ms':>10} {'after_ms':>10} "
          f"{'after/before':>12} {'before_MB':>9} {'after_MB':>8} same_report")
    for n, mode, g in trees:
        root = os.path.join(a.work, f"envs{n}-{mode}-gpus{g}")
        subprocess.run([sys.executable, os.path.join(HERE, "scaling_tree.py"), root, "--envs",
                        str(n), "--gpus", str(g), "--files", mode], check=True,
                       stdout=subprocess.DEVNULL)
        m = measure(builds, root, a.runs)
        (tb, rb, jb), (ta, ra, ja) = m[builds[0]], m[builds[1]]
        same = same_report(jb, ja)
        rows.append((n, mode, g, tb, ta, rb, ra, same))
        print(f"{n:>5} {mode:>5} {g:>4} {tb * 1e3:>10.1f} {ta * 1e3:>10.1f} {ta / tb:>12.3f} "
              f"{rb / 1024:>9.1f} {ra / 1024:>8.1f} {'yes' if same else 'NO'}", flush=True)
        if not a.keep:
            shutil.rmtree(root)
    base = {r[1]: r for r in rows if r[0] == min(envs) and r[2] == gpus[0]}
    print("scaling (time at N environments / time at the smallest count, same files mode):")
    for n, mode, g, tb, ta, rb, ra, same in rows:
        b = base.get(mode)
        if not b or g != gpus[0]:
            continue
        print(f"  {mode} {n:>4} envs: before {tb / b[3]:6.2f}x  after {ta / b[4]:6.2f}x")
    if a.svg:
        pts_b = [(r[0], r[3] * 1e3) for r in rows if r[1] == "link" and r[2] == gpus[0]]
        pts_a = [(r[0], r[4] * 1e3) for r in rows if r[1] == "link" and r[2] == gpus[0]]
        series = [("before (hard links)", "#c0392b", pts_b),
                  ("after (hard links)", "#2471a3", pts_a)]
        cb = [(r[0], r[3] * 1e3) for r in rows if r[1] == "copy"]
        ca = [(r[0], r[4] * 1e3) for r in rows if r[1] == "copy"]
        if len(ca) > 1:
            series += [("before (copies)", "#e59866", cb), ("after (copies)", "#7fb3d5", ca)]
        svg_plot(series, a.svg, f"dlenv doctor --json --root, {gpus[0]} GPUs, 10 toolkits, "
                 "20 cuDNN copies")
        print(f"svg: {a.svg}")
    if not all(r[7] for r in rows):
        print("the two builds' reports differ (timing_ms removed) on some tree")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
