#!/usr/bin/env python3
"""Per-request table of perfstat.sh's CSVs: medians over rounds of each
counter divided by the requests run (ops x requests per op)."""
import csv, glob, os, re, statistics, sys
from collections import defaultdict

d = sys.argv[1] if len(sys.argv) > 1 else "."
OPS = 40000
PER_OP = {"ScalePipelined": 16, "ScaleH2_default": 10, "ScaleH2_inline": 10}
SHORT = {"context-switches": "ctxsw", "cpu-migrations": "migr", "task-clock": "task-ms",
         "raw_syscalls:sys_enter": "syscalls", "syscalls:sys_enter_futex": "futex",
         "syscalls:sys_enter_write": "write", "syscalls:sys_enter_writev": "writev",
         "syscalls:sys_enter_read": "read", "syscalls:sys_enter_epoll_pwait": "epoll_pwait"}
vals = defaultdict(list)
for f in glob.glob(os.path.join(d, "perf_*.csv")):
    m = re.match(r"perf_(old|new)_(.+)_cpu(\d)_r\d+\.csv", os.path.basename(f))
    v, bench, cpu = m.groups()
    reqs = OPS * PER_OP[bench]
    for row in csv.reader(open(f)):
        if len(row) < 3 or row[0].startswith("#") or row[2] not in SHORT:
            continue
        try:
            x = float(row[0])
        except ValueError:
            continue
        if SHORT[row[2]] == "task-ms":
            x *= 1e6  # msec -> ns
        vals[(bench, cpu, v, SHORT[row[2]])].append(x / reqs)
cols = ["task-ms", "ctxsw", "migr", "syscalls", "futex", "read", "write", "writev", "epoll_pwait"]
print("| benchmark | -cpu | build | task-clock ns/req | " + " | ".join(c + "/req" for c in cols[1:]) + " | rounds |")
print("|---" * (len(cols) + 4) + "|")
for bench in PER_OP:
    for cpu in "12":
        for v in ("old", "new"):
            cells = []
            n = 0
            for c in cols:
                xs = vals.get((bench, cpu, v, c), [])
                n = max(n, len(xs))
                if not xs:
                    cells.append("–")
                elif c == "task-ms":
                    cells.append(f"{statistics.median(xs):.0f}")
                else:
                    cells.append(f"{statistics.median(xs):.4f}")
            print(f"| {bench} | {cpu} | {v} | " + " | ".join(cells) + f" | {n} |")
