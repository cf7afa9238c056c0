// Package bench is riptide's cross-library benchmark module. It holds no
// library code: its tests check that every benchmark server answers every
// route correctly, and the HTTP/2-capable ones over h2c and TLS h2 too
// (servers_test.go, servers_h2_test.go), and compare the servers over in-memory
// connections with `go test -bench` (micro_test.go). The load harness is
// cmd/riptide-bench; the event-store application benchmark is eventstore/
// and cmd/eventstore-bench; see README.md.
package bench
