import re,sys,statistics as st
d={}
for l in open(sys.argv[1]):
    m=re.match(r'round=(\d+) (\S+) rps=([\d.]+) cpu_us_per_req=([\d.]+)',l)
    if m: d.setdefault(int(m[1]),{})[m[2]]=(float(m[3]),float(m[4]))
names=sorted({n for r in d.values() for n in r})
print("server       median rps  median CPU µs/req")
for n in names: print(f"{n:12s} {st.median(r[n][0] for r in d.values()):10.0f}  {st.median(r[n][1] for r in d.values()):6.2f}")
for a,b in [p.split('/') for p in sys.argv[2:]]:
    rr=[r[a][0]/r[b][0] for r in d.values()]; cr=[r[a][1]/r[b][1] for r in d.values()]
    print(f'{a}/{b}: rps ratio median {st.median(rr):.2f} (rounds {", ".join(f"{x:.2f}" for x in rr)}); CPU/req ratio median {st.median(cr):.2f}')
