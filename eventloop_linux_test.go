package riptide

import (
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"
)

// On the event loop an idle keep-alive connection holds no goroutine: 200
// connections that each made a request and wait for the next leave the
// goroutine count where it was once the workers that served them end.
func TestEventLoopIdleHoldsNoGoroutine(t *testing.T) {
	const n = 200
	_, addr := startServer(t, &Server{Engine: EngineEventLoop}, hello)
	warm := dial(t, addr) // loops, scanner and the spare workers start
	warm.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	warm.resp("GET")
	base := settledGoroutines(-1)
	conns := make([]*rawConn, n)
	for i := range conns {
		conns[i] = dial(t, addr)
		conns[i].send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	}
	for _, rc := range conns {
		if res, _ := rc.resp("GET"); res.StatusCode != 200 {
			t.Fatalf("status %d", res.StatusCode)
		}
	}
	got := settledGoroutines(base + 8)
	t.Logf("goroutines: %d before, %d with %d idle connections", base, got, n)
	if got > base+8 {
		t.Errorf("%d goroutines with %d idle connections, want at most %d", got, n, base+8)
	}
	for _, rc := range conns { // and every one still works
		rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		if res, _ := rc.resp("GET"); res.StatusCode != 200 {
			t.Fatalf("second request: status %d", res.StatusCode)
		}
	}
}

// settledGoroutines waits (up to 3 idle-worker lifetimes) for the goroutine
// count to reach want, or to stop falling when want is negative.
func settledGoroutines(want int) int {
	deadline := time.Now().Add(3 * workerIdle)
	last := runtime.NumGoroutine()
	for time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		n := runtime.NumGoroutine()
		if want >= 0 && n <= want || want < 0 && n == last {
			return n
		}
		last = n
	}
	return last
}

// Hijack on the event loop hands over an ordinary *net.TCPConn with the
// bytes read past the head, and the loop lets go of the socket.
func TestEventLoopHijack(t *testing.T) {
	_, addr := startServer(t, &Server{Engine: EngineEventLoop}, func(c *Ctx) {
		nc, buf, err := c.Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		if _, ok := nc.(*net.TCPConn); !ok {
			t.Errorf("hijacked %T, want *net.TCPConn", nc)
		}
		go func() {
			defer nc.Close()
			nc.Write([]byte("HTTP/1.1 101 Switching Protocols\r\n\r\n"))
			nc.Write(buf) // echo what came with the head, then the rest
			io.Copy(nc, nc)
		}()
	})
	rc := dial(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\nearly")
	rc.send("late")
	want := "HTTP/1.1 101 Switching Protocols\r\n\r\nearlylate"
	got := make([]byte, len(want))
	if _, err := io.ReadFull(rc.br, got); err != nil || string(got) != want {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}

// In worker mode the readable connections of a loop's batch are taken from
// its queue by as few workers as keep up, but a handler that blocks never
// holds another connection back: n handlers that each wait until all n
// are running (a barrier, which one connection queued behind a blocked
// handler would never let complete) all finish.
func TestEventLoopBlockedHandlersDoNotHoldQueuedConns(t *testing.T) {
	const n = 24
	var arrived sync.WaitGroup
	arrived.Add(n)
	all := make(chan struct{})
	go func() { arrived.Wait(); close(all) }()
	_, addr := startServer(t, &Server{Engine: EngineEventLoop}, func(x *Ctx) {
		if string(x.Path()) == "/barrier" {
			arrived.Done()
			select {
			case <-all:
			case <-time.After(10 * time.Second):
				x.SetStatus(503) // the barrier never filled: reported below
				return
			}
		}
		hello(x)
	})
	conns := warmConns(t, addr, n)
	for _, rc := range conns { // sent back to back: they arrive in few batches
		rc.send("GET /barrier HTTP/1.1\r\nHost: x\r\n\r\n")
	}
	for i, rc := range conns {
		if res, _ := rc.resp("GET"); res.StatusCode != 200 {
			t.Fatalf("connection %d: status %d: a blocked handler held it back", i, res.StatusCode)
		}
	}
}
