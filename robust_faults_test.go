package riptide_test

// Misbehaving clients: resets in the middle of a request or a response,
// half-closes, a client that stops reading a large response, and slowloris
// connections trickling bytes while normal traffic goes on.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
)

// resetConn closes nc with an RST instead of a FIN.
func resetConn(nc net.Conn) {
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	nc.Close()
}

func TestRobustClientResets(t *testing.T) {
	if riptide.InOwnProcess(t) {
		return // ran in a process of its own
	}
	ls := startLive(t, fuzzServer())
	healthy(t, ls.addr)
	base := backToBaseline(t, measure(false), "warm-up")
	rounds := size(40, 2000)

	cases := []struct {
		name string
		run  func(nc net.Conn) error
	}{
		{"mid-head", func(nc net.Conn) error {
			_, err := io.WriteString(nc, "GET /stream HTTP/1.1\r\nHost: a\r\nX-Long: ")
			return err
		}},
		{"mid-body", func(nc net.Conn) error {
			_, err := io.WriteString(nc, "POST /readbody HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\n"+strings.Repeat("b", 5000))
			return err
		}},
		{"mid-chunked-body", func(nc net.Conn) error {
			_, err := io.WriteString(nc, "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1000\r\n"+strings.Repeat("c", 100))
			return err
		}},
		{"mid-response", func(nc net.Conn) error {
			if _, err := io.WriteString(nc, "GET /big HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
				return err
			}
			_, err := io.ReadFull(nc, make([]byte, 20000)) // part of a 100 KiB body
			return err
		}},
		{"mid-large-response", func(nc net.Conn) error {
			if _, err := io.WriteString(nc, "GET /huge HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
				return err
			}
			_, err := io.ReadFull(nc, make([]byte, 20000)) // of 4 MiB: the server is blocked writing
			return err
		}},
		{"mid-stream", func(nc net.Conn) error {
			if _, err := io.WriteString(nc, "GET /stream HTTP/1.1\r\nHost: a\r\n\r\n"); err != nil {
				return err
			}
			_, err := nc.Read(make([]byte, 64))
			return err
		}},
		{"mid-pipeline", func(nc net.Conn) error {
			_, err := io.WriteString(nc, strings.Repeat("GET /big HTTP/1.1\r\nHost: a\r\n\r\n", 20))
			if err == nil {
				_, err = nc.Read(make([]byte, 1000))
			}
			return err
		}},
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(cases)*rounds)
	for _, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				nc, err := net.Dial("tcp", ls.addr)
				if err != nil {
					errs <- fmt.Errorf("%s %d: dial: %v", c.name, i, err)
					return
				}
				nc.SetDeadline(time.Now().Add(10 * time.Second))
				if err := c.run(nc); err != nil {
					errs <- fmt.Errorf("%s %d: %v", c.name, i, err)
				}
				resetConn(nc)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	after := backToBaseline(t, base, "after resets")
	healthy(t, ls.addr)
	t.Logf("%d resets (%d kinds × %d); before %v, after %v", len(cases)*rounds, len(cases), rounds, base, after)
}

// healthy checks that the server still answers a plain request.
func healthy(t testing.TB, addr string) {
	t.Helper()
	c, err := dialClient(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := c.do([]byte("POST /readbody HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nok"), false, 10*time.Second)
	if err != nil {
		t.Fatalf("server no longer answers: %v", err)
	}
	if err := expectBody(r, 200, []byte("read 2 body bytes, 0 args\n")); err != nil {
		t.Fatal(err)
	}
}

func TestRobustHalfClose(t *testing.T) {
	if riptide.InOwnProcess(t) {
		return // ran in a process of its own
	}
	ls := startLive(t, fuzzServer())
	serving(t, ls)
	base := backToBaseline(t, measure(false), "start")
	for i := range size(50, 2000) {
		nc, err := net.Dial("tcp", ls.addr)
		if err != nil {
			t.Fatal(err)
		}
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(nc, "GET /stream HTTP/1.1\r\nHost: a\r\n\r\n"+
			"POST /readbody HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"+
			"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"+
			"HEAD /big HTTP/1.1\r\nHost: a\r\n\r\n"+
			"GET /length HTTP/1.1\r\nHost: a\r\n\r\n")
		nc.(*net.TCPConn).CloseWrite()
		all, err := io.ReadAll(nc)
		nc.Close()
		if err != nil {
			t.Fatalf("round %d: %v after %d bytes", i, err, len(all))
		}
		// Every pipelined request is answered in full before the close.
		rd := newByteReader(all)
		want := []struct {
			head bool
			body string
		}{
			{false, "part 0 of a streamed body\npart 1 of a streamed body\npart 2 of a streamed body\n"},
			{false, "read 5 body bytes, 0 args\n"},
			{false, "read 3 body bytes, 0 args\n"},
			{true, ""},
			{false, "fixed"},
		}
		for k, w := range want {
			r, err := finalResponse(rd, w.head)
			if err != nil {
				t.Fatalf("round %d, response %d: %v\n%q", i, k, err, all)
			}
			if err := expectBody(r, 200, []byte(w.body)); err != nil {
				t.Fatalf("round %d, response %d: %v", i, k, err)
			}
		}
		if rest, _ := io.ReadAll(rd); len(rest) > 0 {
			t.Fatalf("round %d: %d bytes after the last response: %q", i, len(rest), rest)
		}
	}
	after := backToBaseline(t, base, "after half-closes")
	t.Logf("%d half-closed connections, 5 pipelined requests each, all answered in full; before %v, after %v", size(50, 2000), base, after)
}

// TestRobustStalledReader: a client asks for a large response and stops
// reading. WriteTimeout must end the write, the handler must see the error
// and the connection must close.
func TestRobustStalledReader(t *testing.T) {
	if riptide.InOwnProcess(t) {
		return // ran in a process of its own
	}
	writeErrs := make(chan error, 1024)
	var closedConns atomic.Int64
	srv := &riptide.Server{
		WriteTimeout: 300 * time.Millisecond,
		ConnState: func(_ net.Conn, st riptide.ConnState) {
			if st == riptide.StateClosed {
				closedConns.Add(1)
			}
		},
		Handler: riptide.HandlerFunc(func(c *riptide.Ctx) {
			chunk := bigBody[:1<<20]
			for range 256 { // at most 256 MiB: far more than socket buffers hold
				if _, err := c.Write(chunk); err != nil {
					writeErrs <- err
					return
				}
			}
			writeErrs <- nil
		}),
	}
	ls := startLive(t, srv)
	serving(t, ls)
	closedConns.Store(0) // the probe's (its StateClosed came before serving saw it closed)
	base := backToBaseline(t, measure(false), "start")
	n := size(8, 200)
	var conns []net.Conn
	for range n {
		nc, err := net.Dial("tcp", ls.addr)
		if err != nil {
			t.Fatal(err)
		}
		nc.(*net.TCPConn).SetReadBuffer(4096)
		conns = append(conns, nc)
		io.WriteString(nc, "GET /huge HTTP/1.1\r\nHost: a\r\n\r\n")
	}
	for i := range n {
		select {
		case err := <-writeErrs:
			if err == nil {
				t.Fatalf("handler wrote 256 MiB to a client that reads nothing")
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("after 60s only %d of %d handlers saw their write fail", i, n)
		}
	}
	// The server closed every stalled connection (the kernel may still be
	// trying to deliver what its send buffer held, which is why this is
	// asked of the server and not of the client's socket).
	deadline := time.Now().Add(30 * time.Second)
	for closedConns.Load() < int64(n) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := closedConns.Load(); got != int64(n) {
		t.Errorf("server closed %d of %d stalled connections", got, n)
	}
	for _, nc := range conns {
		resetConn(nc)
	}
	after := backToBaseline(t, base, "after stalled readers")
	t.Logf("%d stalled readers cut off by WriteTimeout; before %v, after %v", n, base, after)
}

// TestRobustSlowloris keeps slow clients trickling request heads (and some
// bodies) one byte at a time while normal clients run keep-alive requests.
// Every slow connection must be ended by the server's timeouts, and every
// normal request must succeed; normal requests' latency is logged.
func TestRobustSlowloris(t *testing.T) {
	if riptide.InOwnProcess(t) {
		return // ran in a process of its own
	}
	slow := size(200, 5000)
	normal := size(4, 16)
	duration := time.Duration(size(2, 30)) * time.Second
	tick := time.Duration(size(100, 1000)) * time.Millisecond
	timeout := time.Duration(size(500, 3000)) * time.Millisecond
	raiseNoFile(t, uint64(2*slow+1000))
	srv := fuzzServer()
	srv.ReadHeaderTimeout, srv.ReadBodyTimeout, srv.IdleTimeout = timeout, timeout, 10*time.Second
	ls := startLive(t, srv)
	healthy(t, ls.addr)
	base := backToBaseline(t, measure(false), "warm-up")

	stop := make(chan struct{})
	var (
		slowConns, slowEnded, got408 atomic.Int64
		normalOK                     atomic.Int64
		mu                           sync.Mutex
		latencies                    []time.Duration
		errs                         []string
		wg                           sync.WaitGroup
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		if len(errs) < 10 {
			errs = append(errs, fmt.Sprintf(format, args...))
		}
		mu.Unlock()
	}
	head := []byte("POST /readbody HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\nX-Pad: " + strings.Repeat("p", 200) + "\r\n\r\n")
	for i := range slow {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Stagger the start so that ticks spread over the interval.
			select {
			case <-time.After(time.Duration(i) * tick / time.Duration(slow)):
			case <-stop:
				return
			}
			for {
				select {
				case <-stop:
					return
				default:
				}
				nc, err := net.DialTimeout("tcp", ls.addr, 10*time.Second)
				if err != nil {
					fail("slow dial: %v", err)
					return
				}
				slowConns.Add(1)
				// One in four sends its head at once and trickles the body.
				bodyOnly := i%4 == 0
				msg := head
				if bodyOnly {
					nc.Write(head)
					msg = bytes.Repeat([]byte("b"), 100)
				}
				limit := time.Now().Add(timeout + 20*time.Second)
				ended := false
				for k := 0; k < len(msg) && !ended; k++ {
					nc.SetWriteDeadline(limit)
					if _, err := nc.Write(msg[k : k+1]); err != nil {
						ended = true // the server closed it
						break
					}
					// Between bytes, see whether the server answered/closed.
					nc.SetReadDeadline(time.Now().Add(tick))
					var one [512]byte
					n, err := nc.Read(one[:])
					switch {
					case n > 0:
						if bytes.HasPrefix(one[:n], []byte("HTTP/1.1 408")) || bytes.HasPrefix(one[:n], []byte("HTTP/1.1 400 ")) {
							got408.Add(1)
						}
						ended = true
					case err != nil && !isTimeoutErr(err):
						ended = true
					}
					if time.Now().After(limit) {
						fail("slow connection not ended %v after its first byte", timeout+20*time.Second)
						break
					}
				}
				if !ended {
					fail("slow connection sent its whole %d-byte message one byte per %v and was not cut off", len(msg), tick)
				}
				slowEnded.Add(1)
				nc.Close()
			}
		}()
	}
	time.Sleep(tick) // let the slow clients start
	for range normal {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dialClient(ls.addr)
			if err != nil {
				fail("normal dial: %v", err)
				return
			}
			defer c.Close()
			for {
				select {
				case <-stop:
					return
				default:
				}
				t0 := time.Now()
				r, err := c.do([]byte("POST /readbody HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"), false, 30*time.Second)
				if err == nil {
					err = expectBody(r, 200, []byte("read 5 body bytes, 0 args\n"))
				}
				if err != nil {
					fail("normal request: %v", err)
					return
				}
				d := time.Since(t0)
				normalOK.Add(1)
				mu.Lock()
				latencies = append(latencies, d)
				mu.Unlock()
			}
		}()
	}
	time.Sleep(duration)
	peak := measure(false)
	close(stop)
	wg.Wait()
	for _, e := range errs {
		t.Error(e)
	}
	if normalOK.Load() == 0 {
		t.Error("no normal request succeeded")
	}
	after := backToBaseline(t, base, "after slowloris")
	t.Logf("%d slow clients (%d connections, %d ended by the server, %d with a 408/400), %d normal requests ok, latency %s; before %v, during %v, after %v",
		slow, slowConns.Load(), slowEnded.Load(), got408.Load(), normalOK.Load(), percentiles(latencies), base, peak, after)
}

// newByteReader wraps a finished byte stream for the response reader.
func newByteReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }

// TestRobustCannedResponseToHEAD: the server's own error responses to a
// HEAD request carry no content (RFC 9110 §9.3.2), like any response to
// HEAD, and still close the connection.
func TestRobustCannedResponseToHEAD(t *testing.T) {
	t.Parallel()
	ls := startLive(t, &riptide.Server{Handler: riptide.HandlerFunc(robustHandler), MaxRequestBodySize: 10})
	for _, tc := range []struct {
		name, req string
		status    int
	}{
		{"RFC 9110 §10.1.1: unknown expectation", "HEAD / HTTP/1.1\r\nHost: a\r\nExpect: nonsense\r\n\r\n", 417},
		{"declared body over MaxRequestBodySize", "HEAD / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world", 413},
	} {
		nc, err := net.Dial("tcp", ls.addr)
		if err != nil {
			t.Fatal(err)
		}
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(nc, tc.req)
		all, err := io.ReadAll(nc)
		nc.Close()
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		br := newByteReader(all)
		r, err := finalResponse(br, true)
		if err != nil {
			t.Errorf("%s: %v in %q", tc.name, err, all)
			continue
		}
		rest, _ := io.ReadAll(br)
		if r.status != tc.status || !r.hasToken("Connection", "close") || len(rest) > 0 {
			t.Errorf("%s: got %d, Connection %q, %d bytes of content after the head (%q); want %d, close, none",
				tc.name, r.status, r.header.Get("Connection"), len(rest), rest, tc.status)
		}
	}
}
