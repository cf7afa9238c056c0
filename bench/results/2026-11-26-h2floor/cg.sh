#!/bin/bash
# cg.sh TESTBIN DOOR TAG: keep callgrind outputs for 1000x and 3000x
for n in 1000 3000; do GOGC=off GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file=/tmp/h2floor/cg.$3.$2.$n $1 -test.run XXX -test.bench "^BenchmarkCompatVsNativeH2Burst\$/$2\$" -test.cpu 1 -test.benchtime ${n}x >/dev/null 2>&1; done
