#!/bin/bash
# ir.sh TESTBIN DOOR: callgrind instructions per request of BenchmarkCompatVsNativeH2Burst/DOOR
# (GOGC=off, one P; the difference of a 1000x and a 3000x run, 10 requests each op)
ir() { GOGC=off GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file=/tmp/h2compat/cgi.$$.$3 $1 -test.run XXX -test.bench "^BenchmarkCompatVsNativeH2Burst\$/$2\$" -test.cpu 1 -test.benchtime ${3}x 2>&1 | awk '/Collected/{print $4}' | tr -d ,; rm -f /tmp/h2compat/cgi.$$.$3; }
a=$(ir $1 $2 1000); b=$(ir $1 $2 3000)
echo "$(basename $1) burst/$2 $(( (b-a)/20000 )) instr/req"
