import json,sys,statistics as st
for path in sys.argv[1:]:
    runs=json.load(open(path+'/results.json'))['runs']
    by={}
    for r in runs: by[(r['workload'],r['round'],r['server'])]=r
    for w in ('h2c','h2tls'):
        rows=[]
        for rd in sorted({r['round'] for r in runs}):
            g=lambda s:by.get((w,rd,s))
            if not g('riptide-mux'): continue
            m,f,n,h=g('riptide-mux'),g('riptide-floor'),g('riptide'),g('nethttp')
            rows.append((m['rps']/n['rps'], f['rps']/n['rps'], m['rps']/f['rps'], m['rps']/h['rps'], m['cpu_us_per_request']/f['cpu_us_per_request']))
        med=[st.median(c) for c in zip(*rows)]
        print(path, w, 'rounds', len(rows), 'median mux/native %.2f floor/native %.2f mux/floor %.2f mux/nethttp %.2f cpu mux/floor %.2f' % tuple(med))
        for r in rows: print('   ', ' '.join('%.2f'%x for x in r))
