package riptide

import (
	"bytes"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide/internal/clock"
)

// TestZeroAllocs measures allocations per request over a real loopback
// keep-alive connection with testing.AllocsPerRun, which counts every
// allocation in the process: server and client alike. The client side is
// therefore written not to allocate: it sends a prebuilt request with one
// Write on a plain *net.TCPConn and reads the response into a fixed buffer
// until it has the known response length. Its own cost is zero (checked by
// TestAllocClientIsFree), so the figure is the server's.
func TestZeroAllocs(t *testing.T) { testZeroAllocs(t, nil) }

// testZeroAllocs is TestZeroAllocs on srv (nil: a zero Server).
func testZeroAllocs(t *testing.T, srv *Server) {
	if testing.Short() {
		t.Skip("short")
	}
	_, addr := startServer(t, srv, func(c *Ctx) {
		c.SetHeader("Content-Type", "text/plain")
		c.WriteString("Hello, World!")
	})
	var many strings.Builder
	many.WriteString("GET /plaintext?x=1 HTTP/1.1\r\nHost: localhost\r\n")
	for i := 0; i < 19; i++ {
		many.WriteString("X-Header-" + string(rune('a'+i)) + ": some typical header value\r\n")
	}
	many.WriteString("\r\n")
	for _, tc := range []struct{ name, req string }{
		{"GET /", "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"},
		{"20-header GET", many.String()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ac := newAllocClient(t, addr, tc.req)
			allocs := testing.AllocsPerRun(2000, ac.roundTrip)
			if allocs != 0 {
				t.Errorf("%s: %v allocs per request, want 0", tc.name, allocs)
			}
			// AllocsPerRun rounds down; count exactly too. The clock's
			// once-a-second timer is the only other allocator in the
			// process, so a handful over 2000 requests is tolerated.
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for i := 0; i < 2000; i++ {
				ac.roundTrip()
			}
			runtime.ReadMemStats(&after)
			n := after.Mallocs - before.Mallocs
			t.Logf("%s: AllocsPerRun %v; exactly %d mallocs in 2000 requests", tc.name, allocs, n)
			if n > 20 {
				t.Errorf("%s: %d mallocs in 2000 requests", tc.name, n)
			}
		})
	}
}

// allocClient is a client that does not allocate per round trip.
type allocClient struct {
	t    testing.TB
	nc   net.Conn
	req  []byte
	buf  []byte
	size int // response length, learnt from the first response
}

func newAllocClient(t testing.TB, addr, req string) *allocClient {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return newAllocClientOn(t, nc, req)
}

// newAllocClientOn is newAllocClient on a connection already made (a
// TLS one, say); the client closes it at the end of the test.
func newAllocClientOn(t testing.TB, nc net.Conn, req string) *allocClient {
	t.Cleanup(func() { nc.Close() })
	ac := &allocClient{t: t, nc: nc, req: []byte(req), buf: make([]byte, 4096)}
	// Learn the response length: the head ends with CRLF CRLF and the body
	// is "Hello, World!" (Date has a fixed width, so every response is the
	// same length).
	nc.Write(ac.req)
	n := 0
	for !bytes.HasSuffix(ac.buf[:n], []byte("Hello, World!")) {
		m, err := nc.Read(ac.buf[n:])
		if err != nil {
			t.Fatal(err)
		}
		n += m
	}
	ac.size = n
	return ac
}

func (ac *allocClient) roundTrip() {
	if _, err := ac.nc.Write(ac.req); err != nil {
		ac.t.Fatal(err)
	}
	for n := 0; n < ac.size; {
		m, err := ac.nc.Read(ac.buf[n:ac.size])
		if err != nil {
			ac.t.Fatal(err)
		}
		n += m
	}
}

// TestAllocClientIsFree shows that the measuring client costs nothing: the
// same round trip against a minimal echo-free responder that never
// allocates.
func TestAllocClientIsFree(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const canned = "HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nHello, World!"
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		buf := make([]byte, 4096)
		out := []byte(canned)
		for {
			if _, err := nc.Read(buf); err != nil {
				return
			}
			nc.Write(out)
		}
	}()
	ac := newAllocClient(t, ln.Addr().String(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if a := testing.AllocsPerRun(1000, ac.roundTrip); a != 0 {
		t.Errorf("client + trivial server: %v allocs per round trip, want 0", a)
	}
}

// BenchmarkLoopback measures a keep-alive round trip over loopback with the
// allocation-free client: go test -run - -bench Loopback -benchmem .
func BenchmarkLoopback(b *testing.B) {
	_, addr := startServer(b, nil, func(c *Ctx) {
		c.SetHeader("Content-Type", "text/plain")
		c.WriteString("Hello, World!")
	})
	ac := newAllocClient(b, addr, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
	b.ReportAllocs()
	for b.Loop() {
		ac.roundTrip()
	}
}

// BenchmarkPipelined16 sends 16 pipelined requests per write.
func BenchmarkPipelined16(b *testing.B) {
	_, addr := startServer(b, nil, func(c *Ctx) {
		c.SetHeader("Content-Type", "text/plain")
		c.WriteString("Hello, World!")
	})
	one := "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"
	ac := newAllocClient(b, addr, one)
	ac.req = []byte(strings.Repeat(one, 16))
	ac.size *= 16
	if len(ac.buf) < ac.size {
		ac.buf = make([]byte, ac.size)
	}
	b.ReportAllocs()
	for b.Loop() {
		ac.roundTrip()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(16*b.N), "ns/request")
}

// memConn is an in-memory net.Conn for engine benchmarks: each Read returns
// the same batch of pipelined requests until n batches were read, then EOF;
// writes are discarded.
type memConn struct {
	net.Conn // nil: methods not overridden must not be called
	batch    []byte
	left     int
	written  int
}

func (m *memConn) Read(p []byte) (int, error) {
	if m.left == 0 {
		return 0, io.EOF
	}
	m.left--
	return copy(p, m.batch), nil
}
func (m *memConn) Write(p []byte) (int, error)      { m.written += len(p); return len(p), nil }
func (m *memConn) Close() error                     { return nil }
func (m *memConn) SetReadDeadline(time.Time) error  { return nil }
func (m *memConn) SetWriteDeadline(time.Time) error { return nil }
func (m *memConn) SetDeadline(time.Time) error      { return nil }
func (m *memConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (m *memConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }

// BenchmarkEngine measures the engine and codec alone, without syscalls:
// 16 pipelined GETs per read, served by the native hello handler.
func BenchmarkEngine(b *testing.B) {
	benchServeMem(b, HandlerFunc(func(c *Ctx) {
		c.SetHeader("Content-Type", "text/plain")
		c.WriteString("Hello, World!")
	}), "GET /plaintext HTTP/1.1\r\nHost: localhost\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n")
}

// benchServeMem serves request one, 16 pipelined per read of a memConn,
// with h, b.N times: the engine, codec and h without syscalls.
func benchServeMem(b *testing.B, h Handler, one string) {
	s := &Server{Handler: h}
	s.init()
	clock.Acquire() // as Serve does
	defer clock.Release()
	m := &memConn{batch: []byte(strings.Repeat(one, 16))}
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min((b.N-done+15)/16, 1<<16)
		m.left = n
		c := newConn(s, m)
		s.trackConn(c, true)
		c.serve()
		done += 16 * n
	}
}
