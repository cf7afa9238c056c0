package riptide

import (
	"context"
	"time"

	"github.com/riptide-http/riptide/internal/netx"
)

// The client-disconnect signal. Nothing happens until a handler calls Done
// (or Err): only then does a goroutine start a read on the idle socket, as
// net/http's background read does. The read ends with EOF/reset (client
// gone: Done is closed), with bytes (a pipelined next request: kept in rbuf,
// the watch stops), or when the connection's goroutine stops it by setting
// a past read deadline (handler returned, or Hijack).
//
// The read cannot start while the request body is still being read, since
// both would consume the socket; it starts when the body reaches io.EOF.

// Done returns a channel closed when the client has gone away (detected
// once the request body has been read to its end), when the CancelAfter
// deadline passes, or at the latest when the handler returns. Done and Err may be called from any goroutine, so a
// Ctx can be handed to libraries as a context.Context (database/sql, for
// one, calls Done from goroutines of its own); called after the handler
// returned, Done returns a closed channel. The Ctx is reused for the next
// request on the connection, so a context derived from it must not outlive
// the handler. The first call starts the watch; handlers that never call it
// pay nothing. Done does not fire on Server.Shutdown, which lets in-flight
// requests finish: a stream that should end then selects on ShuttingDown.
func (x *Ctx) Done() <-chan struct{} {
	x.watchMu.Lock()
	defer x.watchMu.Unlock()
	if !x.watchLocked() {
		return closedChan
	}
	if x.done == nil {
		x.done = make(chan struct{})
		if x.doneClosed {
			close(x.done)
		}
	}
	return x.done
}

// watchFor is Done for the compat door, whose request context has a
// channel of its own: h is told when the client goes away (or the request ends) and
// no channel is made here. Nothing happens once the handler has returned.
// When the signal has already fired (a CancelAfter deadline passed, or the
// client went away, before the context asked), h is told at once: the
// signal fires only once.
func (x *Ctx) watchFor(h doneHook) {
	x.watchMu.Lock()
	x.onDone = h
	if x.watchLocked() && x.doneClosed {
		h.engineDone()
	}
	x.watchMu.Unlock()
}

// watchLocked starts the watch for this request, once; false when the
// handler has returned. x.watchMu must be held.
func (x *Ctx) watchLocked() bool {
	// Ordering with stopWatch: we store watchUsed, then load inHandler;
	// it stores inHandler, then loads watchUsed. Either we see the handler
	// gone, or it sees us and cleans up under watchMu.
	x.watchUsed.Store(true)
	if !x.inHandler.Load() {
		return false
	}
	if !x.watched {
		x.watched = true
		if b := &x.conn.body; b.done || b.stream {
			// A stream's body and its watch do not share a socket: the
			// watch can run while the body is read.
			x.startWatch()
		} else {
			x.watchOnEOF = true
		}
	}
	return true
}

// Err returns context.Canceled once Done is closed (and after the handler
// returned), nil before.
func (x *Ctx) Err() error {
	x.watchMu.Lock()
	defer x.watchMu.Unlock()
	switch {
	case !x.inHandler.Load():
		return context.Canceled
	case !x.doneClosed:
		return nil
	case x.dl.fired:
		return context.DeadlineExceeded
	}
	return context.Canceled
}

// Deadline reports the deadline set by CancelAfter, if any; Ctx implements
// context.Context so that it can be passed to calls that should stop when
// the client goes away.
func (x *Ctx) Deadline() (time.Time, bool) {
	x.watchMu.Lock()
	defer x.watchMu.Unlock()
	return x.dl.deadline, x.dl.armed
}

var _ context.Context = (*Ctx)(nil)

// closeDone closes the done channel (if Done made one) and tells onDone,
// once. x.watchMu must be held.
func (x *Ctx) closeDone() {
	if !x.doneClosed {
		x.doneClosed = true
		if x.done != nil {
			close(x.done)
		}
		if x.onDone != nil {
			x.onDone.engineDone()
		}
		if x.reqCtx != nil {
			x.reqCtx.end(x.dl.fired)
		}
	}
}

// startWatch starts the background read. x.watchMu must be held. It may
// run on a goroutine other than the handler's, while the handler runs with
// its body read to the end: it then only reads c.r, c.w and c.rbuf (which
// the handler no longer touches) and writes past c.w.
func (x *Ctx) startWatch() {
	c := x.conn
	if x.watching || c.hijacked || c.werr != nil {
		return
	}
	// On HTTP/1.1: no room to read into (rare; no watch then), or a
	// pipelined request is already here: the client has not gone.
	// Otherwise the header/idle deadline is cleared for the watch read;
	// stopWatch makes the next armRead set a fresh one.
	if !c.ex.watchArm() {
		return
	}
	x.watching = true
	ex := c.ex
	c.watchWG.Add(1)
	if wn, ok := ex.(watchNotifier); ok {
		x.watchCancel = context.AfterFunc(wn.watchContext(), x.clientGone)
		return
	}
	go func() {
		defer c.watchWG.Done()
		n, err := ex.watchRead()
		x.watchMu.Lock()
		x.watchN, x.watchErr = n, err
		if n == 0 && !netx.DeadlineExceeded(err) {
			x.closeDone()
		}
		x.watchMu.Unlock()
	}()
}

// clientGone is the watch of a watchNotifier exchange: the client went
// away.
func (x *Ctx) clientGone() {
	defer x.conn.watchWG.Done()
	x.watchMu.Lock()
	x.closeDone()
	x.watchMu.Unlock()
}

// bodyEOF starts a watch that Done asked for while the body was unread.
// Called on the handler's goroutine when the body reaches io.EOF.
func (x *Ctx) bodyEOF() {
	if !x.watchUsed.Load() {
		return
	}
	x.watchMu.Lock()
	if x.watchOnEOF {
		x.watchOnEOF = false
		x.startWatch()
	}
	x.watchMu.Unlock()
}

// stopWatch ends a running watch and takes in any bytes it read. Called on
// the connection's goroutine at the end of each request (ending=true: Done
// then reports the request over) and by Hijack.
func (x *Ctx) stopWatch(ending bool) {
	if ending {
		x.inHandler.Store(false)
	}
	if !x.watchUsed.Load() {
		return
	}
	c := x.conn
	x.watchMu.Lock()
	x.watchOnEOF = false
	watching := x.watching
	x.watching = false
	cancel := x.watchCancel
	x.watchCancel = nil
	x.watchMu.Unlock()
	if watching && cancel != nil {
		// A callback (watchNotifier): it will not run, or it ran or is
		// running and is waited for. The stream has no bytes to take in.
		if cancel() {
			c.watchWG.Done()
		}
		c.watchWG.Wait()
	} else if watching {
		// Not under watchMu: the watcher takes it to record its result.
		c.ex.watchStop()
		c.watchWG.Wait()
		c.rkind = dlUser // force the next armRead to set a fresh deadline
		c.w += x.watchN
		if x.watchN == 0 && !netx.DeadlineExceeded(x.watchErr) {
			c.closeAfter = true
		}
		x.watchN, x.watchErr = 0, nil
	}
	x.stopDeadline() // before watchMu: a firing timer takes it
	x.watchMu.Lock()
	if x.watched {
		x.closeDone()
	}
	x.done, x.doneClosed, x.onDone, x.reqCtx, x.watched = nil, false, nil, nil, false
	if ending {
		x.watchUsed.Store(false)
	}
	x.watchMu.Unlock()
}
