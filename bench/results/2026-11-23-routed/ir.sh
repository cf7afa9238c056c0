#!/bin/bash
# ir.sh TESTBIN BENCH : instructions per request (callgrind, 20000x vs 60000x)
ir() { GOGC=off GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file=/tmp/rt/cg.$2.$3 $1 -test.run XXX -test.bench "^Benchmark$2\$" -test.benchtime ${3}x 2>&1 | awk '/Collected/{print $4}'; }
a=$(ir $1 $2 20000); b=$(ir $1 $2 60000)
echo "$2 $(( (b-a)/40000 )) instr/req"
