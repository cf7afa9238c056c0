// Package harness runs riptide's cross-library load benchmark: it builds the
// server binaries under bench/servers (plus the C ceiling and, when
// installed, nginx), starts them on 127.0.0.1, drives them with wrk (and,
// for the opt-in HTTP/2 workloads h2c and h2tls, h2load) in interleaved
// rounds, samples each server's CPU time and peak RSS from /proc,
// and writes raw load-generator output, results.json, results.md and PNG charts.
//
// The command bench/cmd/riptide-bench is a thin flag layer over Run; the
// conformance test in bench/ uses Build and Start to check every server.
package harness
