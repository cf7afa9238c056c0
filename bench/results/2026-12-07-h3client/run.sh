#!/bin/sh
# BenchmarkClientH3 (http3/client_bench_test.go): riptide's HTTP/3 client
# (native Do, RoundTrip) and quic-go's http3.Transport against riptide's
# HTTP/3 server in the same process, three interleaved rounds.
# Run from the repository root: bench/results/2026-12-07-h3client/run.sh
set -e
out=bench/results/2026-12-07-h3client
{
	date -u
	echo "nproc: $(nproc)"
	grep -m1 'model name' /proc/cpuinfo
	go version
	uptime
} > "$out/machine.txt"
(cd http3 && go test -c -o /tmp/h3client-bench.test .)
: > "$out/bench.txt"
for round in 1 2 3; do
	echo "# round $round" >> "$out/bench.txt"
	(cd http3 && /tmp/h3client-bench.test -test.run '^$' -test.bench BenchmarkClientH3 -test.benchtime 2s) >> "$out/bench.txt"
	uptime >> "$out/machine.txt"
done
