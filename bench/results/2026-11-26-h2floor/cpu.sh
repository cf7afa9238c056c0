#!/bin/bash
# cpu.sh BIN PORT: req/s and server CPU (us/req) under h2load -c50 -m10, 3s, server on cpu0, client on cpu1
taskset -c 0 $1 -addr 127.0.0.1:$2 -profile bench -h2c >/dev/null 2>&1 &
pid=$!
sleep 0.7
t0=$(awk '{print $14+$15}' /proc/$pid/stat)
out=$(taskset -c 1 h2load -t1 -c50 -m10 -D 3 http://127.0.0.1:$2/ 2>&1)
t1=$(awk '{print $14+$15}' /proc/$pid/stat)
kill $pid; wait $pid 2>/dev/null
rps=$(echo "$out" | awk '/finished in/{print $4}')
done_=$(echo "$out" | awk '/^requests:/{print $8}')
echo "$(basename $1) rps=$rps cpu_s=$(echo "($t1-$t0)/100" | bc -l | cut -c1-5) us/req=$(echo "($t1-$t0)*10000/$done_" | bc -l | cut -c1-5)"
