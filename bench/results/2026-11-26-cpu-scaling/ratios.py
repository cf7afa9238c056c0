#!/usr/bin/env python3
"""Per-request cost ratio -cpu 2 : -cpu 1 from run.sh's raw output (medians
over rounds): wall (2 x ns/req at -cpu 2 / ns/req at -cpu 1, the issue's
measure, which assumes both CPUs were the process's) and CPU (cpu-ns/req at
-cpu 2 / at -cpu 1, getrusage: what a request cost whatever the load)."""
import re, statistics, sys
from collections import defaultdict

def load(path):
    v = defaultdict(lambda: defaultdict(list))
    for line in open(path):
        m = re.match(r"Benchmark(\S+?)(-2)?\s+\d+\s+(.*)", line)
        if not m:
            continue
        name, cpu = m.group(1), "2" if m.group(2) else "1"
        for val, unit in re.findall(r"([\d.]+) (\S+)", m.group(3)):
            v[(name, cpu)][unit].append(float(val))
    return v

print("| benchmark | build | ns/req -cpu 1 | ns/req -cpu 2 | wall ratio (2×cpu2/cpu1) | cpu-ns/req -cpu 1 | cpu-ns/req -cpu 2 | CPU ratio | rounds |")
print("|---|---|---|---|---|---|---|---|---|")
data = {b: load(p) for b, p in (("old", sys.argv[1]), ("new", sys.argv[2]))}
for name in ("ScalePipelined", "ScaleH2/default", "ScaleH2/inline"):
    for b in ("old", "new"):
        v = data[b]
        w1, w2 = (statistics.median(v[(name, c)]["ns/req"]) for c in "12")
        c1, c2 = (statistics.median(v[(name, c)]["cpu-ns/req"]) for c in "12")
        n = len(v[(name, "1")]["ns/req"])
        print(f"| {name} | {b} | {w1:.0f} | {w2:.0f} | {2*w2/w1:.2f} | {c1:.0f} | {c2:.0f} | {c2/c1:.3f} | {n} |")
