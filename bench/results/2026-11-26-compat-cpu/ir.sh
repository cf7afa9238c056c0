#!/bin/bash
# ir.sh TESTBIN SUB: instructions per request of BenchmarkCompatVsNative/SUB
# (callgrind, GOGC=off, one P; the difference of a 20000x and a 60000x run)
ir() { GOGC=off GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.$$.$3 $1 -test.run XXX -test.bench "^BenchmarkCompatVsNative\$/$2" -test.cpu 1 -test.benchtime ${3}x 2>&1 | awk '/Collected/{print $4}'; rm -f /tmp/cg.$$.$3; }
a=$(ir $1 $2 20000); b=$(ir $1 $2 60000)
echo "$(basename $1) $2 $(( (b-a)/40000 )) instr/req"
