#!/bin/bash
# cpuperf.sh WORKLOAD SERVER TAG: one 6 s harness run; perf record -C 0 and -C 1 (3 s) in the middle
w=$1; s=$2; tag=$3
cd /work/wt/h3bulk2
go -C bench build -o /tmp/h3bulk2/riptide-bench ./cmd/riptide-bench
(cd bench && /tmp/h3bulk2/riptide-bench -workloads $w -servers $s -rounds 1 -duration 6s -warmup 1s -server-cpus 0 -wrk-cpus 1 -out /tmp/h3bulk2-perf-$tag > /tmp/h3bulk2/perf-$tag.log 2>&1) &
hp=$!
sleep 4.5
perf record -F 2000 -g -C 0 -o /tmp/h3bulk2/c0-$tag.data -- sleep 3 >/dev/null 2>&1 &
perf record -F 2000 -g -C 1 -o /tmp/h3bulk2/c1-$tag.data -- sleep 3 >/dev/null 2>&1 &
wait $hp
wait
grep -E 'MB/s' /tmp/h3bulk2/perf-$tag.log
