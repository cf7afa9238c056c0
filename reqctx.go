package riptide

import (
	"context"
	"sync/atomic"
	"time"
)

// Context returns a context.Context for this request that, unlike the Ctx
// itself, may be kept: handed to a goroutine that outlives the handler,
// stored in a job. It is cancelled when the request ends (the handler
// returned, or Hijack), when the client goes away and when the CancelAfter
// deadline passes (Err is then context.DeadlineExceeded, and Deadline
// reports it); its values are this request's locals (SetLocal) as they
// were when Context was first called, kept after the request ended, so
// that the goroutine never sees the next request's. Every call in a
// request returns the same context; after the handler returned, Context
// returns an already cancelled context without values.
//
// It costs nothing until called; the first call allocates the context
// (and starts the disconnect watch, as Done does). Code that only needs a
// context during the handler can pass the Ctx itself, which allocates
// nothing.
func (x *Ctx) Context() context.Context {
	x.watchMu.Lock()
	defer x.watchMu.Unlock()
	if rc := x.reqCtx; rc != nil {
		return rc
	}
	if !x.watchLocked() {
		return endedContext{}
	}
	inner, cancel := context.WithCancel(context.Background())
	rc := &requestContext{Context: inner, cancel: cancel}
	if l := &x.locals; l.n > 0 {
		rc.vals = make([]local, l.n)
		for i := range rc.vals {
			rc.vals[i] = *l.at(i)
		}
	}
	if x.dl.armed {
		rc.deadline.Store(x.dl.deadline.UnixNano())
	}
	x.reqCtx = rc
	if x.doneClosed { // the client left, or the deadline passed, already
		rc.end(x.dl.fired)
	}
	return rc
}

// requestContext is what Context returns: a cancel context of its own
// (so that contexts derived from it hang off it without a goroutine, as
// off any context.WithCancel) with the request's locals and deadline.
type requestContext struct {
	context.Context // context.WithCancel(context.Background())
	cancel          context.CancelFunc
	vals            []local      // the locals when Context was called
	deadline        atomic.Int64 // CancelAfter's, in Unix nanoseconds; 0 for none
	timedOut        atomic.Bool  // ended by the CancelAfter deadline
}

// end cancels the context; timedOut records that the deadline did.
func (rc *requestContext) end(timedOut bool) {
	if timedOut {
		rc.timedOut.Store(true)
	}
	rc.cancel()
}

// Value returns the request's local stored under key, else defers to the
// inner context (where context.WithCancel finds its parent).
func (rc *requestContext) Value(key any) any {
	for i := range rc.vals {
		if rc.vals[i].key == key {
			return rc.vals[i].val
		}
	}
	return rc.Context.Value(key)
}

// Err returns context.DeadlineExceeded when CancelAfter's deadline ended
// the context, context.Canceled when anything else did, nil before.
func (rc *requestContext) Err() error {
	err := rc.Context.Err()
	if err != nil && rc.timedOut.Load() {
		return context.DeadlineExceeded
	}
	return err
}

// Deadline reports CancelAfter's deadline, if one was set.
func (rc *requestContext) Deadline() (time.Time, bool) {
	if ns := rc.deadline.Load(); ns != 0 {
		return time.Unix(0, ns), true
	}
	return time.Time{}, false
}

// String names the context, for fmt and context's own String methods.
func (rc *requestContext) String() string { return "riptide.Ctx.Context" }

// endedContext is Context's answer once the request is over.
type endedContext struct{}

func (endedContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (endedContext) Done() <-chan struct{}       { return closedChan }
func (endedContext) Err() error                  { return context.Canceled }
func (endedContext) Value(any) any               { return nil }
