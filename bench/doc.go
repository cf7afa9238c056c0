// Package bench is riptide's cross-library benchmark module. It holds no
// library code: its tests check that every benchmark server answers every
// route correctly (servers_test.go) and compare the servers over in-memory
// connections with `go test -bench` (micro_test.go). The load harness is
// cmd/riptide-bench; see README.md.
package bench
