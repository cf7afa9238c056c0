#!/bin/bash
# exp.sh SERVERBIN "SERVERARGS" CLIENT(rs|go) SECONDS [perf]
# server pinned CPU0 GOMAXPROCS=1, client pinned CPU1; prints client JSON, server/client CPU s, per-CPU busy
bin=$1; sargs=$2; client=$3; d=${4:-5}; perfmode=$5
B=/work/wt/h3bulk2/bench/bin
out=/tmp/h3bulk2/srv.$$.log
GOMAXPROCS=1 taskset -c 0 $B/$bin -addr 127.0.0.1:0 $sargs > $out 2>&1 &
spid=$!
for i in $(seq 50); do grep -q 'listening on' $out && break; sleep 0.1; done
addr=$(grep -o 'listening on .*' $out | awk '{print $3}')
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
snap() { grep '^cpu[01] ' /proc/stat; }
s0=$(cpu $spid); p0=$(snap); t0=$(date +%s.%N)
if [ "$perfmode" = perf ]; then perf record -F 2000 -g -o /tmp/h3bulk2/perf.$bin.data -p $spid -- sleep $d >/dev/null 2>&1 & perfpid=$!; fi
if [ $client = rs ]; then
  taskset -c 1 ${RSBIN:-$HOME/.cache/riptide-bench/h3load-rs/release/h3load-rs} -c 1 -s 1 -t 1 -d $d -expect-len 16777216 https://$addr/bulk > /tmp/h3bulk2/cl.$$.out &
  cpid=$!
  # sample client cpu just before exit
  c0=$(cpu $cpid); while kill -0 $cpid 2>/dev/null; do c1=$(cpu $cpid 2>/dev/null || echo $c1); sleep 0.2; done
  wait $cpid
fi
t1=$(date +%s.%N); s1=$(cpu $spid); p1=$(snap)
[ -n "$perfpid" ] && wait $perfpid
kill $spid; wait $spid 2>/dev/null
cat /tmp/h3bulk2/cl.$$.out
el=$(echo "$t1 - $t0" | bc)
echo "elapsed $el s; server cpu $(( s1 - s0 )) ticks; client cpu $(( c1 - c0 )) ticks (100/s, client last sample)"
paste <(echo "$p0") <(echo "$p1") | awk '{n=NF/2; u=$(n+2)-$2+$(n+3)-$3; s=$(n+4)-$4; id=$(n+5)-$5+$(n+6)-$6; si=$(n+7)-$7+$(n+8)-$8; tot=u+s+id+si; printf "%s busy %.1f%% usr %.1f sys %.1f irq+si %.1f\n", $1, 100*(tot-id)/tot, 100*u/tot, 100*s/tot, 100*si/tot}'
