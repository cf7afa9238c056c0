package riptide

// The native door over HTTP/2: a Ctx serves a stream with no HTTP/1.1 text
// in between. The request head is filled straight from the decoded fields
// (pseudo-headers to method, target and Host; fields in order) into the
// Ctx's h1.Request view; the body is read from the stream with flow-control
// backpressure, its trailers reach Ctx.Trailers; and the stream is the
// Ctx's responseWire, so the response is encoded straight to HEADERS, DATA
// and trailing HEADERS frames.
//
// The Ctx runs on an engine conn borrowed from the pool for the stream's
// life; its net.Conn is the stream itself (below), whose Read is the
// disconnect watch: it returns io.EOF when the stream is reset.

import (
	"io"
	"net"
	"os"
	"strconv"
	"time"
	"unsafe"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/ascii"
	"golang.org/x/net/http2"
)

// serveNative runs the native Handler for the stream on an engine conn.
func (st *h2Stream) serveNative(h Handler) {
	hc := st.hc
	s := hc.srv
	c := newConn(s, st)
	c.wire = st
	c.state.Store(int32(StateActive)) // state changes are the connection's, not its streams'
	s.stats.h2Streams.Add(1)
	c.statRequestStart()
	x := &c.ctx
	x.resetResponse()
	x.resp.head = st.method == "HEAD"
	switch code := st.fillRequest(c); {
	case code != 0:
		x.cannedH2(code)
	case overBodyLimit(s.cfg.maxBody, st.declLen):
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
	putConn(c)
	hc.handlerDone(st)
}

// cannedH2 answers a request the handler never sees.
func (x *Ctx) cannedH2(code int) {
	x.SetStatus(code)
	x.SetHeader("Content-Type", "text/plain; charset=utf-8")
	x.WriteString(h1.StatusText(code))
	x.WriteString("\n")
}

// fillRequest copies the request head into c.rbuf and points the Ctx's
// h1.Request at it. It returns 0, or the status for a request the server
// refuses (431 for too many or too large fields, 400 for a bad target).
func (st *h2Stream) fillRequest(c *conn) int {
	if st.tooLarge {
		return 431
	}
	if len(st.fields) > c.cfg.limits.MaxHeaders {
		return 431
	}
	target := st.path
	if st.method == "CONNECT" {
		target = st.authority
	}
	n := len(st.method) + len(target) + len(st.authority)
	for _, f := range st.fields {
		n += len(f.Name) + len(f.Value)
	}
	if n > len(c.rbuf) {
		c.rbuf = make([]byte, n)
	}
	b := c.rbuf[:0]
	req := &c.ctx.req
	req.Reset()
	method, b := appendView(b, st.method)
	tgt, b := appendView(b, target)
	if req.SetRequestLine(method, tgt, 1) != nil {
		return 400
	}
	req.Host, b = appendView(b, st.authority)
	for _, f := range st.fields {
		var name, value []byte
		name, b = appendView(b, f.Name)
		value, b = appendView(b, f.Value)
		req.AddHeader(name, value)
		if len(req.Host) == 0 && req.Headers[len(req.Headers)-1].Key == h1.HeaderHost {
			req.Host = value
		}
	}
	c.r, c.w, c.pin = 0, 0, len(b)
	switch {
	case st.declLen >= 0:
		req.ContentLength = st.declLen
	case st.endAtOpen:
		req.ContentLength = 0
	default:
		req.ContentLength = -1 // unknown; HTTP/2 has no Transfer-Encoding
	}
	return 0
}

// appendView appends s to b, which has room for it, and returns the copy.
func appendView(b []byte, s string) ([]byte, []byte) {
	start := len(b)
	b = append(b, s...)
	return b[start:len(b):len(b)], b
}

// startStream prepares the body reader for an HTTP/2 stream's body.
func (b *bodyReader) startStream(st *h2Stream) {
	b.stream = st
	b.chunked = false
	b.remaining = 0
	b.read = 0
	b.limit = b.c.cfg.maxBody
	b.pending = nil
	b.done = st.endAtOpen
	b.err = nil
	b.expect, b.sent100, b.waited, b.closed = false, true, true, false
	b.trailers = b.trailers[:0]
}

// readStream reads the body from the stream, with MaxRequestBodySize.
func (b *bodyReader) readStream(p []byte) (int, error) {
	n, err := b.stream.readBody(p)
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
	}
	return n, b.fail(err)
}

// takeTrailers copies the stream's trailers (final once END_STREAM is in)
// into the reader's own buffer, as h1.Header fields.
func (b *bodyReader) takeTrailers() {
	ts := b.stream.trailers
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
		name, buf = appendView(buf, f.Name)
		value, buf = appendView(buf, f.Value)
		b.trailers = append(b.trailers, h1.Header{Name: name, Value: value, Key: h1.Lookup(name)})
	}
}

// The stream as the Ctx's net.Conn.

// Read is the disconnect watch: it blocks until the stream is reset or the
// connection ends (io.EOF), or the read deadline passes. Body bytes are
// read through the body reader, never here.
func (st *h2Stream) Read(p []byte) (int, error) {
	hc := st.hc
	hc.mu.Lock()
	defer hc.mu.Unlock()
	for !st.reset && !hc.dead {
		if !st.waitUntil(st.readDeadline) {
			return 0, os.ErrDeadlineExceeded
		}
	}
	return 0, io.EOF
}

// Write is never used: responses go through the responseWire methods.
func (st *h2Stream) Write(p []byte) (int, error) { return 0, ErrHijackHTTP2 }

// Close is a no-op: the stream ends when its handler returns.
func (st *h2Stream) Close() error { return nil }

// LocalAddr returns the connection's local address.
func (st *h2Stream) LocalAddr() net.Addr { return st.hc.localAddr }

// RemoteAddr returns the client's address.
func (st *h2Stream) RemoteAddr() net.Addr { return st.hc.nc.RemoteAddr() }

// SetDeadline sets both deadlines.
func (st *h2Stream) SetDeadline(t time.Time) error {
	_ = st.SetReadDeadline(t)
	return st.SetWriteDeadline(t)
}

// SetReadDeadline bounds body reads and the disconnect watch.
func (st *h2Stream) SetReadDeadline(t time.Time) error {
	hc := st.hc
	hc.mu.Lock()
	st.readDeadline, st.deadlineSet = t, true
	hc.cond.Broadcast()
	hc.mu.Unlock()
	return nil
}

// SetWriteDeadline bounds response writes waiting for flow control.
func (st *h2Stream) SetWriteDeadline(t time.Time) error {
	hc := st.hc
	hc.mu.Lock()
	st.writeDeadline = t
	hc.cond.Broadcast()
	hc.mu.Unlock()
	return nil
}

// The stream as the Ctx's responseWire.

// writeHead sends the HEADERS frame for the committed response, with the
// buffered body in the same batch; a complete body without trailers ends
// the stream with it. A Content-Length the handler declared is always
// sent.
func (st *h2Stream) writeHead(x *Ctx, status int, streaming bool) {
	hc := st.hc
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
	end := !streaming && len(body) == 0 && len(r.trl) == 0
	if !st.lockToSend() {
		c.werr = errH2StreamClosed
		return
	}
	defer hc.mu.Unlock()
	st.encodeHead(x, status, streaming, bodyLen)
	hc.queueHeaders(st.id, end)
	if end {
		st.sendEnd = true
		return
	}
	r.written += int64(len(body))
	if err := st.writeDataLocked(body, !streaming && len(r.trl) == 0); err != nil {
		c.werr = err
	}
}

// encodeHead encodes :status, the handler's fields, Date, Server and
// Content-Length into hc.hbuf (hc.mu held).
func (st *h2Stream) encodeHead(x *Ctx, status int, streaming bool, bodyLen int) {
	hc := st.hc
	r := &x.resp
	hc.encodeField(":status", h2StatusText(status))
	st.encodeLines(r.hdr)
	if status < 200 {
		return
	}
	if !r.userDate {
		hc.encodeField("date", hc.dateValue())
	}
	if hc.srv.addsServerHeader(r.userServer) {
		hc.encodeField("server", hc.srv.Name)
	}
	if !h1.BodyAllowed(status) {
		return
	}
	n := r.clen
	if n < 0 && !streaming && (!r.head || bodyLen > 0) {
		n = int64(bodyLen)
	}
	if n >= 0 {
		b := strconv.AppendInt(st.w.clenBuf[:0], n, 10)
		// Never indexed: the string is a view of a reused buffer.
		_ = hc.enc.WriteField(h2Field{Name: "content-length", Value: unsafe.String(&b[0], len(b)), Sensitive: true})
	}
}

// encodeLines encodes validated "Name: Value\r\n" lines. Names the server
// knows get constant lower-case spellings; other names and values are
// views of the Ctx's buffers, so they are sent never-indexed (the encoder
// keeps no reference to them).
func (st *h2Stream) encodeLines(lines []byte) {
	hc := st.hc
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
		if h2ConnectionSpecific(name) {
			continue
		}
		f := h2Field{Value: unsafe.String(unsafe.SliceData(value), len(value)), Sensitive: true}
		if k := h1.Lookup(name); k != h1.Unknown {
			f.Name = k.Lower()
			if v := hc.knownValue(k, value); v != "" {
				f.Value, f.Sensitive = v, false
			}
		} else {
			lower := st.lowerName(name)
			f.Name = unsafe.String(unsafe.SliceData(lower), len(lower))
		}
		_ = hc.enc.WriteField(f)
	}
}

// h2ConnectionSpecific reports a field HTTP/2 forbids (RFC 9113 §8.2.2).
func h2ConnectionSpecific(name []byte) bool {
	switch len(name) {
	case 7:
		return ascii.EqualFold(name, "upgrade")
	case 10:
		return ascii.EqualFold(name, "connection") || ascii.EqualFold(name, "keep-alive")
	case 16:
		return ascii.EqualFold(name, "proxy-connection")
	case 17:
		return ascii.EqualFold(name, "transfer-encoding")
	}
	return false
}

// lowerName returns name in lower case, in a buffer of the stream's.
func (st *h2Stream) lowerName(name []byte) []byte {
	b := st.w.lower[:0]
	for _, ch := range name {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		b = append(b, ch)
	}
	st.w.lower = b
	return b
}

// knownValue returns a string for the value of a known field that the
// connection can index: the same as the last value of that field (made
// once), or a new one for the next time (hc.mu held).
func (hc *h2Conn) knownValue(k h1.Known, v []byte) string {
	if int(k) >= len(hc.lastValues) {
		return ""
	}
	last := hc.lastValues[k]
	if last == string(v) {
		return last
	}
	if len(v) <= 64 {
		hc.lastValues[k] = string(v)
	}
	return ""
}

// writeBody sends body bytes after the head.
func (st *h2Stream) writeBody(x *Ctx, p []byte) (int, error) {
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
	if err := st.writeData(p, false); err != nil {
		c.werr = err
		return 0, err
	}
	return len(p), nil
}

// flush has nothing to do: body bytes are queued as they are written, and
// the connection's writer sends them.
func (st *h2Stream) flush() error {
	hc := st.hc
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if st.reset || hc.dead {
		return errH2StreamClosed
	}
	return nil
}

// endResponse ends the stream after the handler: trailers, or an empty
// DATA frame with END_STREAM. A body shorter than its declared length, or
// an invalid trailer, resets the stream instead, so that the client does
// not take the response as complete.
func (st *h2Stream) endResponse(x *Ctx) {
	hc := st.hc
	r := &x.resp
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if st.sendEnd || st.reset || hc.dead {
		return
	}
	if r.badTrailer || r.clen >= 0 && !r.noBody && r.written != r.clen {
		hc.closeStream(st, http2.ErrCodeInternal, true)
		return
	}
	if len(r.trl) == 0 {
		_ = st.writeDataLocked(nil, true)
		return
	}
	if !hc.waitOutput() {
		return
	}
	st.encodeLines(h2Trailers(r.trl))
	hc.queueHeaders(st.id, true)
	st.sendEnd = true
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
func (st *h2Stream) writeInformational(x *Ctx, code int) error {
	hc := st.hc
	if !st.lockToSend() {
		return errH2StreamClosed
	}
	defer hc.mu.Unlock()
	st.encodeHead(x, code, true, 0)
	hc.queueHeaders(st.id, false)
	return nil
}
