import sys, re, statistics, collections
# ratio2.py file... : medians per workload/door/cpu of ns/op and cpu-ns/op, and compat/native ratios
for f in sys.argv[1:]:
    d = collections.defaultdict(lambda: ([], []))
    for line in open(f):
        m = re.match(r'BenchmarkCompatVsNative/(\w+)/(\w+?)(?:-(\d+))?\s+\d+\s+([\d.]+) ns/op\s+([\d.]+) cpu-ns/op', line)
        if m:
            k = (m.group(1), m.group(2), int(m.group(3) or 1))
            d[k][0].append(float(m.group(4))); d[k][1].append(float(m.group(5)))
    print(f"\n{f}: medians of n runs")
    print("| workload | -cpu | native ns/op | compat ns/op | ratio | native cpu-ns/op | compat cpu-ns/op | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for wl in ("plaintext", "pipelined"):
        for cpu in (1, 2, 4, 8):
            n, c = d.get((wl, "native", cpu)), d.get((wl, "compat", cpu))
            if not n or not c: continue
            mn, mc = statistics.median(n[0]), statistics.median(c[0])
            cn, cc = statistics.median(n[1]), statistics.median(c[1])
            print(f"| {wl} | {cpu} | {mn:.0f} | {mc:.0f} | {mc/mn:.2f} | {cn:.0f} | {cc:.0f} | {cc/cn:.2f} | (n={len(n[0])})")
