#!/bin/bash
# Interleaved before/after runs of BenchmarkCompatVsNative, 2 rounds x -count 3 each.
cd /work/wt/compat4  # the after tree; before.test was built from git archive 2383d1d
for r in 1 2; do
  for v in before after; do
    echo "== round $r $v $(date -u +%T) load: $(cut -d' ' -f1-3 /proc/loadavg)" >> /tmp/compat4/bench/log.txt
    /tmp/compat4/bench/$v.test -test.run '^$' -test.bench 'BenchmarkCompatVsNative' -test.benchmem -test.count 3 -test.cpu 1,2,4,8 >> /tmp/compat4/bench/$v.txt 2>&1
  done
done
echo "== done $(date -u +%T) load: $(cut -d' ' -f1-3 /proc/loadavg)" >> /tmp/compat4/bench/log.txt
