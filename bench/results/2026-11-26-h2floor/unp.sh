#!/bin/bash
# unp.sh BIN PORT: as the harness (no pinning): req/s, server CPU s, h2load CPU s, server threads
$1 -addr 127.0.0.1:$2 -profile bench -h2c >/dev/null 2>&1 &
pid=$!
sleep 0.7
t0=$(awk '{print $14+$15}' /proc/$pid/stat)
out=$( { /usr/bin/time -f "lg_cpu %U %S" h2load -t1 -c50 -m10 -D 3 http://127.0.0.1:$2/ ; } 2>&1)
t1=$(awk '{print $14+$15}' /proc/$pid/stat)
th=$(ls /proc/$pid/task | wc -l)
cs=$(awk '/ctxt/{s+=$2} END{print s}' /proc/$pid/status)
kill $pid; wait $pid 2>/dev/null
echo "$(basename $1) rps=$(echo "$out" | awk '/finished in/{print $4}') srv_cpu=$(echo "($t1-$t0)/100" | bc -l | cut -c1-4) $(echo "$out" | grep lg_cpu) threads=$th ctxsw=$cs"
