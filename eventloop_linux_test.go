package riptide

import (
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide/internal/evloop"
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
	deadline := time.Now().Add(3 * evloop.WorkerIdle)
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
	t.Parallel()
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

// When many idle keep-alive connections end at once (the clients hang up,
// or the idle timeout passes), the loops and the scanner close them without
// a worker each: a burst of worker goroutines, each with its buffers, was
// the cost. Every connection is still reported closed (ConnState), counted
// in Stats and out of the server (MaxConns, Shutdown), and no worker is
// started. A connection holding part of a head still goes to a worker and
// is counted out the same way.
func TestEventLoopCloseBurst(t *testing.T) {
	for _, e := range []Engine{EngineEventLoop, EngineOnLoop} {
		t.Run(e.String(), func(t *testing.T) {
			t.Run("hangup", func(t *testing.T) { closeBurst(t, e, false) })
			t.Run("timeout", func(t *testing.T) { closeBurst(t, e, true) })
		})
	}
}

func closeBurst(t *testing.T, e Engine, timeout bool) {
	const n, partial = 300, 10
	var idle, closed atomic.Int64
	srv := &Server{Engine: e, ConnState: func(_ net.Conn, st ConnState) {
		switch st {
		case StateIdle:
			idle.Add(1)
		case StateClosed:
			closed.Add(1)
		}
	}}
	if timeout {
		srv.IdleTimeout = time.Second
	}
	srv, addr := startServer(t, srv, hello)
	conns := make([]*rawConn, n)
	for i := range conns { // one at a time: few workers serve them
		conns[i] = dial(t, addr)
		conns[i].send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		if res, _ := conns[i].resp("GET"); res.StatusCode != 200 {
			t.Fatalf("status %d", res.StatusCode)
		}
	}
	waitFor(t, "every connection idle", func() bool { return idle.Load() >= n })
	before := srv.WorkersSpawned()
	var st Stats
	srv.Stats(&st)
	if !timeout {
		for i, rc := range conns {
			if i%2 == 0 {
				rc.nc.(*net.TCPConn).SetLinger(0) // a reset rather than a FIN
			}
			rc.nc.Close()
		}
	}
	waitFor(t, "every connection closed", func() bool { return closed.Load() == n })
	waitFor(t, "every connection counted out", func() bool { return srv.nconns.Load() == 0 })
	if d := srv.WorkersSpawned() - before; d != 0 {
		t.Errorf("%d workers started for %d connections ending", d, n)
	}
	var after Stats
	srv.Stats(&after)
	if d := after.Closed - st.Closed; d != n {
		t.Errorf("Stats.Closed went up by %d, want %d", d, n)
	}
	if open := after.ConnsNew + after.ConnsActive + after.ConnsIdle; open != 0 {
		t.Errorf("%d connections still open in Stats", open)
	}
	if d := after.Timeouts.Idle - st.Timeouts.Idle; timeout && d != n || !timeout && d != 0 {
		t.Errorf("Stats.Timeouts.Idle went up by %d", d)
	}
	if timeout {
		for _, rc := range conns[:10] {
			if !rc.closed() {
				t.Fatal("an idle connection past its timeout is still open")
			}
		}
		return
	}
	// Part of a head, then the hang-up: a worker sees the EOF.
	heads := make([]*rawConn, partial)
	for i := range heads {
		heads[i] = dial(t, addr)
		heads[i].send("GET / HTTP/1.1\r\nHo")
	}
	waitFor(t, "the partial heads read", func() bool {
		srv.Stats(&st)
		return st.ConnsActive == partial
	})
	for _, rc := range heads {
		rc.nc.Close()
	}
	waitFor(t, "the partial heads closed", func() bool { return closed.Load() == n+partial })
	waitFor(t, "the partial heads counted out", func() bool { return srv.nconns.Load() == 0 })
}

// waitFor waits (bounded) until cond holds, and fails the test if it does not.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// In worker mode the readable connections of a loop's batch are taken from
// its queue by as few workers as keep up, but a handler that blocks never
// holds another connection back: n handlers that each wait until all n
// are running (a barrier, which one connection queued behind a blocked
// handler would never let complete) all finish.
func TestEventLoopBlockedHandlersDoNotHoldQueuedConns(t *testing.T) {
	t.Parallel()
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
