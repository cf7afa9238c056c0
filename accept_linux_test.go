package riptide

import (
	"log/slog"
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
