package riptide

import (
	"context"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// closedChan is a closed channel: Done of a request that has ended.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// compatContext is the request's Context. It is cancelled when the client
// goes away and when ServeHTTP returns. Nothing is set up until Done is
// first called: then the engine's disconnect watch starts, and a
// context.WithCancel made inside lets derived contexts (WithCancel,
// WithTimeout, through WithValue layers too) hang off it without a
// goroutine each, as they do off net/http's request context.
//
// mu serialises every use of the engine's state made on behalf of the
// handler (body reads, response writes, starting the watch), since Done may
// be called from any goroutine while the handler runs. Done never waits for
// mu (a body read may hold it for long): when mu is busy it leaves the
// watch to be started by whoever holds mu, as it unlocks.
type compatContext struct {
	mu sync.Mutex
	x  *Ctx // guarded by mu; nil once ended (end)

	lazyCtx
}

// The bits of lazyCtx.state.
const (
	ctxMaking    = 1 << iota // a Done is making the inner context
	ctxMade                  // ctx and stop are set (and never change)
	ctxEnded                 // the request ended (cancel)
	ctxWantWatch             // the inner context exists, the engine watch is not started yet
	ctxHijack                // the connection was hijacked: disconnects no longer cancel
)

// lazyCtx is the lazily made part of a request's Context (compatContext):
// no deadline, the
// local address as a value, and a context.WithCancel made only when Done
// is first called, so that derived contexts hang off it without a
// goroutine each and a request that never asks allocates nothing.
//
// No lock, and no allocation of its own: the inner context and its cancel
// function live here, published by state's ctxMade. The Done that makes
// them marks state ctxMaking first (by compare-and-swap), so that one Done
// makes them; a Done that meets ctxMaking waits for ctxMade (the maker is
// a context.WithCancel away). The end (cancel) meeting ctxMaking only sets
// ctxEnded: the maker then cancels the inner context before it publishes
// it, so that nobody sees it live after the end. A request that never
// asks for Done ends with one compare-and-swap.
//
// ended is compatContext's (set under its mu: ServeHTTP has returned),
// kept here beside state so that compatContext fills its words
// (compatRequest's size is what TestCompatBlockSizeClasses checks).
type lazyCtx struct {
	ended atomic.Bool
	state atomic.Uint32
	ctx   context.Context    // the inner context, once ctxMade
	stop  context.CancelFunc // its cancel function, once ctxMade
	laddr net.Addr
	srv   *http.Server // for http.ServerContextKey (Server.httpServer)
}

// Deadline reports no deadline, as net/http's request context.
func (c *lazyCtx) Deadline() (time.Time, bool) { return time.Time{}, false }

// done is Done; created reports that this call made the inner context.
func (c *lazyCtx) done() (ch <-chan struct{}, created bool) {
	for {
		s := c.state.Load()
		switch {
		case s&ctxMade != 0:
			return c.ctx.Done(), false
		case s&ctxMaking != 0:
			runtime.Gosched() // another Done is making it
			continue
		case s&ctxEnded != 0:
			return closedChan, false
		}
		if c.state.CompareAndSwap(s, s|ctxMaking) {
			break
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	c.ctx, c.stop = ctx, stop
	for {
		s := c.state.Load()
		if s&ctxEnded != 0 {
			stop() // the request ended meanwhile
		}
		if c.state.CompareAndSwap(s, s&^ctxMaking|ctxMade) {
			return ctx.Done(), true
		}
	}
}

// Err returns context.Canceled once Done is closed.
func (c *lazyCtx) Err() error {
	switch s := c.state.Load(); {
	case s&ctxMade != 0:
		return c.ctx.Err()
	case s&ctxEnded != 0:
		return context.Canceled
	}
	return nil
}

// Value returns the connection's local address for
// http.LocalAddrContextKey and the Server's *http.Server shim for
// http.ServerContextKey, as net/http does, and otherwise defers to the
// inner context (which is how context.WithCancel finds it, through
// WithValue layers too: Done, which it calls first, made it).
func (c *lazyCtx) Value(key any) any {
	switch key {
	case http.LocalAddrContextKey:
		return c.laddr
	case http.ServerContextKey:
		return c.srv
	}
	if c.state.Load()&ctxMade != 0 {
		return c.ctx.Value(key)
	}
	return nil
}

// cancel ends the context: the request is over.
func (c *lazyCtx) cancel() {
	for {
		s := c.state.Load()
		if s&ctxMade != 0 {
			c.stop()
			return
		}
		if s&ctxEnded != 0 || c.state.CompareAndSwap(s, s|ctxEnded) {
			return // nothing made yet: a Done making it cancels it
		}
	}
}

// flag reports whether bit (ctxWantWatch or ctxHijack) is set.
func (c *lazyCtx) flag(bit uint32) bool { return c.state.Load()&bit != 0 }

// setFlag sets or clears bit and reports whether it was set.
func (c *lazyCtx) setFlag(bit uint32, on bool) bool {
	if on {
		return c.state.Or(bit)&bit != 0
	}
	return c.state.And(^bit)&bit != 0
}

func (c *compatContext) lock() { c.mu.Lock() }

// unlock releases mu, first starting the disconnect watch if Done asked for
// it while mu was held.
func (c *compatContext) unlock() {
	c.mu.Unlock()
	if c.flag(ctxWantWatch) && c.mu.TryLock() {
		c.startWatchLocked()
		c.mu.Unlock()
	}
}

// startWatchLocked starts the engine's disconnect watch, which cancels
// inner when the client goes away. mu must be held.
func (c *compatContext) startWatchLocked() {
	if !c.setFlag(ctxWantWatch, false) || c.ended.Load() {
		return
	}
	c.x.watchFor(c)
}

// engineDone is the engine watch's news that its Done channel is closed:
// the client has gone (or the request ended). It cancels the context,
// unless the connection was hijacked.
func (c *compatContext) engineDone() {
	if !c.flag(ctxHijack) {
		c.lazyCtx.cancel()
	}
}

// Done returns a channel closed when the client goes away or ServeHTTP
// returns.
func (c *compatContext) Done() <-chan struct{} {
	ch, created := c.done()
	if created {
		c.setFlag(ctxWantWatch, true)
	}
	// Seen either here or by the holder of mu in unlock (it loads
	// ctxWantWatch after releasing mu).
	if c.flag(ctxWantWatch) && c.mu.TryLock() {
		c.startWatchLocked()
		c.mu.Unlock()
	}
	return ch
}

// String names the context, for fmt and context's own String methods.
func (c *compatContext) String() string { return "riptide.compatContext" }

// end cancels the context: ServeHTTP has returned (or panicked). The
// serving goroutine calls it; when finish has already ended the request
// under mu (endLocked), mu is not taken again.
func (c *compatContext) end() {
	if !c.ended.Load() {
		c.mu.Lock()
		c.endLocked()
		c.mu.Unlock()
	}
	c.lazyCtx.cancel()
}

// endLocked marks the request ended: body reads, response writes and
// the disconnect watch no longer reach the engine. mu must be held.
func (c *compatContext) endLocked() {
	c.ended.Store(true)
	c.x = nil
}
