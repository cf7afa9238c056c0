#!/bin/sh
# CPU time per request of the benchmark process (perf stat task-clock over
# a fixed iteration count), interleaved old/main/new, order rotated.
# loopback: against one shared ceiling server ($CEIL), whose CPU is not
# counted; inproc: fasthttp in the same process, counted for all alike.
# Usage: cpu.sh ROUNDS OUTFILE
set -u
rounds=$1; out=$2; n=20000
for r in $(seq 1 "$rounds"); do
  case $((r % 3)) in 0) order="old main new";; 1) order="main new old";; 2) order="new old main";; esac
  for b in $order; do
    for bench in SequentialGET GETHeaders POST1K; do
      for srv in loopback inproc; do
        if [ $srv = loopback ]; then env="CLIENTBENCH_ADDR=$CEIL"; else env="CLIENTBENCH_SERVER=inproc"; fi
        ms=$(env $env perf stat -x, -e task-clock /tmp/cr/$b.test -test.run '^$' -test.bench "$bench/client=riptide\$" -test.cpu 1 -test.benchtime ${n}x 2>&1 >/dev/null | awk -F, '/task-clock/{print $1}')
        echo "$r $b $srv $bench $ms $(awk -v ms=$ms -v n=$n 'BEGIN{printf "%.0f", ms*1e6/n}') $(cut -d' ' -f1 /proc/loadavg)" >> "$out"
      done
    done
  done
done
