#!/bin/sh
# Mutex/block/CPU profiles and perf stat software counters of the scaling
# benchmarks, for the old and new test binaries, at a fixed op count so
# that totals compare per request. Run from an empty directory:
#   sh profile.sh OLD NEW ROUNDS
set -eu
OLD=$1 NEW=$2 ROUNDS=$3
for r in $(seq 1 "$ROUNDS"); do
	for v in old new; do
		bin=$OLD; [ $v = new ] && bin=$NEW
		for b in ScalePipelined:20000 ScaleH2/default:20000 ScaleH2/inline:20000; do
			name=${b%%:*} n=${b##*:}
			tag=$(echo "$name" | tr / _)
			for cpu in 1 2; do
				perf stat -x, -o "perf_${v}_${tag}_cpu${cpu}_r$r.csv" \
					-e context-switches,cpu-migrations,task-clock,page-faults \
					"$bin" -test.run '^$' -test.bench "^Benchmark$name\$" -test.cpu $cpu \
					-test.benchtime ${n}x -test.count 1 \
					-test.mutexprofile "mutex_${v}_${tag}_cpu${cpu}_r$r.out" -test.mutexprofilefraction 1 \
					-test.blockprofile "block_${v}_${tag}_cpu${cpu}_r$r.out" -test.blockprofilerate 100000 \
					-test.cpuprofile "cpu_${v}_${tag}_cpu${cpu}_r$r.out" \
					>>"bench_$v.txt" 2>&1
			done
		done
	done
done
