// Package harness runs riptide's cross-library load benchmark: it builds the
// server binaries under bench/servers (plus the C ceiling and, when
// installed, nginx), starts them on 127.0.0.1, drives them with wrk in
// interleaved rounds, samples each server's CPU time and peak RSS from /proc,
// and writes raw wrk output, results.json, results.md and PNG charts.
//
// The command bench/cmd/riptide-bench is a thin flag layer over Run; the
// conformance test in bench/ uses Build and Start to check every server.
package harness
