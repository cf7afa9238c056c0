package riptide

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A nil Handler answers 404.
func TestNilHandler(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, &Server{}, nil)
	rc := dial(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if res, _ := rc.resp("GET"); res.StatusCode != 404 {
		t.Fatalf("got %d", res.StatusCode)
	}
}

// Slowloris: a head trickling in is cut at ReadHeaderTimeout (408, close),
// however steadily bytes keep arriving.
func TestSlowlorisClosedAtHeaderTimeout(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, &Server{ReadHeaderTimeout: 300 * time.Millisecond}, hello)
	rc := dial(t, addr)
	head := "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("a", 1000)
	var werr error
	for i := 0; i < len(head) && werr == nil; i++ {
		_, werr = rc.nc.Write([]byte{head[i]})
		time.Sleep(10 * time.Millisecond) // a byte every 10 ms: never idle
	}
	if werr == nil {
		t.Fatal("server still reading a head after 1000 slow bytes")
	}
	res, _ := rc.resp("GET")
	if res.StatusCode != 408 || !res.Close {
		t.Fatalf("got %d close=%v, want 408 and close", res.StatusCode, res.Close)
	}
}

// IdleTimeout closes a keep-alive connection that sends nothing.
func TestIdleTimeout(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, &Server{IdleTimeout: 100 * time.Millisecond}, hello)
	rc := dial(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	rc.resp("GET")
	if !rc.closed() {
		t.Fatal("idle connection not closed")
	}
}

// WriteTimeout fails writes to a client that stops reading.
func TestWriteTimeout(t *testing.T) {
	t.Parallel()
	errc := make(chan error, 1)
	_, addr := startServer(t, &Server{WriteTimeout: 100 * time.Millisecond}, func(c *Ctx) {
		chunk := make([]byte, 1<<20)
		for i := 0; i < 1024; i++ { // up to 1 GiB: far beyond socket buffers
			if _, err := c.Write(chunk); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	})
	rc := dial(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if err := <-errc; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("got %v, want a deadline error", err)
	}
}

// Head limits map to 431 (and the request line to 414), with Connection:
// close.
func TestHeadLimits(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, &Server{MaxHeaderBytes: 1024, MaxHeaderCount: 5}, hello)
	for _, tc := range []struct {
		name, req string
		status    int
	}{
		{"MaxHeaderCount", "GET / HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 1\r\nC: 1\r\nD: 1\r\nE: 1\r\n\r\n", 431},
		{"MaxHeaderBytes", "GET / HTTP/1.1\r\nHost: x\r\nA: " + strings.Repeat("a", 2000) + "\r\n\r\n", 431},
		{"request line", "GET /" + strings.Repeat("a", 9000) + " HTTP/1.1\r\nHost: x\r\n\r\n", 414},
	} {
		addr := addr
		if tc.status == 414 {
			// The whole head limit would fire first with MaxHeaderBytes
			// 1024; the request-line limit is h1's 8 KiB default.
			_, addr = startServer(t, nil, hello)
		}
		rc := dial(t, addr)
		rc.send(tc.req)
		res, _ := rc.resp("GET")
		if res.StatusCode != tc.status || !res.Close {
			t.Errorf("%s: got %d close=%v, want %d", tc.name, res.StatusCode, res.Close, tc.status)
		}
	}
}

// Parse errors get a canned response with Connection: close; responses to
// earlier pipelined requests go out whole before it (RFC 9112 §9.3.2).
func TestParseErrors(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, hello)
	for _, tc := range []struct {
		rule, req string
		status    int
	}{
		{"RFC 9112 §3: malformed request line", "GET /\r\nHost: x\r\n\r\n", 400},
		{"RFC 9112 §2.3: unsupported version", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505},
		{"RFC 9112 §6.1: unknown transfer coding", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked, zz\r\n\r\n", 400},
		{"RFC 9112 §7: unsupported coding", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: br, chunked\r\n\r\n", 501},
		{"RFC 9112 §3.2: missing Host", "GET / HTTP/1.1\r\n\r\n", 400},
		{"RFC 9112 §6.3: CL and TE", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
		{"RFC 9112 §2.2: bare LF", "GET / HTTP/1.1\nHost: x\n\n", 400},
	} {
		rc := dial(t, addr)
		rc.send("GET /first HTTP/1.1\r\nHost: x\r\n\r\n" + tc.req)
		if res, body := rc.resp("GET"); res.StatusCode != 200 || body != "Hello, World!" {
			t.Errorf("%s: first response %d %q", tc.rule, res.StatusCode, body)
		}
		res, _ := rc.resp("GET")
		if res.StatusCode != tc.status || !res.Close || !rc.closed() {
			t.Errorf("%s: got %d close=%v, want %d and close", tc.rule, res.StatusCode, res.Close, tc.status)
		}
	}
}

// MaxRequestsPerConn: the last allowed response carries Connection: close.
func TestMaxRequestsPerConn(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, &Server{MaxRequestsPerConn: 2}, hello)
	rc := dial(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if res, _ := rc.resp("GET"); res.Close {
		t.Fatal("first response closes")
	}
	if res, _ := rc.resp("GET"); !res.Close || !rc.closed() {
		t.Fatal("second response does not close")
	}
}

// DisableKeepAlive closes after every response.
func TestDisableKeepAlive(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, &Server{DisableKeepAlive: true}, hello)
	rc := dial(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if res, _ := rc.resp("GET"); !res.Close || !rc.closed() {
		t.Fatal("keep-alive not disabled")
	}
}

// A panicking handler: 500 and close when nothing was sent, a cut
// connection when part of the response was; logged; the server keeps
// serving new connections.
func TestPanicRecovery(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	_, addr := startServer(t, &Server{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, func(c *Ctx) {
		switch string(c.Path()) {
		case "/panic":
			c.WriteString("partial")
			panic("boom")
		case "/panic-streaming":
			c.WriteString("partial")
			c.Flush()
			panic("boom after flush")
		case "/abort":
			panic(ErrAbortHandler)
		}
		hello(c)
	})
	rc := dial(t, addr)
	rc.send("GET /ok HTTP/1.1\r\nHost: x\r\n\r\nGET /panic HTTP/1.1\r\nHost: x\r\n\r\n")
	if res, body := rc.resp("GET"); res.StatusCode != 200 || body != "Hello, World!" {
		t.Fatalf("pipelined response before the panic: %d %q", res.StatusCode, body)
	}
	res, body := rc.resp("GET")
	if res.StatusCode != 500 || !res.Close || strings.Contains(body, "partial") || !rc.closed() {
		t.Fatalf("panic: got %d close=%v %q", res.StatusCode, res.Close, body)
	}

	rc = dial(t, addr)
	rc.send("GET /panic-streaming HTTP/1.1\r\nHost: x\r\n\r\n")
	if res, err := readHTTP(rc); err == nil {
		t.Fatalf("panic after flush: complete response %d", res.StatusCode)
	}

	for i := 0; i < 3; i++ {
		rc := dial(t, addr)
		rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		if res, body := rc.resp("GET"); res.StatusCode != 200 || body != "Hello, World!" {
			t.Fatalf("after panics: %d %q", res.StatusCode, body)
		}
	}
	rc = dial(t, addr)
	rc.send("GET /abort HTTP/1.1\r\nHost: x\r\n\r\n")
	rc.resp("GET")
	if l := logs.String(); strings.Count(l, "panic serving request") != 2 || !strings.Contains(l, "boom") ||
		!strings.Contains(l, "goroutine") {
		t.Fatalf("log: %s", l)
	}
}

// Accepted connections have TCP_NODELAY set, so responses are not held
// back by Nagle's algorithm.
func TestNoDelay(t *testing.T) {
	t.Parallel()
	got := make(chan int, 1)
	srv := &Server{ConnState: func(nc net.Conn, st ConnState) {
		if st != StateActive {
			return
		}
		raw, err := nc.(syscall.Conn).SyscallConn() // *net.TCPConn or the event loop's conn
		if err != nil {
			t.Error(err)
			return
		}
		raw.Control(func(fd uintptr) {
			v, _ := getsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY)
			select {
			case got <- v:
			default:
			}
		})
	}}
	_, addr := startServer(t, srv, hello)
	rc := dial(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	rc.resp("GET")
	if v := <-got; v == 0 {
		t.Fatal("TCP_NODELAY is off")
	}
}

// A read deadline more than two seconds ahead (which the event loop checks
// against its one-second clock, without a clock read) still fails a stalled
// body read, and not before it is due.
func TestReadDeadlineFarAhead(t *testing.T) {
	t.Parallel()
	type result struct {
		err   error
		early bool
	}
	res := make(chan result, 1)
	_, addr := startServer(t, &Server{}, func(c *Ctx) {
		dl := time.Now().Add(2200 * time.Millisecond)
		c.SetReadDeadline(dl)
		_, err := io.ReadAll(c.Body())
		res <- result{err, time.Now().Before(dl)}
	})
	rc := dial(t, addr)
	rc.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
	if r := <-res; !errors.Is(r.err, os.ErrDeadlineExceeded) || r.early {
		t.Fatalf("got %v (early: %v), want a deadline error once the deadline passed", r.err, r.early)
	}
}
