package riptide

import (
	"errors"
	"unsafe"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/ascii"
)

// Errors returned by the response methods.
var (
	// ErrHijacked: the connection was taken over with Hijack.
	ErrHijacked = errors.New("riptide: connection hijacked")
	// ErrContentLength: the handler wrote more than the Content-Length it
	// declared.
	ErrContentLength = errors.New("riptide: wrote more than the declared Content-Length")
	// ErrCommitted: the response head was already sent.
	ErrCommitted = errors.New("riptide: response already committed")
	// ErrBadStatus: an informational status outside 102..199.
	ErrBadStatus = errors.New("riptide: invalid informational status")
	// ErrAbortHandler is a panic value that aborts a response without the
	// panic being logged (the connection is cut or answered 500, as for
	// any panic).
	ErrAbortHandler = errors.New("riptide: abort handler")
)

// response is the response half of a Ctx. Until committed, the status,
// header lines and body are buffered; commit writes the head (and the
// buffered body) into the connection's wbuf and fixes the framing.
type response struct {
	status int
	// hdr holds the validated header fields set by the handler, as
	// fields: the HTTP/1.1 wire writes them as lines at commit, the
	// HTTP/2 wire hands them to the stream as they are.
	hdr headerFields
	// body is the buffered body (before commit) — at most writeBuf bytes.
	body []byte
	// trl holds the validated trailer fields.
	trl headerFields
	// clen is the Content-Length the handler declared, -1 for none.
	clen int64
	// written counts body bytes accepted after commit.
	written int64

	committed bool
	// wrote: the handler called Write, WriteString, SendFile or Flush, so
	// the status and header fields are fixed (see headFixed).
	wrote bool
	// filtering: a BodyFilter's Write or Flush is running; it may still
	// set header fields (see BodyFilter) while the head is not committed.
	filtering    bool
	inError      bool // Server.ErrorHandler is running (errors.go)
	finished     bool
	noBody       bool // HEAD, 1xx, 204, 304: body bytes are not sent
	head         bool // the request is HEAD
	close        bool // send Connection: close and close afterwards
	badHeader    bool // an invalid header was set: answer 500
	badTrailer   bool // an invalid trailer was set: cut the connection
	bodyTooLarge bool // a body read hit MaxRequestBodySize
	userDate     bool
	userServer   bool
	userAltSvc   bool // the handler set Alt-Svc: the HTTP/3 one is not added (h3.go)
	// out is the committed head (head.go).
	out          outHead
	statusLogged bool // a status set too late was logged (superfluousStatus)
	// resetOnPanic: a panic cuts the response even before anything of it
	// was sent (a compat handler on HTTP/2, whose stream net/http resets).
	resetOnPanic bool
}

func (x *Ctx) resetResponse() {
	r := &x.resp
	r.status, r.body = 0, r.body[:0]
	r.hdr.reset()
	r.trl.reset()
	r.clen, r.written = -1, 0
	r.committed, r.finished, r.noBody, r.head, r.close = false, false, false, false, false
	r.wrote, r.filtering, r.inError = false, false, false
	r.badHeader, r.badTrailer, r.bodyTooLarge, r.userDate, r.userServer = false, false, false, false, false
	r.userAltSvc, r.resetOnPanic, r.statusLogged = false, false, false
	x.scratch = x.scratch[:0]
	x.pv.n = 0
	x.locals.reset()
	x.pattern = ""
	x.filter = nil
}

// headFixed reports whether the status and header fields can no longer
// change. The rule is net/http's, whatever the size of the body: the first
// Write (or WriteString, SendFile, Flush) fixes them, as WriteHeader does
// in net/http, even while the body is still buffered; later changes are
// ignored. A BodyFilter may still set fields from its Write and Flush until
// the head is committed.
func (x *Ctx) headFixed() bool {
	r := &x.resp
	return r.committed || r.wrote && !r.filtering
}

// SetStatus sets the response status code (default 200). It has no effect
// once the body has been written to (the first Write, WriteString,
// SendFile or Flush fixes the status and header fields, as in net/http,
// however small the body), except that a different code set then is
// logged, once per response, on Server.Logger as net/http logs a
// "superfluous response.WriteHeader call". A final status must be in
// 200..599; any other code is sent as 500 (interim 1xx responses are sent
// with WriteInformational, 101 needs Hijack).
func (x *Ctx) SetStatus(code int) {
	if code < 200 || code > 599 {
		code = 500
	}
	if x.headFixed() {
		if code != x.Status() {
			x.superfluousStatus("Ctx.SetStatus", x.Status(), code, 2)
		}
		return
	}
	x.resp.status = code
}

// Status returns the response status set so far (200 if none).
func (x *Ctx) Status() int {
	if x.resp.status == 0 {
		return 200
	}
	return x.resp.status
}

// SetHeader sets a response header field, replacing any field of the same
// name. An invalid name or a value containing CR, LF, NUL or other control
// bytes is not sent: the response becomes a 500 (header injection is
// refused, not escaped). Date and Server replace the server's own;
// Content-Length declares the body length (see SetContentLength);
// Connection: close closes the connection after the response;
// Transfer-Encoding is managed by the server and ignored. No effect once
// the body has been written to: the first Write, WriteString, SendFile or
// Flush fixes the status and header fields (net/http's rule), whether the
// body is then still buffered or already sent.
func (x *Ctx) SetHeader(name, value string) {
	if x.headFixed() || !checkHeader(x, name, value) {
		return
	}
	if special(x, name, value) {
		return
	}
	if x.resp.hdr.len() > 0 { // nothing to replace in the common first Set
		x.delHeader(name)
	}
	addField(&x.resp.hdr, name, value)
}

// SetHeaderBytes is SetHeader with a []byte value, which it copies. No
// effect after the first Write, as SetHeader.
func (x *Ctx) SetHeaderBytes(name string, value []byte) {
	if x.headFixed() || !checkHeader(x, name, value) {
		return
	}
	if special(x, name, value) {
		return
	}
	if x.resp.hdr.len() > 0 { // nothing to replace in the common first Set
		x.delHeader(name)
	}
	addField(&x.resp.hdr, name, value)
}

// AddHeader adds a response header field, keeping existing ones of the same
// name (Set-Cookie). Validation as SetHeader; no effect after the first
// Write, as SetHeader.
func (x *Ctx) AddHeader(name, value string) {
	if x.headFixed() || !checkHeader(x, name, value) {
		return
	}
	if special(x, name, value) {
		return
	}
	addField(&x.resp.hdr, name, value)
}

// SetContentType sets the Content-Type header, as SetHeader does (no
// effect after the first Write).
func (x *Ctx) SetContentType(value string) {
	// SetHeader without the checks a constant name makes moot: the name
	// is a valid token and not one special handles.
	if x.headFixed() {
		return
	}
	if !h1.ValidHeaderValue(value) {
		x.resp.badHeader = true
		return
	}
	if x.resp.hdr.len() > 0 {
		x.delHeader("Content-Type")
	}
	addField(&x.resp.hdr, "Content-Type", value)
}

// DelHeader removes every response header field named name.
// DelHeader("Content-Length") removes a declared length (SetContentLength).
// No effect after the first Write, as SetHeader.
func (x *Ctx) DelHeader(name string) {
	if x.headFixed() {
		return
	}
	x.delHeader(name)
}

// delHeader is DelHeader without the check whether the head is fixed.
func (x *Ctx) delHeader(name string) {
	if len(name) == 14 && ascii.EqualFold(name, "content-length") {
		x.resp.clen = -1
	}
	x.resp.hdr.del(name)
}

// ResponseHeaders iterates over the response header fields set so far.
func (x *Ctx) ResponseHeaders(yield func(name, value []byte) bool) {
	h := &x.resp.hdr
	for i := 0; i < h.len(); i++ {
		if !yield(h.name(i), h.value(i)) {
			return
		}
	}
}

// headerFields holds header (or trailer) fields one after another in a
// reused buffer, with where each name and value lies: the HTTP/1.1 wire
// writes them as lines, the HTTP/2 wire hands them to the stream, and
// neither parses text back. Both slices are kept across requests, so
// setting fields allocates nothing once they have grown.
type headerFields struct {
	buf []byte
	at  []fieldAt
}

// fieldAt is where a field lies in headerFields.buf: the name is
// buf[name:value], the value buf[value:end].
type fieldAt struct{ name, value, end int }

func (h *headerFields) reset() { h.buf, h.at = h.buf[:0], h.at[:0] }

// len returns the number of fields.
func (h *headerFields) len() int { return len(h.at) }

// name returns the name of field i, a view of the buffer.
func (h *headerFields) name(i int) []byte {
	a := h.at[i]
	return h.buf[a.name:a.value:a.value]
}

// value returns the value of field i, a view of the buffer.
func (h *headerFields) value(i int) []byte {
	a := h.at[i]
	return h.buf[a.value:a.end:a.end]
}

// addField appends a field; name and value are already validated.
func addField[V ~string | ~[]byte](h *headerFields, name string, value V) {
	start := len(h.buf)
	h.buf = append(h.buf, name...)
	h.buf = append(h.buf, value...)
	h.at = append(h.at, fieldAt{start, start + len(name), len(h.buf)})
}

// pushField records the field whose name starts at buf[start] and whose
// value at buf[value], up to the end of buf: for callers that append the
// value themselves.
func (h *headerFields) pushField(start, value int) {
	h.at = append(h.at, fieldAt{start, value, len(h.buf)})
}

// del removes every field named name (ASCII case-insensitive), moving
// the fields after it down so that the buffer holds only live fields.
func (h *headerFields) del(name string) {
	kept, cut := 0, 0
	for _, a := range h.at {
		if a.value-a.name == len(name) && h1.EqualFold(h.buf[a.name:a.value], name) {
			cut += a.end - a.name
			continue
		}
		if cut > 0 {
			copy(h.buf[a.name-cut:], h.buf[a.name:a.end])
			a.name, a.value, a.end = a.name-cut, a.value-cut, a.end-cut
		}
		h.at[kept] = a
		kept++
	}
	h.at = h.at[:kept]
	h.buf = h.buf[:len(h.buf)-cut]
}

// appendLines appends the fields as HTTP/1.1 header lines.
func (h *headerFields) appendLines(dst []byte) []byte {
	for _, a := range h.at {
		dst = h1.AppendHeader(dst, h.buf[a.name:a.value], h.buf[a.value:a.end])
	}
	return dst
}

// checkHeader validates a response field (header injection is refused)
// and records a failure for commit to answer 500.
func checkHeader[V ~string | ~[]byte](x *Ctx, name string, value V) bool {
	ok := h1.ValidHeaderName(name) && h1.ValidHeaderValue(value)
	if !ok {
		x.resp.badHeader = true
	}
	return ok
}

// special handles the header fields the server itself manages and reports
// whether name was one it consumed.
func special[V ~string | ~[]byte](x *Ctx, name string, value V) bool {
	r := &x.resp
	switch len(name) {
	case 4:
		if ascii.EqualFold(name, "date") {
			r.userDate = true
		}
	case 6:
		if ascii.EqualFold(name, "server") {
			r.userServer = true
		}
	case 7:
		if ascii.EqualFold(name, "alt-svc") {
			r.userAltSvc = true
		}
	case 10:
		if ascii.EqualFold(name, "connection") && ascii.EqualFold(value, "close") {
			r.close = true
			return true
		}
	case 14:
		if ascii.EqualFold(name, "content-length") {
			n, ok := contentLengthValue(value)
			if !ok {
				r.badHeader = true
			} else {
				r.clen = n
			}
			return true
		}
	case 17:
		return ascii.EqualFold(name, "transfer-encoding")
	}
	return false
}

// SetContentLength declares the body length, so a streamed body is sent
// with Content-Length instead of chunked. Writing more fails with
// ErrContentLength; writing less closes the connection after the response.
// No effect after the first Write, as SetHeader.
func (x *Ctx) SetContentLength(n int64) {
	if !x.headFixed() && n >= 0 {
		x.resp.clen = n
	}
}

// SetClose makes this the last response on the connection (Connection:
// close). Effective until the response is committed.
func (x *Ctx) SetClose() { x.resp.close = true }

// WillClose reports whether the connection will close after this response:
// the client asked for it, keep-alive is off, a limit was reached, the
// server is shutting down, or an unread body cannot be drained.
func (x *Ctx) WillClose() bool {
	c := x.conn
	return x.resp.close || c.closeAfter || c.srv.draining.Load() || c.body.undrainable()
}

// Committed reports whether the response head has been written (by Flush,
// by a body too large to buffer, or by the handler returning).
func (x *Ctx) Committed() bool { return x.resp.committed }

// SetTrailer sets a trailer field, sent after a chunked body. Setting one
// before the response is committed makes an HTTP/1.1 response chunked so
// that the trailer can be sent; announce it with AddHeader("Trailer", name)
// if the client needs to know in advance. Trailers are dropped on HTTP/1.0
// and on responses framed by Content-Length. A field that must not be a
// trailer (RFC 9110 §6.5.1: Content-Length, Transfer-Encoding, Host,
// Authorization, If-*, ...; net/http's list) is ignored. An invalid
// trailer cuts the connection instead of finishing the body.
func (x *Ctx) SetTrailer(name, value string) {
	if !h1.ValidHeaderName(name) || !h1.ValidHeaderValue(value) {
		x.resp.badTrailer = true
		return
	}
	if forbiddenTrailer(name) {
		return
	}
	addField(&x.resp.trl, name, value)
}

// Write appends p to the response body. Bodies up to Server.WriteBufferSize
// are buffered and sent with Content-Length when the handler returns; a
// larger body commits the response and streams it (chunked, or raw with a
// declared Content-Length). Write never retains p. With a BodyFilter set,
// p goes to the filter instead.
//
// The first Write fixes the status and header fields, as in net/http:
// SetStatus, SetHeader and the like have no effect after it, whether the
// body is still buffered or already streaming. Set them before writing.
func (x *Ctx) Write(p []byte) (int, error) {
	x.resp.wrote = true
	if x.filter != nil {
		return x.filterWrite(p)
	}
	return x.write(p)
}

// filterWrite hands p to the body filter, which may still set header
// fields while it runs.
func (x *Ctx) filterWrite(p []byte) (int, error) {
	x.resp.filtering = true
	n, err := x.filter.Write(p)
	x.resp.filtering = false
	return n, err
}

// write is Write without the body filter.
func (x *Ctx) write(p []byte) (int, error) {
	r := &x.resp
	c := x.conn
	if c.hijacked {
		return 0, ErrHijacked
	}
	if c.werr != nil {
		return 0, c.werr
	}
	if !r.committed {
		if cap(r.body) == 0 {
			c.takeBody() // an HTTP/2 stream's, lent (newStreamConn)
		}
		if len(r.body)+len(p) <= c.cfg.writeBuf {
			r.body = append(r.body, p...)
			return len(p), nil
		}
		x.commit(true)
	}
	return x.writeCommitted(p)
}

// writeCommitted sends body bytes after the head, through the exchange,
// once admitBody let them.
func (x *Ctx) writeCommitted(p []byte) (int, error) {
	c := x.conn
	if send, n, err := x.admitBody(p, c.werr); !send {
		return n, err
	}
	if err := c.ex.writeBody(p); err != nil {
		c.failWrite(err)
		return 0, err
	}
	return len(p), nil
}

// failWrite keeps the first error of the exchange's writes: the response
// cannot be completed, nor the connection reused (conn.werr).
func (c *conn) failWrite(err error) {
	if c.werr == nil {
		c.werr = err
	}
}

// admitBody applies the response rules to body bytes p written after the
// head, for every wire: nothing after the response ended, nothing once the
// wire failed (werr), nothing sent for a response without a body, and no
// more than a declared Content-Length. It counts p as written and reports
// send when the wire is to send it; otherwise n and err are the result.
func (x *Ctx) admitBody(p []byte, werr error) (send bool, n int, err error) {
	r := &x.resp
	switch {
	case r.finished:
		return false, 0, ErrCommitted
	case werr != nil:
		return false, 0, werr
	case r.noBody || len(p) == 0:
		return false, len(p), nil
	case r.clen >= 0 && r.written+int64(len(p)) > r.clen:
		return false, 0, ErrContentLength
	}
	r.written += int64(len(p))
	return true, 0, nil
}

// takeBody hands a stream wire the buffered body when it commits the head:
// the bytes to send (none for a response without a body, at most a
// declared Content-Length); the buffer is emptied.
func (x *Ctx) takeBody() []byte {
	r := &x.resp
	body := r.body
	r.body = r.body[:0]
	if r.noBody {
		body = nil
	} else if r.clen >= 0 && int64(len(body)) > r.clen {
		body = body[:r.clen] // declared less than was buffered: send what was declared
	}
	return body
}

// bodyShort reports a response whose body ended before its declared
// Content-Length: the wire must not let the client take it as complete.
func (x *Ctx) bodyShort() bool {
	r := &x.resp
	return r.clen >= 0 && !r.noBody && r.written != r.clen
}

// WriteString is Write for a string, without converting it. Like Write,
// it fixes the status and header fields.
func (x *Ctx) WriteString(s string) (int, error) {
	x.resp.wrote = true
	if x.filter != nil {
		// BodyFilter.Write neither keeps nor modifies p.
		return x.filterWrite(unsafe.Slice(unsafe.StringData(s), len(s)))
	}
	r := &x.resp
	c := x.conn
	if cap(r.body) == 0 && !c.hijacked {
		c.takeBody() // an HTTP/2 stream's, lent (newStreamConn)
	}
	if !r.committed && !c.hijacked && c.werr == nil && len(r.body)+len(s) <= c.cfg.writeBuf {
		r.body = append(r.body, s...)
		return len(s), nil
	}
	// Rare path: the string does not fit the buffer. Copy it through the
	// (now empty) body buffer piece by piece instead of converting it.
	total := 0
	for len(s) > 0 {
		if !r.committed {
			x.commit(true)
		}
		if cap(r.body) == 0 {
			c.takeBody() // given back to the pool by an HTTP/2 stream's commit
		}
		piece := s[:min(len(s), max(cap(r.body), 512))]
		buf := append(r.body[:0], piece...)
		n, err := x.write(buf)
		total += n
		if err != nil {
			return total, err
		}
		s = s[len(piece):]
	}
	if c.stream {
		c.giveBody() // streaming on: lend it out again
	}
	return total, nil
}

// Flush commits the response head if needed and writes everything buffered
// to the client now. A response flushed before the handler returns is
// streamed: chunked on HTTP/1.1 unless a Content-Length was declared,
// delimited by closing the connection on HTTP/1.0. Server-sent events are a
// handler that writes an event and calls Flush, in a loop. With a
// BodyFilter set, the filter's Flush runs instead (and flushes on).
func (x *Ctx) Flush() error {
	x.resp.wrote = true
	if x.filter != nil {
		x.resp.filtering = true
		err := x.filter.Flush()
		x.resp.filtering = false
		return err
	}
	return x.flush()
}

// flush is Flush without the body filter.
func (x *Ctx) flush() error {
	c := x.conn
	if c.hijacked {
		return ErrHijacked
	}
	if !x.resp.committed {
		x.commit(true)
	}
	return c.ex.flush()
}

// WriteInformational sends a 1xx interim response (102 Processing, 103
// Early Hints, ...) at once, with the header fields set so far; they stay
// set for the final response. 100 Continue is sent by the server itself
// and 101 needs Hijack, so codes below 102 are refused. After the first
// Write it returns ErrCommitted.
func (x *Ctx) WriteInformational(code int) error {
	c := x.conn
	switch {
	case c.hijacked:
		return ErrHijacked
	case x.resp.committed || x.resp.wrote:
		return ErrCommitted // after the first Write, as SetStatus
	case code < 102 || code > 199:
		return ErrBadStatus
	case x.req.Minor == 0:
		// HTTP/1.0 clients do not expect interim responses (RFC 9110
		// §15.2).
		return nil
	}
	return x.writeInformational(code)
}

// writeInformational sends the 1xx head with the fields set so far
// through the exchange. The head is kept in the response (r.out, free
// until commit), as commit's: one on the stack would escape through the
// exchange, an interface.
func (x *Ctx) writeInformational(code int) error {
	r := &x.resp
	r.out = x.outHead(code, true, 0)
	return x.conn.ex.writeInformational(&r.out)
}

// commit appends the response head, and the buffered body, to wbuf. With
// streaming set the body is not complete yet, so framing is chunked (or
// close-delimited on HTTP/1.0) unless a Content-Length was declared.
func (x *Ctx) commit(streaming bool) {
	r := &x.resp
	c := x.conn
	r.committed = true
	bad := r.badHeader
	if bad {
		x.replaceWith500()
		streaming = false
	}
	status := r.status
	if status == 0 {
		status = 200
		if r.bodyTooLarge && len(r.body) == 0 && !streaming && r.hdr.len() == 0 {
			status = 413
		}
	}
	r.noBody = r.head || !h1.BodyAllowed(status)
	// Kept in the response: the exchange is an interface, and a head on
	// the stack would escape through it.
	r.out = x.outHead(status, streaming, len(r.body))
	h := &r.out
	if h.close {
		r.close = true
	}
	over := r.clen >= 0 && int64(len(r.body)) > r.clen
	body := x.takeBody()
	r.written += int64(len(body))
	end := !streaming && (r.clen < 0 || r.noBody || r.written == r.clen)
	if err := c.ex.writeHead(h, body, end); err != nil {
		c.failWrite(err)
	}
	if c.stream {
		// The stream copied the body: lend the buffer out until the next
		// write that buffers, if any.
		c.giveBody()
	}
	if over && !c.stream {
		// Declared less than was buffered: what was declared went out;
		// the connection ends after it.
		r.close = true
	}
	if bad {
		// Whatever the handler writes after this is discarded.
		r.noBody = true
	}
}

// replaceWith500 turns the pending response into a bare 500 because the
// handler tried to set an invalid header.
func (x *Ctx) replaceWith500() {
	r := &x.resp
	r.status = 500
	r.hdr.reset()
	addField(&r.hdr, "Content-Type", "text/plain; charset=utf-8")
	r.body = append(r.body[:0], "500 Internal Server Error: invalid response header\n"...)
	r.trl.reset()
	r.clen = -1
	r.userDate, r.userServer, r.userAltSvc = false, false, false
}

// finish completes the response after the handler returned.
func (x *Ctx) finish() {
	r := &x.resp
	c := x.conn
	if c.werr != nil {
		r.finished = true
		return
	}
	if !r.committed {
		x.commit(false)
	}
	// An invalid trailer cuts the response only where trailers are sent
	// (a stream, a chunked body); elsewhere they are all dropped.
	badTrailer := r.badTrailer && (c.stream || r.out.mode == h1.BodyChunked)
	c.ex.endStream(&r.trl, badTrailer || x.bodyShort())
	r.finished = true
}

// representationFields are the header fields that describe a body: a
// response started afresh by ResetResponse drops them with the body.
var representationFields = [...]string{
	"Content-Type", "Content-Encoding", "Content-Range", "Content-Disposition",
	"Content-Language", "Content-Location", "ETag", "Last-Modified",
}

// ResetResponse starts the response afresh, for middleware that answers
// with an error instead of what the handler began (Recover's 500): it drops
// the status, the buffered body, the trailers, a declared Content-Length,
// the BodyFilter and the header fields that describe the body
// (Content-Type, Content-Encoding, Content-Range, Content-Disposition,
// Content-Language, Content-Location, ETag, Last-Modified), and lets the
// status and header fields be set again after a Write. Other header fields
// stay, such as X-Request-Id or CORS fields set by middleware. It reports
// false, changing nothing, when the head is already committed (Committed):
// then nothing can replace the response.
func (x *Ctx) ResetResponse() bool {
	r := &x.resp
	if r.committed || x.conn.hijacked {
		return false
	}
	r.status, r.body, r.clen = 0, r.body[:0], -1
	r.trl.reset()
	r.wrote, r.filtering, r.badHeader, r.badTrailer = false, false, false, false
	x.filter = nil
	for _, f := range representationFields {
		x.delHeader(f)
	}
	return true
}
