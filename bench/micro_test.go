package bench

// Micro-benchmarks comparing the servers over in-memory connections, so that
// kernel and loopback costs drop out and allocations per request show. Run:
//
//	go -C bench test -run '^$' -bench . -benchmem -count 10 > new.txt
//	benchstat new.txt                     # one run
//	benchstat -col /lib new.txt           # libraries side by side
//
// Every server benchmark uses the same client (memClient) over the same
// transport (memListener, buffered in-memory pipes), so differences are the
// servers'. Names are Benchmark<What>/lib=<library>.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/riptide-http/riptide/h1"
	"github.com/valyala/fasthttp"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/fastroutes"
	"github.com/riptide-http/riptide/bench/internal/stdroutes"
)

// memListener is a net.Listener whose connections are in-memory pipes (memPipe).
type memListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *memListener) Addr() net.Addr { return memAddr{} }

// Dial returns the client end of a new connection.
func (l *memListener) Dial() (net.Conn, error) {
	client, server := memPipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

type memAddr struct{}

func (memAddr) Network() string { return "mem" }
func (memAddr) String() string  { return "127.0.0.1:1" }

// microServer is a server under test, started on a memListener.
type microServer struct {
	name  string
	start func(ln net.Listener) (stop func())
}

func microServers() []microServer {
	return append([]microServer{
		{"nethttp", func(ln net.Listener) func() {
			s := &http.Server{Handler: stdroutes.Mux(benchserver.ProfileBench)}
			go s.Serve(ln)
			return func() { s.Close() }
		}},
		{"chi", func(ln net.Listener) func() {
			s := &http.Server{Handler: stdroutes.Chi(benchserver.ProfileBench)}
			go s.Serve(ln)
			return func() { s.Close() }
		}},
		{"fasthttp", func(ln net.Listener) func() {
			s := &fasthttp.Server{Handler: fastroutes.Handler(benchserver.ProfileBench)}
			go s.Serve(ln)
			return func() { s.Shutdown() }
		}},
	}, riptideMicroServers()...)
}

// memClient sends canned requests on one connection and reads responses
// with a minimal Content-Length parser, the same for every server.
type memClient struct {
	c   net.Conn
	br  *bufio.Reader
	buf []byte
}

func newMemClient(ln *memListener) (*memClient, error) {
	c, err := ln.Dial()
	if err != nil {
		return nil, err
	}
	return &memClient{c: c, br: bufio.NewReaderSize(c, 16<<10), buf: make([]byte, 0, 64<<10)}, nil
}

var errNoLength = errors.New("response without Content-Length")

// do writes req and reads one response, returning its body (valid until the
// next call).
func (m *memClient) do(req []byte) ([]byte, error) {
	if _, err := m.c.Write(req); err != nil {
		return nil, err
	}
	status := true
	n := -1
	for {
		line, err := m.br.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		if status {
			if len(line) < 12 || string(line[9:12]) != "200" {
				return nil, fmt.Errorf("unexpected status line %q", line)
			}
			status = false
			continue
		}
		if len(line) <= 2 {
			break
		}
		if len(line) > 16 && bytes.EqualFold(line[:15], []byte("content-length:")) {
			n, err = strconv.Atoi(string(bytes.TrimSpace(line[15:])))
			if err != nil {
				return nil, err
			}
		}
	}
	if n < 0 {
		return nil, errNoLength
	}
	m.buf = m.buf[:n]
	_, err := io.ReadFull(m.br, m.buf)
	return m.buf, err
}

var (
	reqGET      = []byte("GET / HTTP/1.1\r\nHost: bench\r\n\r\n")
	reqGETClose = []byte("GET / HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n")
	reqJSON     = []byte("GET /json HTTP/1.1\r\nHost: bench\r\n\r\n")
)

// forEachServer runs bench against every server as a sub-benchmark.
func forEachServer(b *testing.B, bench func(b *testing.B, ln *memListener)) {
	for _, s := range microServers() {
		b.Run("lib="+s.name, func(b *testing.B) {
			ln := newMemListener()
			stop := s.start(ln)
			defer func() { b.StopTimer(); ln.Close(); stop() }() // fasthttp's Shutdown polls: keep it untimed
			b.ReportAllocs()
			bench(b, ln)
		})
	}
}

// keepAlive sends req n times on one connection, checking the body.
func keepAlive(b *testing.B, ln *memListener, req []byte, want string) {
	c, err := newMemClient(ln)
	if err != nil {
		b.Fatal(err)
	}
	defer c.c.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		body, err := c.do(req)
		if err != nil {
			b.Fatal(err)
		}
		if string(body) != want {
			b.Fatalf("body %q, want %q", body, want)
		}
	}
}

// BenchmarkGET is one GET / per new connection (connection setup, request,
// Connection: close).
func BenchmarkGET(b *testing.B) {
	forEachServer(b, func(b *testing.B, ln *memListener) {
		c := &memClient{br: bufio.NewReaderSize(nil, 16<<10), buf: make([]byte, 0, 64<<10)}
		for i := 0; i < b.N; i++ {
			conn, err := ln.Dial()
			if err != nil {
				b.Fatal(err)
			}
			c.c = conn // reuse the client's buffers: count the server's allocations
			c.br.Reset(conn)
			conn.SetDeadline(time.Now().Add(10 * time.Second))
			body, err := c.do(reqGETClose)
			if err != nil || string(body) != benchserver.Hello {
				b.Fatalf("body %q, err %v", body, err)
			}
			c.c.Close()
		}
	})
}

// BenchmarkKeepAlive is GET / repeated on one keep-alive connection.
func BenchmarkKeepAlive(b *testing.B) {
	forEachServer(b, func(b *testing.B, ln *memListener) { keepAlive(b, ln, reqGET, benchserver.Hello) })
}

// BenchmarkJSON is GET /json (encoded per request) on one keep-alive
// connection.
func BenchmarkJSON(b *testing.B) {
	forEachServer(b, func(b *testing.B, ln *memListener) {
		keepAlive(b, ln, reqJSON, `{"message":"Hello, World!"}`)
	})
}

// BenchmarkConcurrent is GET / from GOMAXPROCS×4 goroutines, each on its own
// keep-alive connection.
func BenchmarkConcurrent(b *testing.B) {
	forEachServer(b, func(b *testing.B, ln *memListener) {
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			c, err := newMemClient(ln)
			if err != nil {
				b.Error(err)
				return
			}
			defer c.c.Close()
			for pb.Next() {
				body, err := c.do(reqGET)
				if err != nil || string(body) != benchserver.Hello {
					b.Errorf("body %q, err %v", body, err)
					return
				}
			}
		})
	})
}

// parseInput is a typical browser request head with 10 header fields.
var parseInput = []byte("GET /static/app.js?v=42 HTTP/1.1\r\n" +
	"Host: www.example.com\r\n" +
	"User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n" +
	"Accept: */*\r\n" +
	"Accept-Language: en-US,en;q=0.5\r\n" +
	"Accept-Encoding: gzip, deflate, br\r\n" +
	"Referer: https://www.example.com/\r\n" +
	"Connection: keep-alive\r\n" +
	"Cookie: session=0123456789abcdef; theme=dark\r\n" +
	"Sec-Fetch-Dest: script\r\n" +
	"Cache-Control: no-cache\r\n" +
	"\r\n")

// BenchmarkParse parses parseInput's request head with each library's
// parser: net/http's http.ReadRequest, fasthttp's RequestHeader.Read and
// riptide's h1.Request.Parse.
func BenchmarkParse(b *testing.B) {
	b.Run("lib=nethttp", func(b *testing.B) {
		rd := bytes.NewReader(parseInput)
		br := bufio.NewReader(rd)
		b.ReportAllocs()
		b.SetBytes(int64(len(parseInput)))
		for i := 0; i < b.N; i++ {
			rd.Reset(parseInput)
			br.Reset(rd)
			if _, err := http.ReadRequest(br); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("lib=fasthttp", func(b *testing.B) {
		rd := bytes.NewReader(parseInput)
		br := bufio.NewReader(rd)
		var h fasthttp.RequestHeader
		b.ReportAllocs()
		b.SetBytes(int64(len(parseInput)))
		for i := 0; i < b.N; i++ {
			rd.Reset(parseInput)
			br.Reset(rd)
			h.Reset()
			if err := h.Read(br); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("lib=riptide-h1", func(b *testing.B) {
		var r h1.Request
		b.ReportAllocs()
		b.SetBytes(int64(len(parseInput)))
		for i := 0; i < b.N; i++ {
			if n, err := r.Parse(parseInput, nil); err != nil || n != len(parseInput) {
				b.Fatalf("n=%d err=%v", n, err)
			}
		}
	})
}

// BenchmarkWrite serialises a 200 text/plain response with a 13-byte body
// into a buffered writer: net/http's http.Response.Write, fasthttp's
// Response.Write and riptide's h1 Append* functions.
func BenchmarkWrite(b *testing.B) {
	body := []byte(benchserver.Hello)
	b.Run("lib=nethttp", func(b *testing.B) {
		bw := bufio.NewWriter(io.Discard)
		h := http.Header{"Content-Type": {"text/plain; charset=utf-8"}}
		rd := bytes.NewReader(body)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			rd.Reset(body)
			r := http.Response{StatusCode: 200, ProtoMajor: 1, ProtoMinor: 1, Header: h,
				ContentLength: int64(len(body)), Body: io.NopCloser(rd)}
			if err := r.Write(bw); err != nil {
				b.Fatal(err)
			}
			bw.Flush()
		}
	})
	b.Run("lib=fasthttp", func(b *testing.B) {
		bw := bufio.NewWriter(io.Discard)
		var r fasthttp.Response
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			r.Reset()
			r.Header.SetContentType("text/plain; charset=utf-8")
			r.SetBody(body)
			if err := r.Write(bw); err != nil {
				b.Fatal(err)
			}
			bw.Flush()
		}
	})
	b.Run("lib=riptide-h1", func(b *testing.B) {
		bw := bufio.NewWriter(io.Discard)
		buf := make([]byte, 0, 512)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			buf = h1.AppendStatusLine(buf[:0], 200)
			buf = h1.AppendHeader(buf, "Content-Type", "text/plain; charset=utf-8")
			buf = h1.AppendContentLength(buf, int64(len(body)))
			buf = append(buf, '\r', '\n')
			buf = append(buf, body...)
			bw.Write(buf)
			bw.Flush()
		}
	})
}
