// Package clientbench compares HTTP client throughput. Each benchmark has
// one sub-benchmark per client (client=NAME):
//
//   - riptide: the native client, client.Client.Do, no pipelining;
//   - riptide-pipelined: the same with Client.Pipeline = 8 over at most 4
//     connections (HTTP/1.1 pipelining, idempotent requests only);
//   - riptide-rt: riptide as the http.RoundTripper of an http.Client;
//   - fasthttp: valyala/fasthttp's Client;
//   - nethttp: net/http's Client with its Transport;
//   - raw: not a client but a yardstick, one connection per goroutine that
//     writes canned request bytes and reads the known response length with
//     no parsing or pooling: the limit for a Go client doing one write and
//     one read per request on this machine.
//
// All clients allow 512 connections per host and do not ask for gzip.
//
// Every benchmark runs all clients against the same server, chosen with
// CLIENTBENCH_SERVER:
//
//   - ceiling (the default): bench/ceiling, the C epoll responder, built
//     with cc and run with one thread in its own process. It answers every
//     request with the same 13-byte body (POST1K included) and does the
//     least work per request of any server here, so the clients, not the
//     server, are the bottleneck, and -cpu sets the clients' GOMAXPROCS
//     only.
//   - fasthttp: a valyala/fasthttp server (pinned in bench/go.mod) with the
//     bench profile's routes (package fastroutes: GET / answers 13 bytes,
//     POST /echo echoes the body), in a child process.
//   - inproc: the same fasthttp server inside the benchmark process. Server
//     and clients then share the Ps set by -cpu, so the result is the cost
//     of client and server together per request.
//
// CLIENTBENCH_ADDR=host:port uses a server that is already running instead
// (set CLIENTBENCH_SERVER=fasthttp too if it echoes POST bodies).
//
// The machine's CPUs are shared by server and clients; compare clients
// within one run, not across machines. With a server in another process,
// a single goroutine's round trip includes waking that process, so the
// one-goroutine benchmarks measure latency there and CPU cost with inproc.
//
// Run, and compare the clients with benchstat:
//
//	cd bench && go test -run '^$' -bench . -cpu 1,2 -count 6 ./clientbench | tee /tmp/cb.txt
//	benchstat -col /client /tmp/cb.txt
//
// Benchmarks: SequentialGET (one goroutine, keep-alive), ConcurrentGET
// (b.RunParallel with 16 goroutines per GOMAXPROCS, so run it with -cpu 1,2),
// GETHeaders (ten request headers), POST1K (1 KiB body).
package clientbench
