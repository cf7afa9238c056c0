#!/bin/bash
# ab.sh ROUNDS DUR MODE NAME=BIN[:args] ... : interleaved h2load rounds, order rotated
rounds=$1; shift; dur=$1; shift; mode=$1; shift
specs=("$@"); n=${#specs[@]}
for r in $(seq 1 $rounds); do
  for k in $(seq 0 $((n-1))); do
    i=$(( (k + r) % n )); spec=${specs[$i]}
    name=${spec%%=*}; rest=${spec#*=}; bin=${rest%%:*}; args=""; [[ $rest == *:* ]] && args=${rest#*:}
    port=$((20000 + RANDOM % 2000))
    if [ $mode = tls ]; then flag=-tls; url=https://127.0.0.1:$port/; else flag=-h2c; url=http://127.0.0.1:$port/; fi
    $bin -addr 127.0.0.1:$port -profile bench $flag $args >/dev/null 2>&1 & pid=$!
    sleep 0.4
    s0=$(awk '{print $14+$15}' /proc/$pid/stat)
    out=$(h2load -t1 -c50 -m10 -D$dur $url)
    s1=$(awk '{print $14+$15}' /proc/$pid/stat)
    kill -TERM $pid; wait $pid 2>/dev/null
    rps=$(echo "$out" | awk '/^finished in/{print $4}')
    reqs=$(echo "$out" | awk '/^requests:/{print $8}')
    echo "round=$r mode=$mode server=$name rps=$rps cpu_us_per_req=$(echo "($s1-$s0)*10000/$reqs" | bc -l | cut -c1-5) load=$(cut -d' ' -f1 /proc/loadavg)"
  done
done
