#!/bin/bash
# prof.sh NAME BIN MODE(h2c|tls) [args...]
name=$1; shift; bin=$1; shift; mode=$1; shift
port=$((19000 + RANDOM % 1000))
OUT=${OUT:-/tmp/h2h}
if [ $mode = tls ]; then flag=-tls; url=https://127.0.0.1:$port/; else flag=-h2c; url=http://127.0.0.1:$port/; fi
$bin -addr 127.0.0.1:$port $flag ${PROF:+-cpuprofile $OUT/$name.pprof} "$@" >$OUT/$name.srv.log 2>&1 &
pid=$!
sleep 0.5
h2load -t1 -c50 -m10 -D1 $url > /dev/null
s0=$(awk '{print $14+$15}' /proc/$pid/stat)
if [ -n "$STRACE" ]; then strace -c -f -p $pid -o $OUT/$name.strace & spid=$!; sleep 0.3; fi
h2load -t1 -c50 -m10 -D${D:-5} $url > $OUT/$name.h2load.txt
s1=$(awk '{print $14+$15}' /proc/$pid/stat)
if [ -n "$STRACE" ]; then kill -INT $spid; wait $spid; fi
kill -TERM $pid; wait $pid
rps=$(awk '/^finished in/{print $4}' $OUT/$name.h2load.txt)
reqs=$(awk '/^requests:/{print $8}' $OUT/$name.h2load.txt)
echo "$name rps=$rps reqs=$reqs cpu_us_per_req=$(echo "($s1-$s0)*10000/$reqs" | bc -l | cut -c1-6) load=$(cut -d' ' -f1-3 /proc/loadavg)"
