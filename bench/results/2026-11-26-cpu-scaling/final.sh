#!/bin/sh
# The final measurement as run (from /tmp/mcbench/final): interleaved
# rounds, the pool benchmark, perf stat, then the profiles at fixed op
# counts. OLD, NEW: the test binaries (README: builds compared); WORKQ:
# go test -c ./internal/workq.
#   sh final.sh OLD NEW WORKQ
set -eu
OLD=$1 NEW=$2 WORKQ=$3 HERE=$(cd "$(dirname "$0")" && pwd)
sh "$HERE/run.sh" "$OLD" "$NEW" 8 bench >run.log 2>&1
"$WORKQ" -test.run '^$' -test.bench PoolGetPut -test.cpu 1,2 -test.count 6 >pool.txt 2>&1
mkdir -p perf prof
(cd perf && sh "$HERE/perfstat.sh" "$OLD" "$NEW" 3 >run.log 2>&1)
cd prof
for v in old new; do
	bin=$OLD; [ $v = new ] && bin=$NEW
	for c in 1 2; do
		for b in h2default:ScaleH2/default:100000 pipelined:ScalePipelined:60000; do
			tag=${b%%:*} rest=${b#*:} name=${rest%%:*} n=${rest##*:}
			"$bin" -test.run '^$' -test.bench "^Benchmark$name\$" -test.cpu $c -test.benchtime ${n}x \
				-test.cpuprofile cpu_${v}_${tag}_cpu$c.out \
				-test.mutexprofile mutex_${v}_${tag}_cpu$c.out -test.mutexprofilefraction 1 \
				-test.blockprofile block_${v}_${tag}_cpu$c.out -test.blockprofilerate 100000 >>bench.txt 2>&1
		done
	done
done
