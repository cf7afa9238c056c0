#!/bin/sh
# perf stat (software events and syscall tracepoints: this VM exposes no
# hardware counters, so cache-misses/cache-references are "not supported")
# of the scaling benchmarks at a fixed op count, old and new binaries
# interleaved. Run from an empty directory:
#   sh perfstat.sh OLD NEW ROUNDS
set -eu
OLD=$1 NEW=$2 ROUNDS=$3
EV=context-switches,cpu-migrations,task-clock,raw_syscalls:sys_enter,syscalls:sys_enter_futex,syscalls:sys_enter_write,syscalls:sys_enter_writev,syscalls:sys_enter_read,syscalls:sys_enter_epoll_pwait,cache-misses,cache-references
for r in $(seq 1 "$ROUNDS"); do
	for v in old new; do
		bin=$OLD; [ $v = new ] && bin=$NEW
		for b in ScalePipelined:40000 ScaleH2/default:40000 ScaleH2/inline:40000; do
			name=${b%%:*} n=${b##*:}
			tag=$(echo "$name" | tr / _)
			for cpu in 1 2; do
				perf stat -x, -o "perf_${v}_${tag}_cpu${cpu}_r$r.csv" -e "$EV" \
					"$bin" -test.run '^$' -test.bench "^Benchmark$name\$" -test.cpu $cpu \
					-test.benchtime ${n}x -test.count 1 >>"bench_$v.txt" 2>&1
			done
		done
	done
done
