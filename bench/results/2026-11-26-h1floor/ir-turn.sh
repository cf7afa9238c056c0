#!/bin/bash
# h1f-ir.sh TESTBIN DOOR: instructions per request of BenchmarkCompatConnsInTurn/DOOR
# (callgrind, GOGC=off, GOMAXPROCS=1; the difference of a 3000x and a 9000x run, whole process: client, server, both sides' syscall wrappers)
ir() { GOGC=off GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.$$.$3 $1 -test.run XXX -test.bench "^BenchmarkCompatConnsInTurn\$/^$2\$" -test.cpu 1 -test.benchtime ${3}x 2>&1 | awk '/Collected/{print $4}'; rm -f /tmp/cg.$$.$3; }
a=$(ir $1 $2 3000); b=$(ir $1 $2 9000)
echo "$(basename $1) $2 $(( (b-a)/6000 )) instr/req"
