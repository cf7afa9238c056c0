#!/bin/sh
# Interleaved before/after runs of the in-process scaling benchmarks
# (issue 27, 2-vCPU part). OLD and NEW are test binaries built with
# `go test -c` from `git archive` of the base commit (with this branch's
# scaling_bench_test.go copied in) and from the branch.
#   sh run.sh OLD NEW ROUNDS OUTDIR
set -eu
OLD=$1 NEW=$2 ROUNDS=$3 OUT=$4
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
	for v in old new; do
		bin=$OLD; [ $v = new ] && bin=$NEW
		"$bin" -test.run '^$' -test.bench 'Benchmark(ScalePipelined|ScaleH2|ScaleStatsDispatch)$|BenchmarkScaleH2/' \
			-test.cpu 1,2 -test.benchtime 2s -test.count 1 -test.benchmem >>"$OUT/$v.txt" 2>&1
	done
	echo "round $r done: $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
