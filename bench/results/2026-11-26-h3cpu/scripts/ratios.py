import json,statistics as S,sys
d=json.load(open(sys.argv[1]))
by={}
for x in d['runs']:
    by.setdefault((x['workload'],x['round']),{})[x['server']]=x
for w in ('h3','h3bulk'):
    print('==',w)
    servers=[s for s in ('riptide-h3','riptide-h3-compat','quicgo-bare','quicgo-h3')]
    for s in servers:
        cpu=[];rps=[];cr=[];rr=[]
        for (ww,rd),m in sorted(by.items()):
            if ww!=w or s not in m: continue
            q=m['quicgo-h3']
            cpu.append(m[s]['cpu_us_per_request']); rps.append(m[s]['rps'] if w=='h3' else m[s]['mb_per_s'])
            cr.append(m[s]['cpu_us_per_request']/q['cpu_us_per_request']); rr.append((m[s]['rps']/q['rps']) if w=='h3' else m[s]['mb_per_s']/q['mb_per_s'])
        f=lambda l: ' '.join('%.2f'%v for v in l)
        print(f"{s:18s} cpu/req {f(cpu)} (median {S.median(cpu):.2f}); cpu ratio x quicgo-h3 {f(cr)} median {S.median(cr):.2f}; {'rps' if w=='h3' else 'MB/s'} ratio {f(rr)} median {S.median(rr):.2f}")
