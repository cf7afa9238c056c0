package h2

import (
	"testing"
	"time"
)

// TestH2WorkerIdleExit: a pooled worker serves a connection handed to it,
// parks, and exits once it has been idle for a whole timer period (the
// first firing after a serve only re-arms the timer), leaving the pool.
//
// The test starts the worker itself, with a short period, and runs it on
// a goroutine of its own that tells when run returns: the pool may already
// hold workers that earlier tests parked (h2Workers.Get would hand one of
// those out), and other goroutines come and go meanwhile, so neither the
// pool nor runtime.NumGoroutine tells which worker exited.
func TestH2WorkerIdleExit(t *testing.T) {
	w := &h2Worker{ch: make(chan *Conn, 1), idle: 20 * time.Millisecond}
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		w.run()
	}()
	w.ch <- &Conn{} // nothing queued: serveQueue returns at once
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the idle worker did not exit within 10 s")
	}
	if h2Workers.Remove(w) {
		t.Error("the exited worker was still in the pool")
	}
}
