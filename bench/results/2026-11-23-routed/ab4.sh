#!/bin/bash
# ab4.sh ROUNDS SECS : riptide-new and fasthttp, plaintext and routed, interleaved
rounds=$1; secs=$2
cfgs=("riptide-new bench /" "riptide-new routed /repos/golang/go/issues/42" "fasthttp bench /" "fasthttp routed /repos/golang/go/issues/42")
for r in $(seq 1 $rounds); do
  for k in 0 1 2 3; do
    i=$(( (k + r) % 4 )); set -- ${cfgs[$i]}; s=$1; prof=$2; path=$3
    port=$((19000 + RANDOM % 900))
    /tmp/rt/bin/$s -addr 127.0.0.1:$port -profile $prof >/dev/null 2>&1 &
    pid=$!; sleep 0.3
    wrk -t1 -c50 -d1s http://127.0.0.1:$port$path >/dev/null
    s0=$(awk '{print $14+$15}' /proc/$pid/stat)
    out=$(wrk -t1 -c50 -d${secs}s http://127.0.0.1:$port$path)
    s1=$(awk '{print $14+$15}' /proc/$pid/stat)
    kill $pid; wait $pid 2>/dev/null
    rps=$(echo "$out" | awk '/Requests\/sec/{print $2}'); reqs=$(echo "$out" | awk '/requests in/{print $1}')
    echo "round=$r server=$s-$prof rps=$rps cpu_us=$(echo "($s1-$s0)*10000/$reqs" | bc -l | cut -c1-6) load=$(cut -d' ' -f1 /proc/loadavg)"
  done
done
