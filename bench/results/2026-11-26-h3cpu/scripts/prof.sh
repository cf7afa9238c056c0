#!/bin/bash
# usage: prof.sh BIN PORT OUT [args]
bin=$1; port=$2; out=$3; shift 3
GOMAXPROCS=1 taskset -c 0 $bin -addr 127.0.0.1:$port -cpuprofile $out.prof "$@" > $out.srv.log 2>&1 &
pid=$!
sleep 1
H3PROF_ADDR=127.0.0.1:$port taskset -c 1 ./harness.test -test.run TestZZH3Load -test.v 2>&1 | grep -o "Requests:[0-9]*\|RPS:[0-9.]*" | tr "\n" " "
cat /proc/$pid/stat | awk '{print "utime",$14,"stime",$15}'
kill -INT $pid; wait $pid
