package riptide

import (
	"log/slog"
	"net"
	"testing"

	"github.com/riptide-http/riptide/internal/clock"
)

// compatBenchRequest is the request of BenchmarkCompatVsNative: the engine
// benchmark's GET (BenchmarkEngine).
const compatBenchRequest = "GET /plaintext HTTP/1.1\r\nHost: localhost\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n"

// compatBenchShort is wrk's GET without added headers (its "short"
// workload of BenchmarkCompatVsNative): a Host field only.
const compatBenchShort = "GET /plaintext HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"

// BenchmarkCompatVsNative serves the same plaintext response through the
// native door and the compat door (the bench servers' plaintext handlers),
// in memory (no syscalls) on every P at once (b.RunParallel), one request
// per read ("plaintext") or 16 pipelined per read ("pipelined"), and
// wrk's request without added headers, one per read ("short"); compat-reuse
// is the compat door with CompatOptions.ReuseRequests. One
// operation is one request, so the compat/native ratio of ns/op is the
// compat door's cost per request at each -cpu. cpu-ns/op is the process's
// CPU time (every thread, the GC's included) per request, which other
// processes' load on a shared machine disturbs less than ns/op:
//
//	go test -run XXX -bench CompatVsNative -benchmem -cpu 1,2,4,8 -count 5 .
func BenchmarkCompatVsNative(b *testing.B) {
	native, hh := plaintextHandlers()
	compat := FromHTTP(hh)
	// compat-reuse: the same handler with CompatOptions.ReuseRequests.
	reuse := FromHTTPWith(hh, CompatOptions{ReuseRequests: true})
	for _, wl := range []struct {
		name  string
		req   string
		depth int
	}{{"plaintext", compatBenchRequest, 1}, {"pipelined", compatBenchRequest, 16}, {"short", compatBenchShort, 1}} {
		for _, door := range []struct {
			name string
			h    Handler
		}{{"native", native}, {"compat", compat}, {"compat-reuse", reuse}} {
			b.Run(wl.name+"/"+door.name, func(b *testing.B) {
				benchServeParallel(b, door.h, wl.req, wl.depth)
			})
		}
	}
}

// benchServeParallel serves one, depth requests per read, on a connection
// per b.RunParallel goroutine; an operation is one request.
func benchServeParallel(b *testing.B, h Handler, one string, depth int) {
	s := &Server{Handler: h}
	s.init()
	clock.Acquire() // as Serve does
	defer clock.Release()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	b.RunParallel(func(pb *testing.PB) {
		m := &pbConn{pb: pb, one: []byte(one), depth: depth}
		for !m.done {
			c := newConn(s, m)
			s.trackConn(c, true)
			c.serve()
		}
	})
	b.StopTimer()
	if cpu := processCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
	var st Stats
	s.Stats(&st)
	if st.Requests != uint64(b.N) {
		b.Fatalf("served %d requests, want %d", st.Requests, b.N)
	}
}

// pbConn is a memConn whose reads return up to depth copies of one
// request, one per pb.Next, then an error; writes are discarded.
type pbConn struct {
	memConn
	pb    *testing.PB
	one   []byte
	depth int
	done  bool
}

func (m *pbConn) Read(p []byte) (int, error) {
	n := 0
	for k := 0; k < m.depth && !m.done && n+len(m.one) <= len(p); k++ {
		if !m.pb.Next() {
			m.done = true
			break
		}
		n += copy(p[n:], m.one)
	}
	if n == 0 {
		m.done = true
		return 0, net.ErrClosed
	}
	return n, nil
}

// BenchmarkCompatVsNativeH2 serves the plaintext response of
// BenchmarkCompatVsNative over h2c, one stream at a time on one loopback
// connection, through the native and the compat door, with the client of
// TestH2Allocs (it allocates nothing and refers to HPACK-indexed fields),
// so that the compat door's HTTP/2 cost per request shows beside the
// native door's. cpu-ns/op is the process's CPU time per request, client
// and syscalls included (the same for both doors):
//
//	go test -run '^$' -bench CompatVsNativeH2 -benchmem -count 6 .
func BenchmarkCompatVsNativeH2(b *testing.B) {
	native, hh := plaintextHandlers()
	compat := FromHTTP(hh)
	// compat-reuse: the same handler with CompatOptions.ReuseRequests.
	reuse := FromHTTPWith(hh, CompatOptions{ReuseRequests: true})
	for _, door := range []struct {
		name string
		h    Handler
	}{{"native", native}, {"compat", compat}, {"compat-reuse", reuse}} {
		b.Run(door.name, func(b *testing.B) {
			ac := startH2AllocServer(b, &Server{Handler: door.h, Logger: slog.New(slog.DiscardHandler), HTTP2: &HTTP2Config{H2C: true}})
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU()
			for b.Loop() {
				ac.roundTrip()
			}
			if cpu := processCPU() - cpu0; cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
