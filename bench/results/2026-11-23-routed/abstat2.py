import sys,re,statistics as st
rows=[dict(kv.split('=') for kv in l.split()) for l in open(sys.argv[1]) if l.startswith('round=')]
by={}
for r in rows: by.setdefault(r['round'],{})[r['server']]=r
def med(xs): return st.median(xs)
for a,b in [(sys.argv[2],sys.argv[4]),(sys.argv[3],sys.argv[4]),(sys.argv[2],sys.argv[3])]:
    rr=[float(v[a]['rps'])/float(v[b]['rps']) for v in by.values() if a in v and b in v]
    cc=[float(v[b]['cpu_us'])/float(v[a]['cpu_us']) for v in by.values() if a in v and b in v]
    print("%s/%s: rps ratio median %.3f (min %.2f max %.2f, n=%d); cpu/req ratio (%s cpu / %s cpu) median %.3f"%(a,b,med(rr),min(rr),max(rr),len(rr),b,a,med(cc)))
for s in sys.argv[2:5]:
    print(s,"median rps %.0f cpu_us %.2f"%(med([float(r['rps']) for r in rows if r['server']==s]),med([float(r['cpu_us']) for r in rows if r['server']==s])))
print("load", [r['load'] for r in rows][::3])
