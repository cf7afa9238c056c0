package riptide

// The native door over HTTP/2: a Ctx serves a stream of the engine
// (internal/h2) with no HTTP/1.1 text in between. The request head is
// filled straight from the decoded fields (pseudo-headers to method,
// target and Host; fields in order) into the Ctx's h1.Request view; the
// body is read from the stream with flow-control backpressure, its
// trailers reach Ctx.Trailers; and the conn's h2Wire is the Ctx's
// responseWire, so the response goes to the stream as a head of fields
// and DATA.
//
// The Ctx runs on an engine conn borrowed from the pool for the stream's
// life; its net.Conn is the stream itself, whose Read is the disconnect
// watch: it returns io.EOF when the stream is reset.

import (
	"io"
	"unsafe"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/clock"
	"github.com/riptide-http/riptide/internal/h2"
)

// h2NativeDoor serves the streams of a Server whose handler is native.
type h2NativeDoor struct {
	srv *Server
	h   Handler
}

// ServeStream runs the native Handler for the stream on an engine conn.
func (d *h2NativeDoor) ServeStream(st *h2.Stream) {
	s := d.srv
	c := newConn(s, st)
	c.h2w.st = st
	c.wire = &c.h2w
	c.state.Store(int32(StateActive)) // state changes are the connection's, not its streams'
	s.stats.h2Streams.Add(1)
	c.statRequestStart()
	x := &c.ctx
	x.resetResponse()
	x.resp.head = st.Method() == "HEAD"
	switch code := c.fillH2Request(st); {
	case code != 0:
		x.cannedH2(code)
	case overBodyLimit(s.cfg.maxBody, st.ContentLength()):
		x.cannedH2(413)
	default:
		c.body.startStream(st)
		x.inHandler.Store(true)
		c.callHandler()
	}
	x.stopWatch(true)
	x.finish()
	c.statRequestDone()
	c.body.closed = true
	c.body.stream = nil
	c.h2w.st = nil
	putConn(c)
}

// cannedH2 answers a request the handler never sees.
func (x *Ctx) cannedH2(code int) {
	x.SetStatus(code)
	x.SetHeader("Content-Type", "text/plain; charset=utf-8")
	x.WriteString(h1.StatusText(code))
	x.WriteString("\n")
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

// startStream prepares the body reader for an HTTP/2 stream's body.
func (b *bodyReader) startStream(st *h2.Stream) {
	b.stream = st
	b.chunked = false
	b.remaining = 0
	b.read = 0
	b.limit = b.c.cfg.maxBody
	b.pending = nil
	b.done = !st.HasBody()
	b.err = nil
	b.expect, b.sent100, b.waited, b.closed = false, true, true, false
	b.trailers = b.trailers[:0]
}

// readStream reads the body from the stream, with MaxRequestBodySize.
func (b *bodyReader) readStream(p []byte) (int, error) {
	n, err := b.stream.ReadBody(p)
	if overBodyLimit(b.limit, b.read+int64(n)) {
		return 0, b.tooLarge()
	}
	b.read += int64(n)
	switch err {
	case nil:
		return n, nil
	case io.EOF:
		b.takeTrailers()
		b.hitEOF()
		return n, io.EOF
	case h2.ErrBodyClosed:
		err = ErrBodyReadAfterClose
	}
	return n, b.fail(err)
}

// takeTrailers copies the stream's trailers (final once END_STREAM is in)
// into the reader's own buffer, as h1.Header fields.
func (b *bodyReader) takeTrailers() {
	ts := b.stream.Trailers()
	size := 0
	for _, f := range ts {
		size += len(f.Name) + len(f.Value)
	}
	if cap(b.tbuf) < size {
		b.tbuf = make([]byte, 0, size)
	}
	buf := b.tbuf[:0]
	for _, f := range ts {
		var name, value []byte
		name, buf = h2.AppendView(buf, f.Name)
		value, buf = h2.AppendView(buf, f.Value)
		b.trailers = append(b.trailers, h1.Header{Name: name, Value: value, Key: h1.Lookup(name)})
	}
}

// h2Wire is the responseWire of a Ctx serving an HTTP/2 stream: it turns
// the committed response into the stream's head fields and DATA. It lives
// in the pooled conn, with the field slice it reuses.
type h2Wire struct {
	st     *h2.Stream
	fields []h2.Field
}

// writeHead sends the HEADERS for the committed response, with the
// buffered body in the same batch; a complete body without trailers ends
// the stream with it. A Content-Length the handler declared is always
// sent.
func (w *h2Wire) writeHead(x *Ctx, status int, streaming bool) {
	r := &x.resp
	c := x.conn
	body := r.body
	bodyLen := len(body)
	r.body = r.body[:0]
	if r.noBody {
		body = nil
	} else if r.clen >= 0 && int64(len(body)) > r.clen {
		body = body[:r.clen] // declared less than was buffered: send what was declared
	}
	// Trailers set so far: more may come while streaming.
	end := !streaming && len(r.trl) == 0
	h := w.head(x, status, streaming, bodyLen)
	if end && len(body) == 0 {
		if err := w.st.WriteHead(&h, nil, true); err != nil {
			c.werr = err
		}
		return
	}
	r.written += int64(len(body))
	if err := w.st.WriteHead(&h, body, end); err != nil {
		c.werr = err
	}
}

// head builds the head: :status, the handler's fields, Date, Server and
// Content-Length.
func (w *h2Wire) head(x *Ctx, status int, streaming bool, bodyLen int) h2.Head {
	r := &x.resp
	w.fields = appendLineFields(w.fields[:0], r.hdr)
	h := h2.Head{Status: status, ContentLength: -1}
	if status >= 200 {
		if !r.userDate {
			w.fields = append(w.fields, h2.Field{Name: "date", Value: h2Date()})
		}
		if s := x.conn.srv; s.addsServerHeader(r.userServer) {
			w.fields = append(w.fields, h2.Field{Name: "server", Value: s.Name})
		}
		if h1.BodyAllowed(status) {
			n := r.clen
			if n < 0 && !streaming && (!r.head || bodyLen > 0) {
				n = int64(bodyLen)
			}
			h.ContentLength = n
		}
	}
	h.Fields = w.fields
	return h
}

// appendLineFields appends validated "Name: Value\r\n" lines as fields
// that are views of the Ctx's buffers.
func appendLineFields(dst []h2.Field, lines []byte) []h2.Field {
	for len(lines) > 0 {
		eol := 0
		for lines[eol] != '\n' {
			eol++
		}
		line := lines[:eol-1]
		lines = lines[eol+1:]
		colon := 0
		for line[colon] != ':' {
			colon++
		}
		name, value := line[:colon], line[colon+2:]
		dst = append(dst, h2.Field{
			Name:  unsafe.String(unsafe.SliceData(name), len(name)),
			Value: unsafe.String(unsafe.SliceData(value), len(value)),
			View:  true,
		})
	}
	return dst
}

// writeBody sends body bytes after the head.
func (w *h2Wire) writeBody(x *Ctx, p []byte) (int, error) {
	r := &x.resp
	c := x.conn
	switch {
	case r.finished:
		return 0, ErrCommitted
	case c.werr != nil:
		return 0, c.werr
	case r.noBody || len(p) == 0:
		return len(p), nil
	case r.clen >= 0 && r.written+int64(len(p)) > r.clen:
		return 0, ErrContentLength
	}
	r.written += int64(len(p))
	if err := w.st.WriteData(p, false); err != nil {
		c.werr = err
		return 0, err
	}
	return len(p), nil
}

// flush has nothing to do: body bytes are queued as they are written, and
// the connection's writer sends them.
func (w *h2Wire) flush() error { return w.st.Err() }

// endResponse ends the stream after the handler: trailers, or an empty
// DATA frame with END_STREAM. A body shorter than its declared length, or
// an invalid trailer, resets the stream instead, so that the client does
// not take the response as complete.
func (w *h2Wire) endResponse(x *Ctx) {
	r := &x.resp
	switch {
	case r.badTrailer || r.clen >= 0 && !r.noBody && r.written != r.clen:
		w.st.Reset()
	case len(r.trl) == 0:
		_ = w.st.EndStream()
	default:
		w.fields = appendLineFields(w.fields[:0], h2Trailers(r.trl))
		_ = w.st.WriteTrailers(w.fields)
	}
}

// h2Trailers returns the trailer lines without those RFC 9110 §6.5.1
// forbids (framing, routing, authentication, controls).
func h2Trailers(lines []byte) []byte {
	// Checked in place: the rare forbidden line is cut out.
	for i := 0; i < len(lines); {
		eol := i
		for lines[eol] != '\n' {
			eol++
		}
		colon := i
		for lines[colon] != ':' {
			colon++
		}
		if forbiddenTrailer(string(lines[i:colon])) {
			lines = append(lines[:i], lines[eol+1:]...)
			continue
		}
		i = eol + 1
	}
	return lines
}

// writeInformational sends a 1xx response.
func (w *h2Wire) writeInformational(x *Ctx, code int) error {
	h := w.head(x, code, true, 0)
	return w.st.WriteHead(&h, nil, false)
}

// h2Date returns the Date field value for the current second.
func h2Date() string { return clock.Value() }
