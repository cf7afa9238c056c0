//go:build linux

package riptide_test

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
)

// idleConns is how many idle keep-alive connections TestIdleMemory holds.
const idleConns = 10_000

// TestIdleMemory holds 10,000 keep-alive connections on the event-loop
// engine, each having made one request and then idle (clients in a child
// process, so that only the server's memory is measured), and asserts the
// server's RSS growth per connection: an idle connection must hold no
// goroutine and no buffer. Both measurements are taken after a GC that
// returns freed memory to the OS, so the figure is what the connections
// keep, not garbage not yet collected.
func TestIdleMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	if riptide.RaceEnabled {
		t.Skip("RSS under -race is the race detector's")
	}
	if lim := raiseNoFile(t, idleConns+1000); lim < idleConns+200 {
		t.Skipf("RLIMIT_NOFILE %d is too low for %d connections", lim, idleConns)
	}
	start := measure(false)
	for _, api := range robustAPIs {
		t.Run(api.name, func(t *testing.T) {
			// The previous server's goroutines (closing 10,000
			// connections) must be gone before the baseline is taken.
			backToBaseline(t, start, "before the server starts")
			ls := startLive(t, &riptide.Server{Handler: api.handler, Engine: riptide.EngineEventLoop})
			healthy(t, ls.addr)
			base := settledRSS()
			var during int64
			st := holdInChild(t, ls.addr, idleConns, func() {
				// Every connection has been answered once; let the workers
				// that served them go idle and end.
				time.Sleep(3 * time.Second)
				during = settledRSS()
			})
			if st.Errors > 0 || st.Requests != 3*idleConns {
				t.Fatalf("%d of %d requests ok, %d errors, first: %s", st.Requests, 3*idleConns, st.Errors, st.FirstErr)
			}
			perConn := float64(during-base) / idleConns
			t.Logf("%s: RSS %d KiB before, %d KiB with %d idle connections: %.2f KiB per connection",
				api.name, base, during, idleConns, perConn)
			if perConn > 8 {
				t.Errorf("%.2f KiB of RSS per idle connection, want at most 8", perConn)
			}
		})
	}
}

// settledRSS returns the process RSS in KiB after a GC that returns freed
// memory to the OS.
func settledRSS() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	return rssKB()
}
