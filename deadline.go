package riptide

import (
	"context"
	"sync"
	"time"
)

// handlerDeadline is the state behind Ctx.CancelAfter: a timer, reused for
// every request of the connection, that closes Done when it fires.
type handlerDeadline struct {
	// mu serializes closeDone between the timer's goroutine and the
	// disconnect watcher's (watch.go), the two that may close Done while
	// the handler runs.
	mu       sync.Mutex
	timer    *time.Timer
	running  sync.WaitGroup // the armed timer, until stopped or its callback returned
	armed    bool
	fired    bool // guarded by mu
	deadline time.Time
}

// CancelAfter makes Done fire, and Err return context.DeadlineExceeded,
// once d has passed, unless the handler returns first; Deadline reports the
// time. It is how a handler's work is bounded: pass the Ctx as the
// context.Context of the calls to bound. Only the first call in a request
// has an effect. Like Done, the first call costs one allocation.
func (x *Ctx) CancelAfter(d time.Duration) {
	t := &x.dl
	if t.armed {
		return
	}
	x.Done()
	t.armed, t.deadline = true, time.Now().Add(d)
	t.running.Add(1)
	if t.timer == nil {
		t.timer = time.AfterFunc(d, x.deadlinePassed)
	} else {
		t.timer.Reset(d)
	}
}

func (x *Ctx) deadlinePassed() {
	defer x.dl.running.Done()
	x.dl.mu.Lock()
	x.dl.fired = true
	x.dl.mu.Unlock()
	x.closeDone()
}

// stopDeadline stops an armed timer and waits for a callback already
// running; called by stopWatch before Done is reset.
func (x *Ctx) stopDeadline() {
	t := &x.dl
	if !t.armed {
		return
	}
	if t.timer.Stop() {
		t.running.Done()
	}
	t.running.Wait()
	t.armed, t.fired, t.deadline = false, false, time.Time{}
}

// deadlineErr is Err's answer once Done is closed.
func (x *Ctx) deadlineErr() error {
	x.dl.mu.Lock()
	defer x.dl.mu.Unlock()
	if x.dl.fired {
		return context.DeadlineExceeded
	}
	return context.Canceled
}
