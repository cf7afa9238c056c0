package h2

import (
	"runtime"
	"testing"
	"time"
)

// TestH2WorkerIdleExit: a pooled worker serves a connection handed to it,
// parks, and exits once it has been idle for a whole timer period (the
// first firing after a serve only re-arms the timer), leaving the pool.
func TestH2WorkerIdleExit(t *testing.T) {
	defer func(d time.Duration) { h2WorkerIdle = d }(h2WorkerIdle)
	h2WorkerIdle = 20 * time.Millisecond
	before := runtime.NumGoroutine()
	w := h2Workers.Get(0)
	hc := &Conn{} // nothing queued: serveQueue returns at once
	w.ch <- hc
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines, %d before: the idle worker did not exit", runtime.NumGoroutine(), before)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if h2Workers.Remove(w) {
		t.Error("the exited worker was still in the pool")
	}
}
