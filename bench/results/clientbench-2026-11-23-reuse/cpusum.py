import sys, statistics as st, collections
rows=[l.split() for l in open(sys.argv[1]) if l.strip()]
d=collections.defaultdict(list)
for r,b,srv,bench,ms,ns,load in rows:
    d[(srv,bench,b)].append(int(ns))
# per-round ratios
byround=collections.defaultdict(dict)
for r,b,srv,bench,ms,ns,load in rows:
    byround[(srv,bench,r)][b]=int(ns)
print("%-9s %-14s %8s %8s %8s | %-16s %-16s %-16s" % ("server","bench","old","main","new","main/old","new/old","new/main"))
for srv in ("loopback","inproc"):
    for bench in ("SequentialGET","GETHeaders","POST1K"):
        med={b:st.median(d[(srv,bench,b)]) for b in ("old","main","new")}
        rat={}
        for num,den in (("main","old"),("new","old"),("new","main")):
            rs=sorted(v[num]/v[den] for (s,be,r),v in byround.items() if s==srv and be==bench and num in v and den in v)
            rat[(num,den)]="%.3f [%.3f-%.3f]"%(st.median(rs),rs[0],rs[-1])
        print("%-9s %-14s %8d %8d %8d | %-16s %-16s %-16s"%(srv,bench,med["old"],med["main"],med["new"],rat[("main","old")],rat[("new","old")],rat[("new","main")]))
print("rounds:",len(set(r[0] for r in rows)),"load avg (1 min) range: %s-%s"%(min(float(r[6]) for r in rows),max(float(r[6]) for r in rows)))
