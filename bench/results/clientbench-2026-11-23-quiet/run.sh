#!/bin/sh
# Interleaved: each round runs old, main and new (order rotated per round)
# against the same servers. Run from bench/clientbench with CEIL=host:port of a
# running ceiling server. Usage: run.sh ROUNDS OUTDIR
set -u
rounds=$1; out=$2
bins="old main new"
for r in $(seq 1 "$rounds"); do
  case $((r % 3)) in 0) order="old main new";; 1) order="main new old";; 2) order="new old main";; esac
  echo "round $r $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg) order $order" >> "$out/log.txt"
  for b in $order; do
    CLIENTBENCH_ADDR=$CEIL /tmp/cr/$b.test -test.run '^$' -test.bench '(SequentialGET|POST1K|GETHeaders)/client=riptide$' -test.cpu 1 -test.benchtime 1s -test.benchmem 2>&1 | grep '^Benchmark' >> "$out/$b-loopback.txt"
    CLIENTBENCH_SERVER=inproc /tmp/cr/$b.test -test.run '^$' -test.bench '(SequentialGET|POST1K|GETHeaders)/client=riptide$' -test.cpu 1 -test.benchtime 1s -test.benchmem 2>&1 | grep '^Benchmark' >> "$out/$b-inproc.txt"
    CLIENTBENCH_ADDR=$CEIL /tmp/cr/$b.test -test.run '^$' -test.bench 'ConcurrentGET/client=riptide$' -test.cpu 1,2 -test.benchtime 1s -test.benchmem 2>&1 | grep '^Benchmark' >> "$out/$b-concurrent.txt"
  done
done
echo "end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/log.txt"
