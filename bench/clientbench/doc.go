// Package clientbench compares HTTP client throughput. Each benchmark has
// one sub-benchmark per client (client=NAME):
//
//   - riptide: the native client, client.Client.Do, no pipelining;
//   - riptide-pipelined: the same with Client.Pipeline = 8 over at most 4
//     connections (HTTP/1.1 pipelining, idempotent requests only);
//   - riptide-rt: riptide as the http.RoundTripper of an http.Client;
//   - fasthttp: valyala/fasthttp's Client;
//   - nethttp: net/http's Client with its Transport.
//
// All clients allow 512 connections per host and do not ask for gzip.
//
// Every benchmark runs all clients against the same server: a
// valyala/fasthttp server (pinned in bench/go.mod) with the bench profile's
// routes (package fastroutes: GET / answers 13 bytes of text, POST /echo
// echoes the body), started in the benchmark process on 127.0.0.1. It is
// cheap and the same for every client, so the differences are the clients'.
// Client and server share the machine's CPUs; compare clients within one
// run, not across machines.
//
// Run, and compare the clients with benchstat:
//
//	cd bench && go test -run '^$' -bench . -cpu 1,2 -count 6 ./clientbench | tee /tmp/cb.txt
//	benchstat -col /client /tmp/cb.txt
//
// Benchmarks: SequentialGET (one goroutine, keep-alive), ConcurrentGET
// (b.RunParallel with 16 goroutines per GOMAXPROCS, so run it with -cpu 1,2),
// GETHeaders (ten request headers), POST1K (1 KiB body echoed back).
package clientbench
