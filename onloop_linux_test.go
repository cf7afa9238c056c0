package riptide

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide/internal/israce"
)

// onLoopNow reports whether the handler of x runs on its loop's goroutine
// (the loop's leader serves the connection).
func onLoopNow(x *Ctx) bool {
	ec := x.conn.ec
	return ec != nil && ec.OnLoop()
}

// warmConns dials n connections and makes one request on each, so that
// each is parked on its loop and its next request arrives as a loop event.
func warmConns(t *testing.T, addr string, n int) []*rawConn {
	t.Helper()
	conns := make([]*rawConn, n)
	for i := range conns {
		conns[i] = dial(t, addr)
		conns[i].send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		if res, _ := conns[i].resp("GET"); res.StatusCode != 200 {
			t.Fatalf("warm-up: status %d", res.StatusCode)
		}
	}
	return conns
}

// In on-loop mode a native handler runs on the loop goroutine.
func TestOnLoopRunsNativeHandlersOnLoop(t *testing.T) {
	t.Parallel()
	seen := make(chan bool, 1)
	_, addr := startServer(t, &Server{Engine: EngineOnLoop}, func(x *Ctx) {
		seen <- onLoopNow(x)
		hello(x)
	})
	rc := dial(t, addr)
	// The first request of a connection is served by a worker (new
	// connections are); later ones come from the loop once the connection
	// is parked. A request may race the park and be served by the worker
	// still holding the connection, so look for one served on the loop
	// among several.
	on := false
	for i := 0; i < 40 && !on; i++ {
		<-time.After(5 * time.Millisecond) // let the connection park
		rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		if res, body := rc.resp("GET"); res.StatusCode != 200 || body != "Hello, World!" {
			t.Fatalf("status %d, body %q", res.StatusCode, body)
		}
		on = <-seen
	}
	if !on {
		t.Error("no request was served on the loop")
	}
}

// The compat door keeps its workers under EngineOnLoop: the loops have no
// leader and hand every request off.
func TestOnLoopCompatUsesWorkers(t *testing.T) {
	t.Parallel()
	srv := &Server{Engine: EngineOnLoop, Handler: FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "Hello, World!")
	}))}
	_, addr := startServer(t, srv, nil)
	rc := dial(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if res, body := rc.resp("GET"); res.StatusCode != 200 || body != "Hello, World!" {
		t.Fatalf("status %d, body %q", res.StatusCode, body)
	}
	srv.el.mu.Lock()
	defer srv.el.mu.Unlock()
	if len(srv.el.groups) == 0 {
		t.Fatal("not served by the event loop")
	}
	for g := range srv.el.groups {
		if g.OnLoop() || g.Leaders() != 0 {
			t.Errorf("compat door on the loop: onLoop %v, %d leaders", g.OnLoop(), g.Leaders())
		}
	}
}

// A handler that blocks on the loop (against the contract) stalls its loop
// only until the scanner hands the loop to another goroutine: every other
// connection is still served while it stays blocked.
func TestOnLoopBlockedHandlerDoesNotStallOthers(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var blockedOnLoop atomic.Bool
	_, addr := startServer(t, &Server{Engine: EngineOnLoop}, func(x *Ctx) {
		if string(x.Path()) == "/block" {
			blockedOnLoop.Store(onLoopNow(x))
			<-release
		}
		hello(x)
	})
	// Registered after the server's cleanup, so it runs first: a failure
	// before the release below ends the test instead of leaving Close
	// waiting for the blocked handler.
	unblock := sync.OnceFunc(func() { close(release) })
	t.Cleanup(unblock)
	conns := warmConns(t, addr, 9)
	a, others := conns[0], conns[1:]
	a.send("GET /block HTTP/1.1\r\nHost: x\r\n\r\n")
	for round := 0; round < 3; round++ {
		for _, rc := range others {
			rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		}
		for _, rc := range others { // a stalled loop would time out here
			if res, _ := rc.resp("GET"); res.StatusCode != 200 {
				t.Fatalf("status %d", res.StatusCode)
			}
		}
	}
	unblock()
	if res, body := a.resp("GET"); res.StatusCode != 200 || body != "Hello, World!" {
		t.Fatalf("blocked request: status %d, body %q", res.StatusCode, body)
	}
	a.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n") // and its connection still works
	if res, _ := a.resp("GET"); res.StatusCode != 200 {
		t.Fatalf("after the blocked request: status %d", res.StatusCode)
	}
	t.Logf("the blocked handler ran on the loop: %v", blockedOnLoop.Load())
}

// When the engine itself must wait on the loop (a response larger than the
// socket takes, to a client not reading; a body still arriving), it hands
// the loop on first: other connections are served meanwhile and the waiting
// request completes intact.
func TestOnLoopEngineWaitsLeaveTheLoop(t *testing.T) {
	t.Parallel()
	const big = 8 << 20
	payload := strings.Repeat("x", big)
	_, addr := startServer(t, &Server{Engine: EngineOnLoop}, func(x *Ctx) {
		switch string(x.Path()) {
		case "/big":
			x.WriteString(payload)
		case "/upload":
			b, err := x.ReadBody()
			if err != nil {
				x.SetStatus(400)
				return
			}
			x.WriteString(strconv.Itoa(len(b)))
		default:
			hello(x)
		}
	})
	conns := warmConns(t, addr, 10)
	bigc, up, others := conns[0], conns[1], conns[2:]
	bigc.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n") // not read yet
	const bodyLen = 1 << 20
	up.send(fmt.Sprintf("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", bodyLen))
	up.send(strings.Repeat("y", bodyLen/2)) // the rest comes later
	for round := 0; round < 3; round++ {
		for _, rc := range others {
			rc.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		}
		for _, rc := range others {
			if res, _ := rc.resp("GET"); res.StatusCode != 200 {
				t.Fatalf("status %d", res.StatusCode)
			}
		}
	}
	up.send(strings.Repeat("y", bodyLen-bodyLen/2))
	if res, body := up.resp("POST"); res.StatusCode != 200 || body != strconv.Itoa(bodyLen) {
		t.Fatalf("upload: status %d, body %q", res.StatusCode, body)
	}
	if res, body := bigc.resp("GET"); res.StatusCode != 200 || len(body) != big {
		t.Fatalf("big: status %d, %d bytes, want %d", res.StatusCode, len(body), big)
	}
}

// On-loop mode serves a request over loopback without allocating (the
// race detector's instrumentation allocates: see internal/israce).
func TestZeroAllocsOnLoop(t *testing.T) {
	if israce.Enabled {
		t.Skip("race detector")
	}
	testZeroAllocs(t, &Server{Engine: EngineOnLoop})
}
