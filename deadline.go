package riptide

import (
	"sync"
	"time"
)

// handlerDeadline is the state behind Ctx.CancelAfter: a timer, reused for
// every request of the connection, that closes Done when it fires.
// armed, fired and deadline are guarded by Ctx.watchMu (Deadline and Err
// may be called from any goroutine).
type handlerDeadline struct {
	timer    *time.Timer
	running  sync.WaitGroup // the armed timer, until stopped or its callback returned
	armed    bool
	fired    bool
	deadline time.Time
}

// CancelAfter makes Done fire, and Err return context.DeadlineExceeded,
// once d has passed, unless the handler returns first; Deadline reports the
// time. It is how a handler's work is bounded: pass the Ctx as the
// context.Context of the calls to bound. Only the first call in a request
// has an effect. Like Done, the first call costs one allocation.
func (x *Ctx) CancelAfter(d time.Duration) {
	t := &x.dl
	x.watchMu.Lock()
	if t.armed {
		x.watchMu.Unlock()
		return
	}
	t.armed, t.deadline = true, time.Now().Add(d)
	if x.reqCtx != nil {
		x.reqCtx.deadline.Store(t.deadline.UnixNano())
	}
	x.watchMu.Unlock()
	x.Done()
	t.running.Add(1)
	if t.timer == nil {
		t.timer = time.AfterFunc(d, x.deadlinePassed)
	} else {
		t.timer.Reset(d)
	}
}

func (x *Ctx) deadlinePassed() {
	defer x.dl.running.Done()
	x.watchMu.Lock()
	defer x.watchMu.Unlock()
	x.dl.fired = true
	if x.watched {
		x.closeDone()
	}
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
	x.watchMu.Lock()
	t.armed, t.fired, t.deadline = false, false, time.Time{}
	x.watchMu.Unlock()
}
