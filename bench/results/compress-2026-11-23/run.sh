#!/usr/bin/env bash
# Compressed JSON, riptide native + compress vs net/http + gzhttp: builds the
# compress module's benchmark once, then runs ROUNDS rounds; each round runs
# both servers one after the other for ITERS requests each (a fraction of a
# second), so that the per-round ratio compares them under the same load.
# Usage: run.sh [ROUNDS [ITERS]] > raw.txt
set -euo pipefail
rounds=${1:-25}
iters=${2:-2000}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../../compress"
bin=$(mktemp -d)/compress.test
go test -c -o "$bin" .
echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "# go: $(go version)"
echo "# nproc: $(nproc); cpu: $(lscpu | sed -n 's/^Model name: *//p')"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# commit: $(git rev-parse --short HEAD); $rounds rounds of ${iters} requests per server"
for r in $(seq "$rounds"); do
	for cpu in 1 2; do
		echo "# round $r cpu $cpu"
		"$bin" -test.run '^$' -test.bench 'CompressedJSON' -test.benchtime ${iters}x -test.count 1 -test.cpu "$cpu" | grep '^Benchmark'
	done
done
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf "$(dirname "$bin")"
