#!/bin/bash
# run.sh OLD.test NEW.test OUTDIR: BenchmarkCompatVsNative, old and new test
# binaries interleaved, 3 rounds x -count 2 (= -count 6 each), -cpu 1,2.
old=$1 new=$2 out=$3
mkdir -p $out
for r in 1 2 3; do
  for v in old new; do
    bin=$old; [ $v = new ] && bin=$new
    echo "== round $r $v $(date -u +%T) load: $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/log.txt
    $bin -test.run '^$' -test.bench 'BenchmarkCompatVsNative$' -test.benchmem -test.benchtime 0.5s -test.count 2 -test.cpu 1,2 >> $out/$v.txt 2>&1
  done
done
echo "== done $(date -u +%T) load: $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/log.txt
