#!/usr/bin/env python3
"""ratios.py FILE...: medians of BenchmarkCompatVsNative ns/op and cpu-ns/op
per workload and -cpu, and the compat/native ratio of each."""
import re, statistics, sys
for path in sys.argv[1:]:
    d = {}
    for line in open(path):
        m = re.match(r'BenchmarkCompatVsNative/(\w+)/(\w+)(?:-(\d+))?\s+\d+\s+([\d.]+) ns/op\s+([\d.]+) cpu-ns/op', line)
        if m:
            wl, door, cpu = m.group(1), m.group(2), int(m.group(3) or 1)
            d.setdefault((wl, cpu, door), []).append((float(m.group(4)), float(m.group(5))))
    print(f"\n{path}: medians of n runs")
    print("| workload | -cpu | native ns/op | compat ns/op | ratio | native cpu-ns/op | compat cpu-ns/op | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for wl, cpu in sorted({(k[0], k[1]) for k in d}, key=lambda k: (['plaintext', 'pipelined', 'short'].index(k[0]) if k[0] in ('plaintext', 'pipelined', 'short') else 9, k[1])):
        n, c = d.get((wl, cpu, 'native')), d.get((wl, cpu, 'compat'))
        if not n or not c:
            continue
        med = lambda v, i: statistics.median(x[i] for x in v)
        print(f"| {wl} | {cpu} | {med(n,0):.0f} | {med(c,0):.0f} | {med(c,0)/med(n,0):.2f} | {med(n,1):.0f} | {med(c,1):.0f} | {med(c,1)/med(n,1):.2f} | (n={len(c)})")
