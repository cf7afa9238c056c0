#!/bin/bash
# schedstat.sh: per-thread run time, runqueue wait and slices (/proc/PID/task/TID/schedstat) over 1 s in the middle of a 3 s wsbroadcast (1,000 subscribers), server GOMAXPROCS=1 on CPU 0, wsload on CPU 1; threads that ran over 1 ms.
cd /tmp/wsspeed
for b in ev1 gobwas-ws gorilla-ws; do
  GOMAXPROCS=1 taskset -c 0 ./$b -addr 127.0.0.1:9721 >/dev/null 2>&1 & pid=$!
  sleep 0.4
  (taskset -c 1 ./wsload -addr 127.0.0.1:9721 -workload wsbroadcast -d 3s -pid $pid > bc-$b.txt &)
  sleep 1.5
  for t in /proc/$pid/task/*; do echo "$(basename $t) $(cat $t/schedstat)"; done > s0; sleep 1
  for t in /proc/$pid/task/*; do echo "$(basename $t) $(cat $t/schedstat)"; done > s1
  echo "== $b ($(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg))"
  join s0 s1 | awk '{r=($5-$2)/1e6; if (r>1) printf "tid %s run %.0f ms, runqueue wait %.0f ms, slices %d\n", $1, r, ($6-$3)/1e6, $7-$4}'
  sleep 1.5; grep -E "deliveries/s|per message" bc-$b.txt
  kill $pid; wait $pid 2>/dev/null
done
