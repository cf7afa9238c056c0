package riptide

import (
	"github.com/riptide-http/riptide/h1"
)

// The per-stream sequence of HTTP/2 and HTTP/3: one request stream served
// by a Ctx on a conn of the stream pool (newStreamConn: no HTTP/1.1 write
// buffer, a response body buffer only while one is buffered, no
// net.Conn), with the stream as the Ctx's exchange. The protocols differ
// only in how a request head is filled in and how a failed response ends
// (streamExchange); which requests are refused (431 for more fields
// than MaxHeaders, 413 for a declared body over the limit), and how, is
// decided here once.

// streamExchange is the exchange of a request stream (h2Exchange,
// h3Stream).
type streamExchange interface {
	exchange
	// isHEAD reports a HEAD request, known before the head is filled in
	// (or refused), so that no refusal to a HEAD carries a body.
	isHEAD() bool
	// fillRequest builds the request head into c: c.ctx.req, whose bytes
	// lie in c.rbuf[:c.pin], method first, as an HTTP/1.1 head does. It
	// returns 0, or the status refusing the request: 431 for a header
	// list over the engine's size limit (or, HTTP/2, already for more
	// fields than MaxHeaders, not copied), 400 for a target or head h1
	// refuses.
	fillRequest(c *conn) int
	// hasBody reports a request body that may follow the head (one of
	// unknown length may turn out empty).
	hasBody(req *h1.Request) bool
	// failed ends a stream whose response could not be completed (a
	// write failed, or the handler panicked after the head went out), so
	// that the client does not take it as complete.
	failed()
}

// serveStream serves one request stream with the Server's Handler, native
// or compat, as on HTTP/1.1; streams counts it in Stats.
func (s *Server) serveStream(ex streamExchange, streams *stripedCounter) {
	c := newStreamConn(s)
	c.ex = ex
	c.state.Store(int32(StateActive)) // state changes are the connection's, not its streams'
	streams.Add(1)
	c.statRequestStart()
	x := &c.ctx
	x.resetResponse()
	x.resp.head = ex.isHEAD()
	switch code := ex.fillRequest(c); {
	case code != 0:
		x.canned(code)
	case len(x.req.Headers) > c.cfg.limits.MaxHeaders:
		x.canned(431)
	case overBodyLimit(s.cfg.maxBody, x.req.ContentLength):
		x.canned(413)
	default:
		if x.ConnectProtocol() != nil {
			c.srv.stats.xconnects[ex.protoMajor()-2].Add(1)
		}
		c.body.startStream(ex.hasBody(&x.req), expects100(&x.req))
		x.inHandler.Store(true)
		c.callHandler()
		if t := c.tunnel; t != nil {
			t.wait() // a CONNECT stream taken over is served until closed
			c.tunnel = nil
		}
	}
	// A compat body read left running on another goroutine returns now,
	// before the stream may serve another request.
	c.body.endReads()
	x.stopWatch(true)
	x.finish()
	if c.werr != nil {
		ex.failed()
	}
	c.statRequestDone()
	c.body.closed = true
	c.body.stream = false
	x.raceRelease() // racecheck.go: race builds only
	putConn(c)
}

// streamRoom gives the stream conn's header storage room for n fields,
// the count of the head about to be filled in: exactly n when it has less
// (newStreamConn), so that the Ctx holds what its request needs.
func (c *conn) streamRoom(n int) {
	if req := &c.ctx.req; cap(req.Headers) < n {
		req.Headers = make([]h1.Header, 0, n)
	}
}

// expects100 reports "Expect: 100-continue" in a request head built from
// fields (h1.Request.Expect100 is set by the HTTP/1.1 parser only).
func expects100(req *h1.Request) bool {
	for i := range req.Headers {
		if f := &req.Headers[i]; f.Key == h1.HeaderExpect && h1.EqualFold(f.Value, "100-continue") {
			return true
		}
	}
	return false
}
