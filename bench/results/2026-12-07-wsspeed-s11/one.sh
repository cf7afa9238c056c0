#!/bin/bash
# one.sh BIN WORKLOAD DUR [wsload flags]: server pinned on CPU 0 (GOMAXPROCS=1), wsload on CPU 1
b=$1; wl=$2; d=$3; shift 3
port=$((9600 + RANDOM % 300))
GOMAXPROCS=1 taskset -c 0 $b -addr 127.0.0.1:$port > /dev/null 2>&1 &
pid=$!
sleep 0.4
t0=$(date +%s.%N)
out=$(taskset -c 1 /tmp/wsspeed/wsload -addr 127.0.0.1:$port -workload $wl -d $d -pid $pid "$@")
echo "== $(basename $b) $wl load $(cut -d' ' -f1 /proc/loadavg): $(echo "$out" | grep -oE '[0-9]+ (msg|deliveries)/s' | head -1); $(echo "$out" | grep -E '^server CPU' ); $(echo "$out" | grep 'per message')"
kill $pid; wait $pid 2>/dev/null
