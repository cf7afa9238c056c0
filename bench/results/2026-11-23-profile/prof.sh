#!/bin/bash
# prof.sh NAME BIN [args...] : run server with cpuprofile, wrk 10s, write profile
name=$1; shift; bin=$1; shift
port=$((18000 + RANDOM % 1000))
$bin -addr 127.0.0.1:$port -cpuprofile ${OUT:-/tmp/elp}/$name.pprof "$@" >${OUT:-/tmp/elp}/$name.srv.log 2>&1 &
pid=$!
sleep 0.5
wrk -t1 -c50 -d1s http://127.0.0.1:$port/ > ${OUT:-/tmp/elp}/$name.warm.txt
s0=$(awk '{print $14+$15}' /proc/$pid/stat)
wrk -t1 -c50 -d10s http://127.0.0.1:$port/ > ${OUT:-/tmp/elp}/$name.wrk.txt
s1=$(awk '{print $14+$15}' /proc/$pid/stat)
kill -TERM $pid; wait $pid
rps=$(awk '/Requests\/sec/{print $2}' ${OUT:-/tmp/elp}/$name.wrk.txt)
reqs=$(awk '/requests in/{print $1}' ${OUT:-/tmp/elp}/$name.wrk.txt)
echo "$name rps=$rps cpu_us_per_req=$(echo "($s1-$s0)*10000/$reqs" | bc -l | cut -c1-6) load=$(cut -d' ' -f1-3 /proc/loadavg)"
