package riptide

// HTTP/2 streams served by a Ctx: a Ctx serves a stream of the engine
// (internal/h2) with no HTTP/1.1 text in between. The request head is
// filled straight from the decoded fields (pseudo-headers to method,
// target and Host; fields in order) into the Ctx's h1.Request view; the
// stream is the Ctx's exchange (h2Exchange): the body is read from it with
// flow-control backpressure, its trailers reach Ctx.Trailers, and the
// response goes to it as a head of fields and DATA.
//
// The Ctx runs on a conn of the stream pool (newStreamConn: no HTTP/1.1
// write buffer, a body buffer only while one is buffered) for the
// stream's life, for its buffers and body reader; the conn has no
// net.Conn.

import (
	"crypto/tls"
	"net"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/clock"
	"github.com/riptide-http/riptide/internal/h2"
)

// h2Door serves the streams of a Server: a Ctx on the stream runs the
// Server's Handler, native or compat (FromHTTP), as on HTTP/1.1.
type h2Door struct {
	srv *Server
}

// ServeStream runs the Handler for the stream on an engine conn.
func (d *h2Door) ServeStream(st *h2.Stream) {
	s := d.srv
	c := newStreamConn(s)
	c.ex = (*h2Exchange)(st)
	c.state.Store(int32(StateActive)) // state changes are the connection's, not its streams'
	s.stats.h2Streams.Add(1)
	c.statRequestStart()
	x := &c.ctx
	x.resetResponse()
	x.resp.head = st.Method() == "HEAD"
	switch code := c.fillH2Request(st); {
	case code != 0:
		x.canned(code)
	case overBodyLimit(s.cfg.maxBody, st.ContentLength()):
		x.canned(413)
	default:
		c.body.startStream(st.HasBody(), expects100(&x.req))
		x.inHandler.Store(true)
		c.callHandler()
	}
	// A compat body read left running on another goroutine returns now,
	// before the stream may serve another request.
	c.body.endReads()
	x.stopWatch(true)
	x.finish()
	c.statRequestDone()
	c.body.closed = true
	c.body.stream = false
	clear(c.h2fields)
	c.h2fields = c.h2fields[:0]
	x.raceRelease() // racecheck.go: race builds only
	putConn(c)
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

// fillH2Request copies the request head into c.rbuf and points the Ctx's
// h1.Request at it. It returns 0, or the status for a request the server
// refuses (431 for too many or too large fields, 400 for a bad target).
func (c *conn) fillH2Request(st *h2.Stream) int {
	buf, n, code := st.FillRequest(&c.ctx.req, c.rbuf, c.cfg.limits.MaxHeaders)
	c.rbuf = buf
	if code == 0 {
		c.r, c.w, c.pin = 0, 0, n
	}
	return code
}

// h2Exchange is an HTTP/2 stream as the exchange of the Ctx serving it
// (exchange.go). It is the stream itself under another name, so that the
// exchange value needs no allocation and stays this stream's after the
// conn serving it is reused.
type h2Exchange h2.Stream

var _ exchange = (*h2Exchange)(nil)

func (e *h2Exchange) st() *h2.Stream { return (*h2.Stream)(e) }

// writeHead sends the HEADERS for the committed response, with the
// buffered body in the same batch; a complete body without trailers ends
// the stream with it. A Content-Length the handler declared is always
// sent.
func (e *h2Exchange) writeHead(x *Ctx, status int, streaming bool) {
	r := &x.resp
	c := x.conn
	body, bodyLen := x.takeBody()
	// Trailers set so far: more may come while streaming. A body shorter
	// than declared does not end the stream: endResponse resets it.
	end := !streaming && r.trl.len() == 0 && (r.clen < 0 || r.noBody || int64(len(body)) == r.clen)
	h := e.head(x, status, streaming, bodyLen)
	if end && len(body) == 0 {
		body = nil
	} else {
		r.written += int64(len(body))
	}
	if err := e.st().WriteHead(&h, body, end); err != nil {
		c.werr = err
	}
	// The stream copied the body: lend the buffer out until the next
	// write that buffers, if any.
	c.giveBody()
}

// head builds the head: :status, the handler's fields, Date, Server and
// Content-Length, which h1.BodyFraming decides as for HTTP/1.1 and the
// client (Framed: an unknown length ends with the stream).
func (e *h2Exchange) head(x *Ctx, status int, streaming bool, bodyLen int) h2.Head {
	r := &x.resp
	c := x.conn
	c.h2fields = appendH2Fields(c.h2fields[:0], &r.hdr, false)
	h := h2.Head{Status: status, ContentLength: -1}
	if status >= 200 {
		if !r.userDate {
			c.h2fields = append(c.h2fields, h2.Field{Name: "date", Value: h2Date()})
		}
		if s := c.srv; s.addsServerHeader(r.userServer) {
			c.h2fields = append(c.h2fields, h2.Field{Name: "server", Value: s.Name})
		}
		if a := c.srv.h3state.altSvc.Load(); a != nil && !r.userAltSvc {
			c.h2fields = append(c.h2fields, h2.Field{Name: "alt-svc", Value: a.value}) // h3.go
		}
		if n, ok := x.framedLength(status, streaming, bodyLen); ok {
			h.ContentLength = n
		}
	}
	h.Fields = c.h2fields
	return h
}

// appendH2Fields appends the response's fields as views of its buffer,
// for the stream's encoder. Trailers: leave out the fields RFC 9110
// §6.5.1 forbids as trailers (framing, routing, authentication,
// controls), should one have been set.
func appendH2Fields(dst []h2.Field, h *headerFields, trailers bool) []h2.Field {
	for _, a := range h.at {
		name := unsafe.String(unsafe.SliceData(h.buf[a.name:]), a.value-a.name)
		if trailers && forbiddenTrailer(name) {
			continue
		}
		dst = append(dst, h2.Field{
			Name:  name,
			Value: unsafe.String(unsafe.SliceData(h.buf[a.value:]), a.end-a.value),
			View:  true,
		})
	}
	return dst
}

// writeBody sends body bytes after the head.
func (e *h2Exchange) writeBody(x *Ctx, p []byte) (int, error) {
	c := x.conn
	if send, n, err := x.admitBody(p, c.werr); !send {
		return n, err
	}
	if err := e.st().WriteData(p, false); err != nil {
		c.werr = err
		return 0, err
	}
	return len(p), nil
}

// flush has nothing to do: body bytes are queued as they are written, and
// the connection's writer sends them.
func (e *h2Exchange) flush() error { return e.st().Err() }

// endResponse ends the stream after the handler: trailers, or an empty
// DATA frame with END_STREAM. A body shorter than its declared length, or
// an invalid trailer, resets the stream instead, so that the client does
// not take the response as complete.
func (e *h2Exchange) endResponse(x *Ctx) {
	r := &x.resp
	switch {
	case r.badTrailer || x.bodyShort():
		e.st().Reset()
	case r.trl.len() == 0:
		_ = e.st().EndStream()
	default:
		c := x.conn
		c.h2fields = appendH2Fields(c.h2fields[:0], &r.trl, true)
		_ = e.st().WriteTrailers(c.h2fields)
	}
}

// writeInformational sends a 1xx response.
func (e *h2Exchange) writeInformational(x *Ctx, code int) error {
	h := e.head(x, code, true, 0)
	return e.st().WriteHead(&h, nil, false)
}

// readBody reads the stream's body.
func (e *h2Exchange) readBody(p []byte) (int, error) {
	n, err := e.st().ReadBody(p)
	if err == h2.ErrBodyClosed {
		err = ErrBodyReadAfterClose
	}
	return n, err
}

// appendTrailers copies the stream's trailers (final once END_STREAM is
// in) into buf, as h1.Header fields.
func (e *h2Exchange) appendTrailers(dst []h1.Header, buf []byte) ([]h1.Header, []byte) {
	ts := e.st().Trailers()
	size := 0
	for _, f := range ts {
		size += len(f.Name) + len(f.Value)
	}
	if cap(buf) < size {
		buf = make([]byte, 0, size)
	}
	b := buf[:0]
	for _, f := range ts {
		var name, value []byte
		name, b = h2.AppendView(b, f.Name)
		value, b = h2.AppendView(b, f.Value)
		dst = append(dst, h1.Header{Name: name, Value: value, Key: h1.Lookup(name)})
	}
	return dst, buf
}

func (e *h2Exchange) send100Continue()             { e.st().Send100Continue() }
func (e *h2Exchange) closeBody(ended *atomic.Bool) { e.st().CloseBody(ended) }

// stopBody: a ReadBody waiting for DATA returns (with bytes already
// received, io.EOF, or ErrBodyReadAfterClose), and later ones fail once
// those bytes are taken; the engine discards the rest of the body when
// the stream's handler is done.
func (e *h2Exchange) stopBody() { e.st().StopBody() }

func (e *h2Exchange) setReadDeadline(t time.Time) error  { return e.st().SetReadDeadline(t) }
func (e *h2Exchange) setWriteDeadline(t time.Time) error { return e.st().SetWriteDeadline(t) }

// The disconnect watch: the stream's Read blocks until it is reset or its
// connection ends (io.EOF), or watchStop's deadline passes. It reads no
// body bytes, so it may run while the body is read.
func (e *h2Exchange) watchArm() bool          { return true }
func (e *h2Exchange) watchRead() (int, error) { return e.st().Read(nil) }
func (e *h2Exchange) watchStop()              { e.st().SetReadDeadline(aLongTimeAgo) }

func (e *h2Exchange) remoteAddr() net.Addr           { return e.st().RemoteAddr() }
func (e *h2Exchange) remoteAddrString() string       { return e.st().RemoteAddrString() }
func (e *h2Exchange) localAddr() net.Addr            { return e.st().LocalAddr() }
func (e *h2Exchange) tlsState() *tls.ConnectionState { return e.st().TLS() }
func (e *h2Exchange) transport() net.Conn            { return e.st().NetConn() }
func (e *h2Exchange) protoMajor() int                { return 2 }
func (e *h2Exchange) abilities() ability             { return canFullDuplex }

// h2Date returns the Date field value for the current second.
func h2Date() string { return clock.Value() }
