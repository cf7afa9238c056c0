package riptide

import (
	"context"
	"time"
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
// deadline passes, or at the latest when the handler returns. It may be
// kept and waited on from any goroutine, also after the handler returned.
// The first call starts the watch; handlers that never call it pay nothing.
func (x *Ctx) Done() <-chan struct{} {
	if x.done == nil {
		x.done = make(chan struct{})
		c := x.conn
		switch {
		case c.werr != nil:
			x.closeDone()
		case c.body.done:
			x.startWatch()
		default:
			x.watchOnEOF = true
		}
	}
	return x.done
}

// Err returns context.Canceled once Done is closed, nil before.
func (x *Ctx) Err() error {
	if x.done == nil {
		return nil
	}
	select {
	case <-x.done:
		return x.deadlineErr()
	default:
		return nil
	}
}

// Deadline reports the deadline set by CancelAfter, if any; Ctx implements
// context.Context so that it can be passed to calls that should stop when
// the client goes away.
func (x *Ctx) Deadline() (time.Time, bool) { return x.dl.deadline, x.dl.armed }

// Value returns nil: a Ctx carries no context values.
func (x *Ctx) Value(key any) any { return nil }

var _ context.Context = (*Ctx)(nil)

// closeDone closes the done channel once. Only the connection's goroutine
// calls it, or the watcher goroutine while the connection goroutine is
// guaranteed to wait for it (stopWatch) before touching doneClosed.
func (x *Ctx) closeDone() {
	x.dl.mu.Lock() // the CancelAfter timer may close it too
	defer x.dl.mu.Unlock()
	if !x.doneClosed {
		x.doneClosed = true
		close(x.done)
		if x.onDone != nil {
			x.onDone()
		}
	}
}

func (x *Ctx) startWatch() {
	c := x.conn
	if x.watching || c.hijacked || c.werr != nil {
		return
	}
	if c.w == len(c.rbuf) {
		if c.makeRoom() != nil {
			return
		}
	}
	if c.r < c.w {
		// A pipelined request is already here: the client has not gone.
		return
	}
	c.armRead(dlNone, 0, false)
	x.watching = true
	buf := c.rbuf[c.w:]
	c.watchWG.Add(1)
	go func() {
		defer c.watchWG.Done()
		n, err := c.nc.Read(buf)
		x.watchN, x.watchErr = n, err
		if n == 0 && !isTimeout(err) {
			x.closeDone()
		}
	}()
}

// stopWatch ends a running watch and takes in any bytes it read. Called on
// the connection's goroutine at the end of each request and by Hijack.
func (x *Ctx) stopWatch() {
	c := x.conn
	x.watchOnEOF = false
	if x.watching {
		x.watching = false
		c.nc.SetReadDeadline(aLongTimeAgo)
		c.watchWG.Wait()
		c.rkind = dlUser // force the next armRead to set a fresh deadline
		c.w += x.watchN
		if x.watchN == 0 && !isTimeout(x.watchErr) {
			c.closeAfter = true
		}
		x.watchN, x.watchErr = 0, nil
	}
	x.stopDeadline()
	if x.done != nil {
		x.closeDone()
	}
	x.done, x.doneClosed, x.onDone = nil, false, nil
}
