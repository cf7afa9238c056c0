package riptide

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/riptide-http/riptide/internal/clock"
)

// compatBenchRequest is the request of BenchmarkCompatVsNative: the engine
// benchmark's GET (BenchmarkEngine).
const compatBenchRequest = "GET /plaintext HTTP/1.1\r\nHost: localhost\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n"

// compatBenchEcho is the harness's echo workload request (POST /echo with a
// 1024-byte body; bench/internal/harness/workloads.go): its "echo" workload
// in BenchmarkCompatVsNative.
var compatBenchEcho = "POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\nContent-Length: 1024\r\n\r\n" + strings.Repeat("x", 1024)

// compatBenchShort is wrk's GET without added headers (its "short"
// workload of BenchmarkCompatVsNative): a Host field only.
const compatBenchShort = "GET /plaintext HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"

// BenchmarkCompatVsNative serves the same plaintext response through the
// native door and the compat door (the bench servers' plaintext handlers),
// in memory (no syscalls) on every P at once (b.RunParallel), one request
// per read ("plaintext") or 16 pipelined per read ("pipelined"), and
// wrk's request without added headers, one per read ("short"), and a POST
// whose 1024-byte body is echoed, as the bench servers' echo handlers do
// it (ReadBody natively, io.ReadAll through compat; "echo"); compat-reuse
// is the compat door with CompatOptions.ReuseRequests. One
// operation is one request, so the compat/native ratio of ns/op is the
// compat door's cost per request at each -cpu. cpu-ns/op is the process's
// CPU time (every thread, the GC's included) per request, which other
// processes' load on a shared machine disturbs less than ns/op:
//
//	go test -run XXX -bench CompatVsNative -benchmem -cpu 1,2,4,8 -count 5 .
func BenchmarkCompatVsNative(b *testing.B) {
	native, hh := plaintextHandlers()
	// The echo handlers of bench/internal/riptideroutes and stdroutes.
	nativeEcho := HandlerFunc(func(c *Ctx) {
		b, err := c.ReadBody()
		if err != nil {
			c.SetStatus(400)
			return
		}
		c.SetContentType("application/octet-stream")
		c.Write(b)
	})
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h := w.Header()
		h["Content-Type"] = []string{"application/octet-stream"}
		h["Content-Length"] = []string{strconv.Itoa(len(b))}
		w.Write(b)
	})
	for _, wl := range []struct {
		name   string
		req    string
		depth  int
		native Handler
		h      http.Handler
	}{
		{"plaintext", compatBenchRequest, 1, native, hh},
		{"pipelined", compatBenchRequest, 16, native, hh},
		{"short", compatBenchShort, 1, native, hh},
		{"echo", compatBenchEcho, 1, nativeEcho, echo},
	} {
		for _, door := range []struct {
			name string
			h    Handler
		}{
			{"native", wl.native},
			{"compat", FromHTTP(wl.h)},
			// compat-reuse: the same handler with CompatOptions.ReuseRequests.
			{"compat-reuse", FromHTTPWith(wl.h, CompatOptions{ReuseRequests: true})},
		} {
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

// BenchmarkCompatConnsInTurn is the plaintext workload of
// BenchmarkCompatVsNative over real loopback keep-alive connections, four
// of them in turn, on a listener bound to the unspecified address, on the
// default engine: as under wrk, the event loop's workers serve one
// connection's request, then another's, so that what a door makes once per
// connection shows if it is made again per request
// (TestCompatAllocsConns). Client and syscalls are in every figure, the
// same for both doors:
//
//	go test -run '^$' -bench CompatConnsInTurn -benchmem -count 6 .
func BenchmarkCompatConnsInTurn(b *testing.B) {
	native, hh := plaintextHandlers()
	for _, door := range []struct {
		name string
		h    Handler
	}{{"native", native}, {"compat", FromHTTP(hh)}} {
		b.Run(door.name, func(b *testing.B) {
			ln, err := net.Listen("tcp4", "0.0.0.0:0")
			if err != nil {
				b.Fatal(err)
			}
			_, port, _ := net.SplitHostPort(ln.Addr().String())
			serveTest(b, &Server{Handler: door.h, Logger: slog.New(slog.DiscardHandler)}, testServeOptions{Listener: ln})
			var cs [4]*allocClient
			for i := range cs {
				cs[i] = newAllocClient(b, net.JoinHostPort("127.0.0.1", port), compatBenchRequest)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				cs[i%len(cs)].roundTrip()
			}
		})
	}
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
