#!/bin/bash
# ab.sh ROUNDS PATH DUR NAME1 "BIN1 ARGS" ... : interleaved wrk -t1 -c${C:-50}
rounds=$1; path=$2; dur=$3; shift 3
names=(); cmds=()
while [ $# -gt 0 ]; do names+=("$1"); cmds+=("$2"); shift 2; done
k=${#names[@]}
C=${C:-50}
for r in $(seq 1 $rounds); do
  for j in $(seq 0 $((k-1))); do
    i=$(( (j + r) % k ))
    port=$((19000 + RANDOM % 900))
    ${cmds[$i]} -addr 127.0.0.1:$port -profile bench >/dev/null 2>&1 &
    pid=$!
    sleep 0.4
    wrk -t1 -c$C -d1s http://127.0.0.1:$port$path >/dev/null
    s0=$(awk '{print $14+$15}' /proc/$pid/stat)
    out=$(wrk -t1 -c$C -d$dur http://127.0.0.1:$port$path)
    s1=$(awk '{print $14+$15}' /proc/$pid/stat)
    kill -TERM $pid; wait $pid 2>/dev/null
    rps=$(echo "$out" | awk '/Requests\/sec/{print $2}')
    reqs=$(echo "$out" | awk '/requests in/{print $1}')
    echo "round=$r ${names[$i]} rps=$rps cpu_us_per_req=$(echo "($s1-$s0)*10000/$reqs" | bc -l | cut -c1-5) load1=$(cut -d' ' -f1 /proc/loadavg)"
  done
done
