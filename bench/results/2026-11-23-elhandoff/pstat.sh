#!/bin/bash
# pstat.sh PATH "BIN ARGS": perf stat software counters per request during a 3 s wrk
path=$1; cmd=$2
port=$((19000 + RANDOM % 900))
$cmd -addr 127.0.0.1:$port -profile bench >/dev/null 2>&1 &
pid=$!
sleep 0.4
wrk -t1 -c${C:-50} -d1s http://127.0.0.1:$port$path >/dev/null
perf stat -x, -e task-clock,context-switches,cpu-migrations,page-faults -p $pid -o /tmp/elh/pstat.out &
pp=$!
out=$(wrk -t1 -c${C:-50} -d3s http://127.0.0.1:$port$path)
kill -INT $pp; wait $pp
kill $pid; wait $pid 2>/dev/null
reqs=$(echo "$out" | awk '/requests in/{print $1}')
awk -F, -v r=$reqs -v c="$cmd $path" '/^[0-9]/{printf "%s=%.3f ", $3, $1/r} END{print " per req (reqs=" r ") " c}' /tmp/elh/pstat.out
