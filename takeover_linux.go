package riptide

// An HTTP/1.1 connection on the event loop taken over by another protocol
// (package websocket's event-driven mode, through internal/takeover): the
// handler answers the upgrade itself, and once it returns the worker runs
// the protocol's ServeConn instead of reading the next request. The
// connection stays in the engine: it parks with the protocol as its saved
// state (evloop.Saved.Proto), and its loop hands it to a worker again
// (elHandler.Serve or, over TLS, elTLSHandler.Serve; then serveHandover)
// when it is readable, woken, closed, past its read deadline, or writable
// with output queued. Over TLS see takeover_tls_linux.go.

import (
	"net"
	"time"

	"github.com/riptide-http/riptide/internal/takeover"
)

func init() { takeover.Take = takeOver }

// takeOver is takeover.Take: it marks x's connection as handed to p (the
// handler must not write to x again) and returns its socket and the bytes
// read past the request.
func takeOver(xa any, p takeover.Proto) (net.Conn, []byte, bool, error) {
	x, _ := xa.(*Ctx)
	if x == nil || x.conn == nil {
		return nil, nil, false, nil
	}
	c := x.conn
	plain := c.ec != nil && c.nc == net.Conn(c.ec)
	if !plain && !c.tlsTakeable() || c.hijacked || c.ex.abilities()&canHijack == 0 || len(c.body.pending) > 0 {
		return nil, nil, false, nil
	}
	if p == nil {
		return nil, nil, true, nil // a probe
	}
	x.stopWatch(false)
	if err := c.flush(); err != nil {
		return nil, nil, true, err
	}
	buffered := c.rbuf[c.r:c.w]
	c.r = c.w
	c.hijacked = true
	c.handover = p
	c.nc.SetDeadline(time.Time{})
	if !plain {
		return c.tl.takeOver(), buffered, true, nil // takeover_tls_linux.go
	}
	return c.ec, buffered, true, nil
}

// serveHandover runs the protocol that took c's connection over, on c's
// worker, until it parks (the connection is its loop's: c goes back to the
// worker) or ends (closed and counted out here, as h2Served does).
func (c *conn) serveHandover() {
	p := c.handover
	c.handover = nil
	// Between its events the connection is idle to Shutdown (which asks
	// it to close through a past read deadline) and to Stats.
	c.setState(StateIdle)
	if !p.ServeConn(c.nc) {
		c.setState(StateClosed)
		c.untrack()
		c.statClose()
	}
	putConn(c)
}

// resumeHandover serves again a connection parked by the protocol that
// took it over (c is the worker's conn, attached to it).
func (c *conn) resumeHandover(p takeover.Proto) {
	ec := c.loopConn()
	ec.Saved.Proto = nil
	c.state.Store(ec.Status.Load())
	c.handover = p
	c.serveHandover()
}
