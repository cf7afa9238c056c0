import json,sys,statistics
d=json.load(open(sys.argv[1]))
rps={}
for r in d['runs']:
    rps[(r['workload'],r['server'],r['round'])]=r['rps']
wls=sorted({k[0] for k in rps},key=lambda w:['plaintext','json','echo','pipelined','tls','h2c','h2tls'].index(w) if w in ['plaintext','json','echo','pipelined','tls','h2c','h2tls'] else 99)
rounds=sorted({k[2] for k in rps})
def med(wl,a,b):
    xs=[rps[(wl,a,r)]/rps[(wl,b,r)] for r in rounds if (wl,a,r) in rps and (wl,b,r) in rps]
    return (statistics.median(xs),min(xs),max(xs)) if xs else None
for wl in wls:
    out=[]
    for a,b in [('riptide-mux','riptide'),('riptide-mux','fasthttp'),('riptide-mux','nethttp'),('riptide','fasthttp'),('riptide','nethttp')]:
        m=med(wl,a,b)
        if m: out.append(f"{a}/{b} {m[0]:.2f} ({m[1]:.2f}-{m[2]:.2f})")
    print(wl+": "+"; ".join(out))
