package riptide

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// startServer serves h on a fresh 127.0.0.1 listener until the test ends and
// returns the address (serveTest). srv, if not nil, is used as the server
// (its Handler is set to h, unless h is nil).
func startServer(t testing.TB, srv *Server, h HandlerFunc) (*Server, string) {
	t.Helper()
	if srv == nil {
		srv = &Server{}
	}
	if h != nil {
		srv.Handler = h
	}
	if srv.Logger == nil {
		srv.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return srv, serveTest(t, srv, testServeOptions{}).Addr
}

// rawConn is a test client speaking raw bytes on one connection.
type rawConn struct {
	t  testing.TB
	nc net.Conn
	br *bufio.Reader
}

func dial(t testing.TB, addr string) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	return &rawConn{t: t, nc: nc, br: bufio.NewReader(nc)}
}

func (rc *rawConn) send(s string) {
	rc.t.Helper()
	if _, err := io.WriteString(rc.nc, s); err != nil {
		rc.t.Fatal(err)
	}
}

// resp reads one response to a request with the given method.
func (rc *rawConn) resp(method string) (*http.Response, string) {
	rc.t.Helper()
	res, err := http.ReadResponse(rc.br, &http.Request{Method: method})
	if err != nil {
		rc.t.Fatalf("reading response: %v", err)
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		rc.t.Fatalf("reading body: %v", err)
	}
	return res, string(b)
}

// closed reports whether the server closed the connection (EOF next).
func (rc *rawConn) closed() bool {
	rc.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := rc.br.ReadByte()
	return err != nil
}

func hello(c *Ctx) {
	c.SetHeader("Content-Type", "text/plain")
	c.WriteString("Hello, World!")
}

func TestHelloNetHTTPClient(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, hello)
	res, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(b) != "Hello, World!" || res.ContentLength != 13 ||
		res.Header.Get("Content-Type") != "text/plain" || res.Header.Get("Date") == "" {
		t.Fatalf("got %d %q %v", res.StatusCode, b, res.Header)
	}
}

func TestKeepAliveAndPipelining(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, func(c *Ctx) { c.Write(c.Path()) })
	rc := dial(t, addr)
	rc.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\nGET /c HTTP/1.1\r\nHost: x\r\n\r\n")
	for _, want := range []string{"/a", "/b", "/c"} {
		res, body := rc.resp("GET")
		if res.StatusCode != 200 || body != want || res.Close {
			t.Fatalf("got %d %q close=%v, want %q", res.StatusCode, body, res.Close, want)
		}
	}
}

// pipeListener hands out in-memory connections (net.Pipe): a Write by the
// client is seen whole by the server's next Read, which makes batching
// deterministic to test.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.closed) }); return nil }
func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// dial returns the client end of a new connection whose server end counts
// Write calls in *writes.
func (l *pipeListener) dial(writes *atomic.Int64) net.Conn {
	s, c := net.Pipe()
	l.conns <- &countingConn{Conn: s, writes: writes}
	return c
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// RFC 9112 §9.3.2: responses to pipelined requests come in request order;
// riptide serves every complete request in its buffer before writing, so
// the batch leaves in one write.
func TestPipelinedBatchIsOneWrite(t *testing.T) {
	t.Parallel()
	ln := newPipeListener()
	serveTest(t, &Server{Handler: HandlerFunc(func(c *Ctx) { c.Write(c.Path()) })}, testServeOptions{Listener: ln})
	var writes atomic.Int64
	nc := ln.dial(&writes)
	defer nc.Close()
	batch := ""
	for i := 0; i < 10; i++ {
		batch += fmt.Sprintf("GET /r%d HTTP/1.1\r\nHost: x\r\n\r\n", i)
	}
	go io.WriteString(nc, batch)
	br := bufio.NewReader(nc)
	for i := 0; i < 10; i++ {
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		if want := fmt.Sprintf("/r%d", i); string(b) != want {
			t.Fatalf("response %d: %q, want %q", i, b, want)
		}
	}
	if n := writes.Load(); n != 1 {
		t.Errorf("10 pipelined requests answered with %d writes, want 1", n)
	}
	// And a single request is a single write too.
	writes.Store(0)
	go io.WriteString(nc, "GET /one HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, err := http.ReadResponse(br, nil); err != nil {
		t.Fatal(err)
	}
	if n := writes.Load(); n != 1 {
		t.Errorf("one request answered with %d writes, want 1", n)
	}
}

// httpResponse is the subset of a response that readHTTP returns.
type httpResponse struct{ StatusCode int }

// readHTTP reads one complete response (body included) from rc.
func readHTTP(rc *rawConn) (*httpResponse, error) {
	res, err := http.ReadResponse(rc.br, nil)
	if err != nil {
		return nil, err
	}
	if _, err := io.ReadAll(res.Body); err != nil {
		return &httpResponse{res.StatusCode}, err
	}
	return &httpResponse{res.StatusCode}, nil
}

// TestErrServerClosedIsHTTPs: code ported from net/http compares Serve's
// error with http.ErrServerClosed (issue 28, item 6).
func TestErrServerClosedIsHTTPs(t *testing.T) {
	t.Parallel()
	srv := &Server{Handler: HandlerFunc(func(*Ctx) {})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != http.ErrServerClosed {
		t.Errorf("Serve returned %v, want http.ErrServerClosed", err)
	}
}

// The zero Server is usable: defaults are applied, no limit is zero by
// accident.
func TestZeroServerDefaults(t *testing.T) {
	t.Parallel()
	var s Server
	s.init()
	c := s.cfg
	if c.readHeader != DefaultReadHeaderTimeout || c.idle != DefaultIdleTimeout ||
		c.readBuf != DefaultReadBufferSize || c.writeBuf != DefaultWriteBufferSize || !c.keepAlive ||
		c.limits.MaxHeadBytes == 0 || c.limits.MaxHeaders == 0 {
		t.Fatalf("zero Server config %+v", c)
	}
	neg := Server{ReadHeaderTimeout: -1, IdleTimeout: -1}
	neg.init()
	if neg.cfg.readHeader != 0 || neg.cfg.idle != 0 {
		t.Fatal("negative timeouts must mean no limit")
	}
}

// MaxConns: a connection beyond the limit is answered 503 and closed.
func TestMaxConns(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, &Server{MaxConns: 1}, hello)
	first := dial(t, addr)
	first.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	first.resp("GET") // the first connection is now surely counted
	second := dial(t, addr)
	res, _ := second.resp("GET")
	if res.StatusCode != 503 || !res.Close {
		t.Fatalf("got %d close=%v, want 503 and close", res.StatusCode, res.Close)
	}
	first.nc.Close()
	// Once the first is gone, new connections are served again.
	for i := 0; ; i++ {
		rc := dial(t, addr)
		rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		if res, _ := rc.resp("GET"); res.StatusCode == 200 {
			break
		}
		if i == 100 {
			t.Fatal("still refused after the first connection closed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ConnState reports new, active, idle, active, closed for a two-request
// connection, and hijacked for a hijacked one.
func TestConnState(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	states := map[net.Conn][]ConnState{}
	closed := make(chan struct{}, 10)
	srv := &Server{ConnState: func(nc net.Conn, st ConnState) {
		mu.Lock()
		states[nc] = append(states[nc], st)
		mu.Unlock()
		if st == StateClosed || st == StateHijacked {
			closed <- struct{}{}
		}
	}}
	_, addr := startServer(t, srv, func(c *Ctx) {
		if string(c.Path()) == "/hijack" {
			nc, _, _ := c.Hijack()
			nc.Close()
			return
		}
		hello(c)
	})
	rc := dial(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	rc.resp("GET")
	rc.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	rc.resp("GET")
	<-closed
	rc = dial(t, addr)
	rc.send("GET /hijack HTTP/1.1\r\nHost: x\r\n\r\n")
	<-closed
	mu.Lock()
	defer mu.Unlock()
	var got []string
	for _, s := range states {
		got = append(got, fmt.Sprint(s))
	}
	want1 := fmt.Sprint([]ConnState{StateNew, StateActive, StateIdle, StateActive, StateClosed})
	want2 := fmt.Sprint([]ConnState{StateNew, StateActive, StateHijacked})
	if len(got) != 2 || !(got[0] == want1 && got[1] == want2 || got[1] == want1 && got[0] == want2) {
		t.Fatalf("states %v, want %s and %s", got, want1, want2)
	}
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
