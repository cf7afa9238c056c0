#!/bin/bash
# syscalls.sh: strace -c -f of each server for 1 s in the middle of a 3 s wsecho (100 connections, 64 B), server GOMAXPROCS=1 on CPU 0, wsload on CPU 1.
# ev0: riptide-ws-event at 24a1c78 (before c653dbc), ev1: at c653dbc.
cd /tmp/wsspeed
for b in ev0 ev1 gobwas-ws gorilla-ws nbio-ws fasthttp-ws; do
  GOMAXPROCS=1 taskset -c 0 ./$b -addr 127.0.0.1:9801 >/dev/null 2>&1 & pid=$!
  sleep 0.5
  (taskset -c 1 ./wsload -addr 127.0.0.1:9801 -workload wsecho -d 3s -pid $pid > /tmp/wsspeed/sc-$b.load &)
  sleep 1
  echo "=== $b ($(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg))"
  timeout -s INT 1 strace -c -f -p $pid 2>&1 | grep -v "^strace:"
  sleep 2.3
  grep -E "msg/s|per message" /tmp/wsspeed/sc-$b.load
  kill $pid; wait $pid 2>/dev/null
done
