#!/bin/bash
# ir.sh TESTBIN WL DOOR: instructions per request of BenchmarkCompatVsNative/WL/DOOR
# (callgrind, GOGC=off, one P; the difference of a 20000x and a 60000x run;
# each level of the benchmark name anchored, so compat does not match compat-reuse)
ir() { GOGC=off GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.$$.$4 $1 -test.run XXX -test.bench "^BenchmarkCompatVsNative\$/^$2\$/^$3\$" -test.cpu 1 -test.benchtime ${4}x 2>&1 | awk '/Collected/{print $4}'; rm -f /tmp/cg.$$.$4; }
a=$(ir $1 $2 $3 20000); b=$(ir $1 $2 $3 60000)
echo "$(basename $1) $2/$3 $(( (b-a)/40000 )) instr/req"
