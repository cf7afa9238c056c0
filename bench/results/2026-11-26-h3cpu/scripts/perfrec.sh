#!/bin/bash
# usage: perfrec.sh BIN PORT OUT
bin=$1; port=$2; out=$3; shift 3
GOMAXPROCS=1 taskset -c 0 $bin -addr 127.0.0.1:$port "$@" > /dev/null 2>&1 &
pid=$!
sleep 1
perf record -e cpu-clock -F 4000 -g -p $pid -o $out.data > /dev/null 2>&1 &
ppid=$!
sleep 0.3
H3PROF_ADDR=127.0.0.1:$port taskset -c 1 ./harness.test -test.run TestZZH3Load -test.v 2>&1 | grep -o "Requests:[0-9]*"
kill -INT $ppid; wait $ppid
kill -INT $pid; wait $pid
