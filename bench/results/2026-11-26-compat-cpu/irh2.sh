#!/bin/bash
# irh2.sh TESTBIN DOOR: instructions per request of BenchmarkCompatVsNativeH2/DOOR
# (callgrind, GOGC=off, one P; the difference of a 5000x and a 15000x run;
# user-space instructions, client included)
ir() { GOGC=off GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file=/tmp/cgh.$$.$3 $1 -test.run XXX -test.bench "^BenchmarkCompatVsNativeH2\$/$2" -test.cpu 1 -test.benchtime ${3}x 2>&1 | awk '/Collected/{print $4}'; rm -f /tmp/cgh.$$.$3; }
a=$(ir $1 $2 5000); b=$(ir $1 $2 15000)
echo "$(basename $1) h2/$2 $(( (b-a)/10000 )) instr/req"
