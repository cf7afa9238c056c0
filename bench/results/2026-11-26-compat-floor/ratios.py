import json,sys,statistics
d=json.load(open(sys.argv[1]))
rps={};cpu={}
for r in d['runs']:
    rps[(r['workload'],r['server'],r['round'])]=r['rps']
    cpu[(r['workload'],r['server'],r['round'])]=r.get('cpu_us_per_request')
order=['plaintext','json','echo','pipelined','tls','h2c','h2tls']
wls=[w for w in order if any(k[0]==w for k in rps)]
rounds=sorted({k[2] for k in rps})
def med(wl,a,b,t=rps):
    xs=[t[(wl,a,r)]/t[(wl,b,r)] for r in rounds if t.get((wl,a,r)) and t.get((wl,b,r))]
    return (statistics.median(xs),min(xs),max(xs)) if xs else None
pairs=[('riptide-floor','riptide'),('riptide-mux','riptide'),('riptide-mux','riptide-floor'),('riptide-floor','fasthttp'),('riptide-mux','fasthttp'),('riptide-floor','nethttp'),('riptide-mux','nethttp'),('riptide','fasthttp')]
print("| workload | "+" | ".join(f"{a}/{b}" for a,b in pairs)+" |")
print("|---"*(len(pairs)+1)+"|")
for wl in wls:
    row=[]
    for a,b in pairs:
        m=med(wl,a,b)
        row.append(f"{m[0]:.2f} ({m[1]:.2f}–{m[2]:.2f})" if m else "–")
    print(f"| {wl} | "+" | ".join(row)+" |")
print()
print("server CPU µs per request, medians over rounds:")
for wl in wls:
    row=[]
    for s in ['riptide','riptide-floor','riptide-mux','fasthttp','nethttp']:
        xs=[cpu[(wl,s,r)] for r in rounds if cpu.get((wl,s,r))]
        if xs: row.append(f"{s} {statistics.median(xs):.2f}")
    print(f"  {wl}: "+", ".join(row))
