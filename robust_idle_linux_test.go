//go:build linux

package riptide_test

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/israce"
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
	skipUnlessIdleMemory(t)
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

// skipUnlessIdleMemory skips a test of the RSS of idleConns connections
// where it cannot be measured: -short, -race, or too few descriptors.
func skipUnlessIdleMemory(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("short")
	}
	if israce.Enabled {
		t.Skip("RSS under -race is the race detector's")
	}
	if lim := raiseNoFile(t, idleConns+1000); lim < idleConns+200 {
		t.Skipf("RLIMIT_NOFILE %d is too low for %d connections", lim, idleConns)
	}
}

// settledRSS returns the process RSS in KiB after a GC that returns freed
// memory to the OS.
func settledRSS() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	return rssKB()
}

// TestIdleCloseBurstMemory holds 10,000 idle keep-alive connections on the
// event-loop engine (clients in a child process) and then has the clients
// close them all at once. The loops close them without a worker each: no
// worker goroutine is started for the burst, every connection is counted
// out, and the peak RSS (VmHWM, reset before the burst) stays near what the
// idle connections held.
func TestIdleCloseBurstMemory(t *testing.T) {
	skipUnlessIdleMemory(t)
	start := measure(false)
	for _, api := range robustAPIs {
		t.Run(api.name, func(t *testing.T) {
			backToBaseline(t, start, "before the server starts")
			ls := startLive(t, &riptide.Server{Handler: api.handler, Engine: riptide.EngineEventLoop})
			healthy(t, ls.addr)
			base := settledRSS()
			var during, workers int64
			var st0 riptide.Stats
			st := holdInChildClose(t, ls.addr, idleConns, true, func() {
				time.Sleep(3 * time.Second) // the workers that served them end
				during = settledRSS()
				resetPeakRSS()
				workers = ls.Server.WorkersSpawned()
				ls.Server.Stats(&st0)
			})
			if st.Errors > 0 || st.Requests != idleConns {
				t.Fatalf("%d of %d requests ok, %d errors, first: %s", st.Requests, idleConns, st.Errors, st.FirstErr)
			}
			var st1 riptide.Stats
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				ls.Server.Stats(&st1)
				if st1.Closed-st0.Closed >= idleConns || time.Now().After(deadline) {
					break
				}
			}
			peak, after := peakRSS(), rssKB()
			spawned := ls.Server.WorkersSpawned() - workers
			t.Logf("%s: RSS %d KiB before, %d KiB with %d idle connections; the clients close them all: peak %d KiB (+%d), %d KiB right after, %d KiB settled; %d workers started",
				api.name, base, during, idleConns, peak, peak-during, after, settledRSS(), spawned)
			if d := st1.Closed - st0.Closed; d != idleConns {
				t.Errorf("%d of %d connections counted closed", d, idleConns)
			}
			if open := st1.ConnsNew + st1.ConnsActive + st1.ConnsIdle; open != 0 {
				t.Errorf("%d connections still open", open)
			}
			if spawned != 0 {
				t.Errorf("%d workers started for the connections closing", spawned)
			}
		})
	}
}

// resetPeakRSS resets VmHWM to the current RSS (Linux 4.0 and later).
func resetPeakRSS() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS returns VmHWM from /proc/self/status in KiB (-1 where unknown).
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			if f := strings.Fields(v); len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
		}
	}
	return -1
}
