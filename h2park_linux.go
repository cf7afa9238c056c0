package riptide

// Idle HTTP/2 connections parked on the event loop (internal/h2's
// park.go has the connection's side): an h2c connection with no open
// stream hands its socket back to its loop as an idle HTTP/1.1 connection
// does, with no goroutine and no buffer; the loop hands it to a worker
// again (elHandler.Serve, then resumeH2) when a frame arrives or the
// server has something to send it. The worker's conn serves it only while
// it runs: the HTTP/2 connection keeps none of its buffers.

import (
	"net"
	"sync/atomic"

	"github.com/riptide-http/riptide/internal/evloop"
	"github.com/riptide-http/riptide/internal/h2"
)

// elH2Parker is the event loop's socket as internal/h2's Parker.
type elH2Parker evloop.Conn

func (p *elH2Parker) ec() *evloop.Conn { return (*evloop.Conn)(p) }

// TryRead implements h2.Parker.
func (p *elH2Parker) TryRead(b []byte) (int, error) { return p.ec().TryRead(b) }

// WaitRead implements h2.Parker.
func (p *elH2Parker) WaitRead(until int64) error { return p.ec().WaitRead(until) }

// Wake implements h2.Parker.
func (p *elH2Parker) Wake() { p.ec().Wake() }

// Park implements h2.Parker: the connection is saved with its state
// (StateActive, mirrored at runH2's start) as the protocol the loop's
// worker resumes, and never closed without one (evloop.Saved.Proto).
func (p *elH2Parker) Park(hc *h2.Conn) bool {
	return parkH2(p.ec(), evloop.Saved{Proto: hc})
}

// parkH2 hands ec, whose HTTP/2 connection sv.Proto has gone quiet, to
// its loop (see elH2Parker.Park); false when it became readable meanwhile.
func parkH2(ec *evloop.Conn, sv evloop.Saved) bool {
	hook := h2ParkHook.Load() // nil but in tests that watch for parks
	var client net.Addr
	if hook != nil {
		client = ec.RemoteAddr() // before: after Park, ec may be another worker's
	}
	if !ec.Park(sv, nil) {
		return false
	}
	if hook != nil {
		(*hook)(client)
	}
	return true
}

// h2ParkHook, set by tests (export_linux_test.go), is told the client's
// address each time a connection parks.
var h2ParkHook atomic.Pointer[func(client net.Addr)]

// elH2 serves c's socket, on the event loop, as an HTTP/2 connection that
// parks while idle: h2c, or TLS with the event loop's TLS engine
// (tlsH2Parker, h2tlspark_linux.go). It reports false, doing nothing, off
// the event loop (the goroutine engine, TLS on the goroutine engine),
// where runH2 serves it on c's goroutine.
func (c *conn) elH2(rest []byte, sawPreface bool) bool {
	var p h2.Parker
	switch {
	case c.tl != nil && c.tl.det == nil && c.nc == net.Conn(c.tl.tc):
		p = (*tlsH2Parker)(c.tl)
	case c.ec != nil && c.nc == net.Conn(c.ec):
		p = (*elH2Parker)(c.ec)
	default:
		return false
	}
	hc := c.srv.h2Conn(c.nc, rest)
	hc.UseParker(p)
	c.h2Served(hc, hc.Serve(sawPreface, nil))
	return true
}

// resumeH2 serves a parked HTTP/2 connection again, on the worker its
// loop handed it to (c is the worker's conn, attached to it).
func (c *conn) resumeH2(hc *h2.Conn) {
	ec := c.loopConn()
	ec.Saved.Proto = nil
	c.state.Store(ec.Status.Load())
	c.h2Served(hc, hc.Resume())
}

// h2Served ends the worker's turn with hc: a parked connection is the
// loop's now (hc is not touched again); an ended one is counted out and
// its socket closed. c goes back to its worker either way.
func (c *conn) h2Served(hc *h2.Conn, parked bool) {
	if !parked {
		c.srv.h2state.register(hc, false)
		c.setState(StateClosed)
		c.untrack()
		c.statClose()
	} else {
		// The bytes this conn read before the hand-off (the preface and
		// whatever came with it: the HTTP/2 engine counts only what it
		// reads itself) go to the stats now: c serves another connection
		// next, and the one that resumes this one is another conn.
		c.statFlushBytes()
	}
	putConn(c)
}
