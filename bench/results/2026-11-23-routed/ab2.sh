#!/bin/bash
# ab.sh ROUNDS SECS PROFILE PATH ENGINEARGS : interleaved rounds over riptide-old, riptide-new, fasthttp
rounds=$1; secs=$2; prof=$3; path=$4; shift 4
servers=(${SERVERS:-riptide-old riptide-new fasthttp})
for r in $(seq 1 $rounds); do
  for k in 0 1 2; do
    i=$(( (k + r) % 3 )); s=${servers[$i]}
    port=$((19000 + RANDOM % 900))
    /tmp/rt/bin/$s -addr 127.0.0.1:$port -profile $prof "$@" >/dev/null 2>&1 &
    pid=$!; sleep 0.3
    wrk -t1 -c50 -d1s http://127.0.0.1:$port$path >/dev/null
    s0=$(awk '{print $14+$15}' /proc/$pid/stat)
    out=$(wrk -t1 -c50 -d${secs}s http://127.0.0.1:$port$path)
    s1=$(awk '{print $14+$15}' /proc/$pid/stat)
    kill $pid; wait $pid 2>/dev/null
    rps=$(echo "$out" | awk '/Requests\/sec/{print $2}'); reqs=$(echo "$out" | awk '/requests in/{print $1}')
    echo "round=$r server=$s rps=$rps cpu_us=$(echo "($s1-$s0)*10000/$reqs" | bc -l | cut -c1-6) load=$(cut -d' ' -f1 /proc/loadavg)"
  done
done
