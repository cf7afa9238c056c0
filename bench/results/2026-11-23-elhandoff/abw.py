import re,sys,statistics as st
# abw.py FILE A/B ... : per-workload (== headers) medians of per-round ratios
secs={}; cur=None
for l in open(sys.argv[1]):
    if l.startswith('=='): cur=l.strip('= \n'); secs[cur]={}; continue
    m=re.match(r'round=(\d+) (\S+) rps=([\d.]+) cpu_us_per_req=([\d.]+) load1=([\d.]+)',l)
    if m: secs[cur].setdefault(int(m[1]),{})[m[2]]=(float(m[3]),float(m[4]),float(m[5]))
for w,d in secs.items():
    rounds=[r for r in d.values()]
    loads=[x[2] for r in rounds for x in r.values()]
    print(f"{w}: {len(rounds)} rounds, load {min(loads):.1f}-{max(loads):.1f}")
    for a,b in [p.split('/') for p in sys.argv[2:]]:
        rr=[r[a][0]/r[b][0] for r in rounds if a in r and b in r]; cr=[r[a][1]/r[b][1] for r in rounds if a in r and b in r]
        if not rr: continue
        print(f'  {a}/{b}: CPU/req ratio median {st.median(cr):.2f} ({" ".join(f"{x:.2f}" for x in cr)}); rps ratio median {st.median(rr):.2f} ({" ".join(f"{x:.2f}" for x in rr)})')
