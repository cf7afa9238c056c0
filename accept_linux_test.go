package riptide

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide/internal/evloop"
)

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
