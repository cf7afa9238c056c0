package riptide

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Graceful shutdown under load: clients hammer keep-alive connections,
// Shutdown is called mid-stream, and every request a handler started is
// answered completely (handler starts == complete responses received).
// Client-side failures are allowed only where HTTP/1.1 itself allows them:
// a refused dial, or a reused idle connection closed before any byte of a
// response (the request never reached a handler, and a client may retry
// it). A request in flight when Shutdown begins finishes, with Connection:
// close.
func TestShutdownUnderLoad(t *testing.T) {
	t.Parallel()
	var started, finished atomic.Int64
	slowIn := make(chan struct{})
	slowRelease := make(chan struct{})
	srv, addr := startServer(t, nil, func(c *Ctx) {
		started.Add(1)
		if string(c.Path()) == "/slow" {
			close(slowIn)
			<-slowRelease
		}
		c.WriteString("done")
		finished.Add(1)
	})

	var ok, retryable atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, 100)
	stop := make(chan struct{})
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				nc, err := net.Dial("tcp", addr)
				if err != nil {
					return // listener closed: shutdown has begun
				}
				br := bufio.NewReader(nc)
				for {
					if _, err := io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
						retryable.Add(1)
						break
					}
					if _, err := br.Peek(1); err != nil {
						retryable.Add(1) // closed before any response byte
						break
					}
					res, err := http.ReadResponse(br, nil)
					if err != nil {
						errc <- err
						break
					}
					b, err := io.ReadAll(res.Body)
					if err != nil || string(b) != "done" {
						errc <- errors.New("incomplete response: " + string(b))
						break
					}
					ok.Add(1)
					if res.Close {
						break
					}
				}
				nc.Close()
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	// Load runs until a few hundred requests are done, then a slow request
	// is put in flight and Shutdown begins.
	for ok.Load() < 300 {
		time.Sleep(time.Millisecond)
	}
	slow := dial(t, addr)
	slow.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
	<-slowIn
	shutdownErr := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		shutdownErr <- srv.Shutdown(ctx)
	}()
	// New connections are refused once the listener is closed.
	for {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		nc.Close()
		time.Sleep(time.Millisecond)
	}
	close(slowRelease)
	res, body := slow.resp("GET")
	if res.StatusCode != 200 || body != "done" || !res.Close {
		t.Errorf("in-flight request: %d %q close=%v, want 200 with Connection: close", res.StatusCode, body, res.Close)
	}
	if err := <-shutdownErr; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	close(stop)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Errorf("client: %v", err)
	}
	t.Logf("ok %d, retryable %d, handlers started %d finished %d", ok.Load(), retryable.Load(), started.Load(), finished.Load())
	// +1: the slow request was read by the helper connection, not counted in ok.
	if s, f := started.Load(), finished.Load(); s != f || s != ok.Load()+1 {
		t.Fatalf("handlers started %d, finished %d, complete responses %d+1: a request was lost", s, f, ok.Load())
	}
}

// Shutdown closes idle keep-alive connections at once and honours its
// context when a handler does not finish.
func TestShutdownIdleAndDeadline(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}), make(chan struct{})
	srv, addr := startServer(t, nil, func(c *Ctx) {
		if string(c.Path()) == "/hang" {
			close(started)
			<-release
		}
		hello(c)
	})
	// Registered after the server's cleanup, so it runs first: a failure
	// before the release below ends the test instead of leaving Close
	// waiting for the hung handler.
	unblock := sync.OnceFunc(func() { close(release) })
	t.Cleanup(unblock)
	idle := dial(t, addr)
	idle.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	idle.resp("GET")
	hang := dial(t, addr)
	hang.send("GET /hang HTTP/1.1\r\nHost: x\r\n\r\n")
	<-started // a request not yet read is not one in flight: Shutdown may close its connection

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := srv.Shutdown(ctx); err != context.DeadlineExceeded {
		t.Fatalf("Shutdown with a hung handler: %v, want DeadlineExceeded", err)
	}
	if !idle.closed() {
		t.Fatal("idle connection not closed")
	}
	unblock()
	if err := srv.ListenAndServe("127.0.0.1:0"); err != ErrServerClosed {
		t.Fatalf("ListenAndServe after Shutdown: %v", err)
	}
}

// Close closes everything at once.
func TestClose(t *testing.T) {
	t.Parallel()
	srv, addr := startServer(t, nil, hello)
	rc := dial(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	rc.resp("GET")
	srv.Close()
	if !rc.closed() {
		t.Fatal("connection open after Close")
	}
}

// TestShutdownWhileAccepting: Shutdown while connections keep arriving
// returns. (On the event loop, accepting registered each socket while it
// still held the listener's descriptor, taking the server's lock, which
// Shutdown holds while it closes the listener: the two waited on each
// other for good.)
func TestShutdownWhileAccepting(t *testing.T) {
	t.Parallel()
	for round := 0; round < 40; round++ {
		srv, addr := startServer(t, nil, hello)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if nc, err := net.Dial("tcp", addr); err == nil {
						nc.Close()
					}
				}
			}()
		}
		time.Sleep(time.Duration(round%5) * time.Millisecond)
		done := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			done <- srv.Shutdown(ctx)
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("round %d: Shutdown: %v", round, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("round %d: Shutdown has not returned after 30 s (deadlock)", round)
		}
		close(stop)
		wg.Wait()
	}
}
