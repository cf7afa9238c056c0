package benchserver

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"runtime/metrics"
	"strconv"
	"sync"
)

// The HTTP/3 servers (servers/quicgo-h3, servers/riptide-h3) serve the
// bench routes plus these two.
const (
	// BulkPath is the h3bulk workload's route: GET answers BulkSize bytes.
	BulkPath = "/bulk"
	// BulkSize is the length of the GET /bulk body.
	BulkSize = 16 << 20
	// AllocsPath answers the decimal count of heap objects the server
	// has allocated since it started (runtime/metrics
	// /gc/heap/allocs:objects): the harness reads it before and after a
	// run for the allocations per request.
	AllocsPath = "/debug/allocs"
)

// BulkBody returns the GET /bulk body: BulkSize bytes of printable ASCII,
// made on first use. Handlers must not modify it.
var BulkBody = sync.OnceValue(func() []byte {
	b := make([]byte, BulkSize)
	for i := 0; i < len(b); i += len(Body64K) {
		copy(b[i:], Body64K)
	}
	return b
})

// AppendHeapAllocs appends the process's count of heap objects allocated
// since start, in decimal.
func AppendHeapAllocs(b []byte) []byte {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}}
	metrics.Read(s)
	return strconv.AppendUint(b, s[0].Value.Uint64(), 10)
}

// MainH3 runs an HTTP/3 benchmark server: it opens a UDP socket on o.Addr,
// announces it with the "listening on ADDR" line, calls serve with it and
// a TLS configuration (a self-signed certificate generated at start, ALPN
// h3) in a goroutine, and calls stop on SIGINT or SIGTERM. The HTTP/3
// servers serve the bench profile only and have no -h2c or -tls (they are
// always TLS): other flags exit with status 2.
func MainH3(o Options, serve func(pc net.PacketConn, tlsConf *tls.Config) error, stop func()) {
	if o.Profile != ProfileBench || o.H2C || o.TLS {
		fmt.Fprintln(os.Stderr, "HTTP/3 servers serve -profile bench only, without -h2c or -tls")
		os.Exit(2)
	}
	tlsConf, err := SelfSignedTLS()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tls:", err)
		os.Exit(1)
	}
	tlsConf.NextProtos = []string{"h3"}
	pc, err := net.ListenPacket("udp", o.Addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		os.Exit(1)
	}
	fmt.Printf("listening on %s\n", pc.LocalAddr())
	run(o, func() error { return serve(pc, tlsConf) }, stop)
}
