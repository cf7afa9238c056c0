package riptide

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide/internal/evloop"
	"golang.org/x/sys/unix"
)

// The interleaving of issue 23 item 3, forced on every loop: the scanner
// has put a paused listener back in a loop's epoll and the loop, woken by
// the connections waiting, fails to accept again before the scanner has
// recorded the listener as back. The listener must not end in no epoll:
// once accepts succeed again, every connection that waited is served.
// (Before the fix the loop took the listener out, the scanner then marked
// it resumed, and nothing ever put it back: no connection was accepted
// again.)
func TestEventLoopAcceptResumesAfterRacedPause(t *testing.T) {
	t.Parallel()
	for _, e := range []Engine{EngineEventLoop, EngineOnLoop} {
		t.Run(e.String(), func(t *testing.T) { racedPause(t, e) })
	}
}

func racedPause(t *testing.T, e Engine) {
	var (
		failing  atomic.Bool // accepts fail with EMFILE
		mu       sync.Mutex
		failures = map[int]int{}  // failed accepts handled, by loop index
		base     = map[int]int{}  // failures when its listener's resume began
		raced    = map[int]bool{} // its first resume while failing began
		// racedDone counts the loops whose first resume is done.
		racedDone atomic.Int32
	)
	var logs syncBuffer
	srv := &Server{Engine: e, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	srv.el.hooks = &evloop.Hooks{
		Accept: func(int) error {
			if failing.Load() {
				return unix.EMFILE
			}
			return nil
		},
		Failed: func(lp int) {
			mu.Lock()
			failures[lp]++
			mu.Unlock()
		},
		Resuming: func(lp int) {
			mu.Lock()
			base[lp] = failures[lp]
			mu.Unlock()
		},
		Resumed: func(lp int) {
			mu.Lock()
			first := !raced[lp] && failing.Load()
			raced[lp] = true
			mu.Unlock()
			if !first {
				return
			}
			// The listener is in lp's epoll again with connections
			// waiting: lp wakes and fails to accept. Let it handle
			// that before this resume completes.
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
				mu.Lock()
				n, b := failures[lp], base[lp]
				mu.Unlock()
				if n > b {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("loop %d did not retry its accept within 10 s of its listener's resume", lp)
					break
				}
			}
			racedDone.Add(1)
		},
	}
	_, addr := startServer(t, srv, hello)
	nloops := 0
	waitFor(t, "the event loops", func() bool {
		srv.el.mu.Lock()
		defer srv.el.mu.Unlock()
		for g := range srv.el.groups {
			nloops = g.Loops()
		}
		return nloops > 0
	})
	// Connections arrive while accepts fail, until every loop has paused
	// and met the interleaving on its resume.
	failing.Store(true)
	var conns []*rawConn
	for deadline := time.Now().Add(20 * time.Second); racedDone.Load() < int32(nloops); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not every loop paused and resumed in 20 s (%d loops)", nloops)
		}
		rc := dial(t, addr)
		rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		conns = append(conns, rc)
	}
	failing.Store(false)

	// Every waiting connection is accepted and served; 10 s is ten times
	// the longest back-off.
	for i, rc := range conns {
		rc.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := rc.br.Peek(1); err != nil {
			t.Fatalf("connection %d of %d not served within 10 s of the accept errors' end: %v", i+1, len(conns), err)
		}
		if res, body := rc.resp("GET"); res.StatusCode != 200 || body != "Hello, World!" {
			t.Fatalf("connection %d: %d %q", i+1, res.StatusCode, body)
		}
	}
	var st Stats
	srv.Stats(&st)
	if st.AcceptErrors.FDLimit < uint64(nloops) || st.AcceptErrors.Memory != 0 || st.AcceptErrors.Other != 0 {
		t.Errorf("accept errors %+v, want FDLimit >= %d (a pause per loop) and no other", st.AcceptErrors, nloops)
	}
	if !strings.Contains(logs.String(), `msg="riptide: accept error; retrying" err="accept4: too many open files"`) {
		t.Errorf("no accept-error line in the log:\n%s", logs.String())
	}
}

// A socket a loop accepted just as Shutdown or Close closed the listener,
// and not yet admitted, is admitted before they look for connections: it
// is served (Shutdown) or closed (Close), and neither returns before. The
// interleaving is forced: the loop holds the socket (Hooks.Accepted) until
// the server waits for it (Hooks.Stopping), or, should Shutdown or Close
// return without waiting, until the group has ended. (Before the fix they
// went on as soon as they began; the socket, admitted after the group had
// ended, parked in a closed epoll where neither reached it, and Close then
// waited on it for good: TestShutdownWhileAccepting's hang.)
func TestShutdownAdmitsAcceptedSocket(t *testing.T) {
	t.Parallel()
	for _, e := range []Engine{EngineEventLoop, EngineOnLoop} {
		for _, mode := range []string{"Shutdown", "Close"} {
			t.Run(e.String()+"/"+mode, func(t *testing.T) { admitRaced(t, e, mode) })
		}
	}
}

func admitRaced(t *testing.T, e Engine, mode string) {
	var (
		held     atomic.Bool
		accepted = make(chan struct{})
		release  = make(chan struct{})
		stopping = make(chan struct{})
		stopOnce sync.Once
		handled  atomic.Bool
	)
	srv := &Server{Engine: e, Logger: slog.New(slog.DiscardHandler)}
	srv.Handler = HandlerFunc(func(c *Ctx) {
		handled.Store(true)
		hello(c)
	})
	srv.el.hooks = &evloop.Hooks{
		Accept:   func(int) error { return nil },
		Failed:   func(int) {},
		Resuming: func(int) {},
		Resumed:  func(int) {},
		Accepted: func(_, n int) {
			if n > 0 && held.CompareAndSwap(false, true) {
				close(accepted)
				<-release
			}
		},
		Stopping: func() { stopOnce.Do(func() { close(stopping) }) },
	}
	// Served here, not with serveTest: its Stop would wait on Close
	// without a bound, and this test must report a Close that hangs.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()

	// Shutdown: the client's request waits in the socket and is served.
	// Close: the client says nothing; only Close can end its connection.
	rc := dial(t, ln.Addr().String())
	if mode == "Shutdown" {
		rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	}
	select {
	case <-accepted:
	case <-time.After(20 * time.Second):
		t.Fatal("the loop did not accept the connection within 20 s")
	}
	type result struct {
		err     error
		handled bool  // the handler had run when it returned
		open    int64 // connections counted in when it returned
	}
	ret := make(chan result, 1)
	go func() {
		var err error
		if mode == "Shutdown" {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			err = srv.Shutdown(ctx)
			cancel()
		} else {
			err = srv.Close()
		}
		ret <- result{err, handled.Load(), srv.nconns.Load()}
	}()
	var early *result
	groupsLeft := func() int {
		srv.el.mu.Lock()
		defer srv.el.mu.Unlock()
		return len(srv.el.groups)
	}
	waitFor(t, "the server to wait for the loop (or to return and end the group)", func() bool {
		select {
		case <-stopping:
			return true
		case r := <-ret:
			early = &r
		default:
		}
		return early != nil && groupsLeft() == 0
	})
	released = true
	close(release)
	if early != nil {
		t.Errorf("%s returned (%v, handler run %v) while the loop held a socket it accepted before the listener closed", mode, early.err, early.handled)
	}

	r := early
	if r == nil {
		select {
		case got := <-ret:
			r = &got
		case <-time.After(20 * time.Second):
			t.Fatalf("%s has not returned 20 s after the loop let the socket go", mode)
		}
	}
	if r.err != nil {
		t.Errorf("%s: %v", mode, r.err)
	}
	if r.open != 0 {
		t.Errorf("%s returned with %d connection(s) counted in", mode, r.open)
	}
	if mode == "Shutdown" {
		if !r.handled {
			t.Errorf("Shutdown returned before the accepted connection's request was served")
		}
		if res, body := rc.resp("GET"); res.StatusCode != 200 || body != "Hello, World!" || !res.Close {
			t.Errorf("response %d %q (close %v), want 200 Hello, World! with Connection: close", res.StatusCode, body, res.Close)
		}
	}
	rc.nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	if b, err := rc.br.ReadByte(); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the connection accepted as the listener closed is still open 20 s after %s returned (read %q, %v)", mode, b, err)
	}
	// Every connection counted in is reachable: Close returns.
	closed := make(chan struct{})
	go func() {
		srv.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatalf("Close has not returned in 20 s: it waits on a connection it cannot reach (%d counted in)", srv.nconns.Load())
	}
}
