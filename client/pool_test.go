package client

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide/h1"
)

func TestPoolMaxConnsPerHost(t *testing.T) {
	var open, peak atomic.Int32
	release := make(chan struct{})
	s := newRawServer(t, func(c net.Conn, req *h1.Request, body []byte) bool {
		if n := open.Add(1); n > peak.Load() {
			peak.Store(n)
		}
		<-release
		open.Add(-1)
		c.Write([]byte(helloResp))
		return true
	})
	c := &Client{MaxConnsPerHost: 2}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var req Request
			var resp Response
			req.SetURL(s.url("/"))
			errs <- c.Do(context.Background(), &req, &resp)
		}()
	}
	// Wait until two requests are inside the server, then let all go.
	for open.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := s.accepts.Load(); n > 2 {
		t.Fatalf("server accepted %d connections, MaxConnsPerHost is 2", n)
	}
	if p := peak.Load(); p > 2 {
		t.Fatalf("%d requests in flight at once, want at most 2", p)
	}
}

func TestPoolWaitHonoursContext(t *testing.T) {
	block := make(chan struct{})
	s := newRawServer(t, func(c net.Conn, req *h1.Request, body []byte) bool {
		<-block
		c.Write([]byte(helloResp))
		return true
	})
	defer close(block)
	c := &Client{MaxConnsPerHost: 1}
	started := make(chan struct{})
	go func() {
		var req Request
		var resp Response
		req.SetURL(s.url("/"))
		close(started)
		c.Do(context.Background(), &req, &resp)
	}()
	<-started
	for s.reqs.Load() < 1 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	var req Request
	var resp Response
	req.SetURL(s.url("/"))
	if err := c.Do(ctx, &req, &resp); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting for a connection: got %v, want context.DeadlineExceeded", err)
	}
}

// closingServer answers each request and closes the connection without
// saying so, then signals closed.
func closingServer(t *testing.T, closed chan<- struct{}) *rawServer {
	return newRawServer(t, func(c net.Conn, req *h1.Request, body []byte) bool {
		c.Write([]byte(helloResp))
		c.(*net.TCPConn).Close()
		closed <- struct{}{}
		return false
	})
}

// TestIdleCloseDetectedBeforeReuse: the server closes each connection
// right after answering, without saying so. For a request that cannot be
// retried (a GET with retries disabled, a POST), the next request can only
// succeed if the client notices the close while the connection is idle,
// before writing to it.
func TestIdleCloseDetectedBeforeReuse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		method  string
		retries int
	}{
		{"GET-no-retries", "GET", -1},
		{"POST", "POST", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			closed := make(chan struct{}, 10)
			s := closingServer(t, closed)
			c := &Client{MaxRetries: tc.retries}
			var req Request
			var resp Response
			req.SetURL(s.url("/"))
			req.SetMethod(tc.method)
			if tc.method == "POST" {
				req.SetBody([]byte("payload"))
			}
			for i := 0; i < 5; i++ {
				if err := c.Do(context.Background(), &req, &resp); err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				<-closed
				// Wait until the FIN has reached the client's socket.
				p := req.pool
				waitFor(t, func() bool {
					p.mu.Lock()
					defer p.mu.Unlock()
					return len(p.idle) == 0 || !p.idle[0].live.alive()
				})
			}
			if n := s.accepts.Load(); n != 5 {
				t.Fatalf("accepts = %d, want 5 (one fresh connection per request)", n)
			}
			if total, idle := req.pool.stats(); total > 1 || idle > 1 {
				t.Fatalf("pool holds %d connections (%d idle), want at most 1", total, idle)
			}
		})
	}
}

// TestFreshIdleCloseRetried: a GET reusing a connection moments after the
// server closed it succeeds: the close is seen before reuse (conn.quiet) or,
// when the FIN is still in flight, the request is retried on a new
// connection.
func TestFreshIdleCloseRetried(t *testing.T) {
	closed := make(chan struct{}, 10)
	s := closingServer(t, closed)
	c := &Client{}
	var req Request
	var resp Response
	req.SetURL(s.url("/"))
	for i := 0; i < 5; i++ {
		if err := c.Do(context.Background(), &req, &resp); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if string(resp.Body()) != "Hello, World!" {
			t.Fatalf("request %d: body %q", i, resp.Body())
		}
		<-closed
	}
	if n := s.accepts.Load(); n != 5 {
		t.Fatalf("accepts = %d, want 5 (one fresh connection per request)", n)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 5000; i++ {
		if cond() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("condition not reached")
}

func TestIdleTimeoutClosesConnections(t *testing.T) {
	s := newRawServer(t, fixed(helloResp))
	c := &Client{IdleTimeout: 20 * time.Millisecond}
	var req Request
	var resp Response
	req.SetURL(s.url("/"))
	if err := c.Do(context.Background(), &req, &resp); err != nil {
		t.Fatal(err)
	}
	if _, idle := req.pool.stats(); idle != 1 {
		t.Fatalf("idle = %d, want 1", idle)
	}
	waitFor(t, func() bool { total, _ := req.pool.stats(); return total == 0 })
	if err := c.Do(context.Background(), &req, &resp); err != nil {
		t.Fatal(err)
	}
	if n := s.accepts.Load(); n != 2 {
		t.Fatalf("accepts = %d, want 2", n)
	}
}

// retryServer answers the first request on each connection and then, on
// the second, closes the connection without answering, as a server whose
// keep-alive timeout fired while the request was in flight would.
func retryServer(t *testing.T) *rawServer {
	return newRawServer(t, func() func(net.Conn, *h1.Request, []byte) bool {
		var mu sync.Mutex
		served := map[net.Conn]int{}
		return func(c net.Conn, req *h1.Request, body []byte) bool {
			mu.Lock()
			served[c]++
			n := served[c]
			mu.Unlock()
			if n == 2 {
				return false
			}
			c.Write([]byte(helloResp))
			return true
		}
	}())
}

func TestRetryIdempotentOnReusedConn(t *testing.T) {
	s := retryServer(t)
	c := &Client{}
	var req Request
	var resp Response
	req.SetURL(s.url("/"))
	for i := 0; i < 4; i++ {
		if err := c.Do(context.Background(), &req, &resp); err != nil {
			t.Fatalf("GET %d: %v", i, err)
		}
	}
	// Requests 2, 3 and 4 each find their reused connection dropped and are
	// retried on a fresh one.
	if n := s.accepts.Load(); n != 4 {
		t.Fatalf("accepts = %d, want 4 (three retries on fresh connections)", n)
	}
}

func TestNoRetryNonIdempotent(t *testing.T) {
	s := retryServer(t)
	c := &Client{}
	var req Request
	var resp Response
	req.SetURL(s.url("/"))
	req.SetMethod("POST")
	req.SetBodyString("x")
	if err := c.Do(context.Background(), &req, &resp); err != nil {
		t.Fatal(err)
	}
	err := c.Do(context.Background(), &req, &resp)
	if !errors.Is(err, ErrServerClosed) {
		t.Fatalf("POST on a connection the server dropped: got %v, want ErrServerClosed", err)
	}
	if n := s.accepts.Load(); n != 1 {
		t.Fatalf("accepts = %d, want 1 (no retry)", n)
	}
	// With an Idempotency-Key the POST is retried.
	req.AddHeader("Idempotency-Key", "k1")
	if err := c.Do(context.Background(), &req, &resp); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(context.Background(), &req, &resp); err != nil {
		t.Fatalf("POST with Idempotency-Key: %v", err)
	}
}

func TestConcurrentDoRace(t *testing.T) {
	s := newRawServer(t, fixed(helloResp))
	c := &Client{MaxConnsPerHost: 4}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var req Request
			var resp Response
			req.SetURL(s.url("/"))
			for i := 0; i < 50; i++ {
				if err := c.Do(context.Background(), &req, &resp); err != nil || string(resp.Body()) != "Hello, World!" {
					t.Errorf("Do: %v %q", err, resp.Body())
					return
				}
			}
		}()
	}
	wg.Wait()
	if n := s.accepts.Load(); n > 4 {
		t.Fatalf("accepts = %d, want at most 4", n)
	}
}
