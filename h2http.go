package riptide

// The net/http face of riptide's HTTP/2 streams: each stream's handler
// gets a real *http.Request (Body streamed with flow-control backpressure,
// trailers, a Context cancelled when the client resets the stream) and an
// http.ResponseWriter with net/http's semantics (implicit 200, Content-Type
// sniffing, Content-Length for a body that fits the write buffer, Flush,
// trailers through the Trailer header and http.TrailerPrefix, 1xx through
// WriteHeader, deadlines and full duplex for http.ResponseController;
// Hijack is not offered, as on any HTTP/2 server).

import (
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/ascii"
	"github.com/riptide-http/riptide/internal/h2"
	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/http2/hpack"
)

// h2Request is everything one stream's *http.Request owns, allocated in one
// piece and never reused (a handler may keep the request).
type h2Request struct {
	req  http.Request
	url  url.URL
	ctx  h2ReqCtx
	body h2Body
}

// h2CompatDoor serves the streams of a Server whose handler is a compat
// one (FromHTTP).
type h2CompatDoor struct {
	srv *Server
	h   *h2CompatHandler
}

// h2Writers pools the streams' ResponseWriters (their buffers are reused;
// the header map is new per request).
var h2Writers = sync.Pool{New: func() any { return new(h2Writer) }}

// ServeStream runs the stream's handler and completes the response.
func (d *h2CompatDoor) ServeStream(st *h2.Stream) {
	s := d.srv
	w := h2Writers.Get().(*h2Writer)
	w.start(s, st)
	// Counted as the native door counts its streams (h2ctx.go) and
	// HTTP/1.1 its requests (stats.go).
	s.stats.h2Streams.Add(1)
	var start int64
	if s.cfg.stats {
		start = monoNow()
	}
	var rq *h2Request
	if st.HeadTooLarge() {
		// As net/http: the header list is over the limit.
		w.header = http.Header{"Content-Type": {"text/plain; charset=utf-8"}}
		w.WriteHeader(http.StatusRequestHeaderFieldsTooLarge)
		_, _ = io.WriteString(w, "431 Request Header Fields Too Large\n")
		w.finish()
	} else if rq = newH2Request(s, st); rq == nil {
		w.WriteHeader(http.StatusBadRequest)
		w.finish()
	} else if rq.req.Method == "OPTIONS" && rq.req.RequestURI == "*" {
		// As net/http's server does for "OPTIONS *" (RFC 9110 §9.3.7), on
		// HTTP/2 as on HTTP/1.1 (compat.go).
		if s.addsServerHeader(false) {
			w.Header().Set("Server", s.Name)
		}
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
		w.finish()
	} else if w.rq = rq; d.callHandler(w, &rq.req) {
		w.finish()
	}
	if rq != nil {
		rq.end()
	}
	if s.cfg.stats {
		status := w.status
		if !w.wroteHeader {
			status = 500 // the handler panicked before its head
		}
		s.pickShard().observe(status, true, start)
	}
	w.end()
	h2Writers.Put(w)
}

// callHandler runs the handler and reports whether it returned normally.
// A panicking handler's stream is reset (as net/http's HTTP/2 does);
// h2CompatHandler has logged the panic.
func (d *h2CompatDoor) callHandler(w *h2Writer, r *http.Request) (ok bool) {
	defer func() { _ = recover() }()
	d.h.ServeHTTP(w, r)
	return true
}

// newRequest builds the stream's *http.Request; nil for a target net/http
// would refuse.
func newH2Request(s *Server, st *h2.Stream) *h2Request {
	rq := new(h2Request)
	r := &rq.req
	r.Method = st.Method()
	r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/2.0", 2, 0
	if r.Method == "CONNECT" {
		rq.url.Host = st.Authority()
		r.RequestURI = st.Authority()
	} else if !rq.setURL(st.Path()) {
		return nil
	} else {
		r.RequestURI = st.Path()
	}
	r.URL = &rq.url
	r.Header = h2Header(st.Fields())
	// As net/http's HTTP/2 server: Expect: 100-continue is answered by the
	// server (h2Body.Read) and removed, and the Trailer announcement moves
	// from Header to Trailer, body or not.
	continues := false
	if ev, ok := r.Header["Expect"]; ok && httpguts.HeaderValuesContainsToken(ev, "100-continue") {
		continues = true
		delete(r.Header, "Expect")
	}
	if tv, ok := r.Header["Trailer"]; ok {
		r.Trailer = declaredTrailers(tv)
		delete(r.Header, "Trailer")
	}
	r.Host = st.Authority()
	if r.Host == "" {
		r.Host = r.Header.Get("Host")
	}
	r.RemoteAddr = st.RemoteAddrString()
	r.TLS = st.TLS()
	switch {
	case !st.HasBody():
		r.Body = http.NoBody
	default:
		r.ContentLength = st.ContentLength()
		rq.body.rq, rq.body.st = rq, st
		rq.body.continues = continues
		r.Body = &rq.body
	}
	rq.ctx.laddr = st.LocalAddr()
	rq.ctx.srv = s.httpServer()
	setRequestContext(r, &rq.ctx)
	st.OnReset(&rq.ctx)
	return rq
}

// setURL fills rq.url from :path without allocating for a plain path.
func (rq *h2Request) setURL(path string) bool {
	u := &rq.url
	p, q, hasQ := strings.Cut(path, "?")
	if len(p) > 0 && p[0] == '/' && plainPath(unsafe.Slice(unsafe.StringData(p), len(p))) {
		u.Path = p
		if hasQ {
			u.RawQuery = q
			u.ForceQuery = q == ""
		}
		return true
	}
	if path == "*" {
		u.Path = "*"
		return true
	}
	pu, err := url.ParseRequestURI(path)
	if err != nil {
		return false
	}
	*u = *pu
	return true
}

// h2Header builds the canonical request Header from the decoded fields, as
// net/http's HTTP/2 server does (Cookie fields joined with "; ").
func h2Header(fields []h2Field) http.Header {
	h := make(http.Header, len(fields))
	var cookie []string
	for _, f := range fields {
		key := h2CanonicalKey(f.Name)
		if key == "Cookie" {
			cookie = append(cookie, f.Value)
			continue
		}
		h[key] = append(h[key], f.Value)
	}
	if len(cookie) == 1 {
		h["Cookie"] = cookie
	} else if len(cookie) > 1 {
		h["Cookie"] = []string{strings.Join(cookie, "; ")}
	}
	return h
}

// h2CanonicalKey returns the http.Header key for a lower-case field name,
// without allocating for common names.
func h2CanonicalKey(name string) string {
	if k := h1.Lookup(unsafe.Slice(unsafe.StringData(name), len(name))); k != h1.Unknown {
		return k.String()
	}
	return textproto.CanonicalMIMEHeaderKey(name)
}

// h2Field is a decoded header field.
type h2Field = hpack.HeaderField

// end cancels the request's context and stops its body: ServeHTTP has
// returned.
func (rq *h2Request) end() {
	rq.body.ended.Store(true)
	rq.ctx.cancel()
}

// h2ReqCtx is the request's Context: cancelled when the client resets the
// stream, the connection ends, or ServeHTTP returns. Nothing is allocated
// until Done is first called (lazyCtx, compat_request.go).
type h2ReqCtx struct {
	lazyCtx
}

// Done returns a channel closed when the request is over.
func (c *h2ReqCtx) Done() <-chan struct{} {
	ch, _ := c.done()
	return ch
}

// StreamReset cancels the context: the stream was reset (h2.ResetNotifier).
func (c *h2ReqCtx) StreamReset() { c.cancel() }

// String names the context.
func (c *h2ReqCtx) String() string { return "riptide.h2RequestContext" }

// h2Body is Request.Body of a stream that has one.
type h2Body struct {
	rq       *h2Request
	st       *h2.Stream
	ended    atomic.Bool
	closed   atomic.Bool
	trailers bool
	// continues: the client waits for 100 Continue, sent on the first Read.
	continues bool
}

// Read reads the request body as the client sends it.
func (b *h2Body) Read(p []byte) (int, error) {
	if b.closed.Load() || b.ended.Load() {
		return 0, http.ErrBodyReadAfterClose
	}
	if b.continues {
		b.continues = false
		b.st.Send100Continue()
	}
	n, err := b.st.ReadBody(p)
	if err == h2.ErrBodyClosed {
		err = ErrBodyReadAfterClose
	}
	if err == io.EOF && !b.trailers {
		b.trailers = true
		b.mergeTrailers()
	}
	return n, err
}

// mergeTrailers fills Request.Trailer from the trailing HEADERS.
func (b *h2Body) mergeTrailers() {
	ts := b.st.Trailers()
	if len(ts) == 0 {
		return
	}
	r := &b.rq.req
	if r.Trailer == nil {
		r.Trailer = make(http.Header, len(ts))
	}
	for _, f := range ts {
		k := h2CanonicalKey(f.Name)
		r.Trailer[k] = append(r.Trailer[k], f.Value)
	}
}

// Close makes later reads fail and the rest of the body is discarded. A
// Read blocked in another goroutine returns at once (as with net/http):
// grpc-go's ServeHTTP closes the body and then waits for its reader
// goroutine before it returns, so a Read that waited on for the client
// would keep the stream's trailers from ever being sent.
func (b *h2Body) Close() error {
	b.closed.Store(true)
	b.st.CloseBody(&b.ended)
	return nil
}

// h2Writer is the http.ResponseWriter of a stream. Pooled (h2Writers);
// its header map is new per request (a handler may keep it).
type h2Writer struct {
	srv    *Server
	st     *h2.Stream
	rq     *h2Request // the request, for CloseNotify
	header http.Header
	snap   http.Header // the header as it was at WriteHeader (net/http's rule)
	status int
	buf    []byte // body held back until the head is sent

	wroteHeader bool // the final status is set
	sentHeader  bool // the HEADERS frame is queued
	done        bool // finish ran
	head        bool // HEAD request: no body is sent
	clen        int64
	written     int64
	fields      []h2.Field // the head being sent, reused
}

var (
	_ http.ResponseWriter = (*h2Writer)(nil)
	_ http.Flusher        = (*h2Writer)(nil)
	_ io.StringWriter     = (*h2Writer)(nil)
)

func (w *h2Writer) start(s *Server, st *h2.Stream) {
	w.srv, w.st, w.rq = s, st, nil
	w.header, w.snap = nil, nil
	w.status = 0
	w.wroteHeader, w.sentHeader, w.done = false, false, false
	w.head = st.Method() == "HEAD"
	w.clen, w.written = -1, 0
	w.buf = w.buf[:0]
}

func (w *h2Writer) end() {
	w.srv, w.st, w.rq = nil, nil, nil
	clear(w.fields)
	w.fields = w.fields[:0]
	w.header, w.snap = nil, nil
	if cap(w.buf) > 64<<10 {
		w.buf = nil
	}
}

// Header returns the response header map.
func (w *h2Writer) Header() http.Header {
	if w.header == nil {
		w.header = make(http.Header)
	}
	return w.header
}

// WriteHeader sends a 1xx response at once, or sets the final status.
func (w *h2Writer) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if w.wroteHeader || w.done {
		return
	}
	if code < 200 {
		if code != http.StatusSwitchingProtocols {
			w.sendInformational(code)
		}
		return
	}
	w.wroteHeader = true
	w.status = code
	// Later changes to the map do not reach the head, only trailers do.
	w.snap = w.header.Clone()
	if vs := w.snap["Content-Length"]; len(vs) > 0 && (h1.BodyAllowed(code) || code == http.StatusNotModified) {
		w.clen = h2ContentLength(vs[0])
	}
}

// Write sends body bytes, holding back up to the server's write buffer so
// that a small body goes out with its Content-Length in one batch.
func (w *h2Writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, http.ErrHandlerTimeout
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !h1.BodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	if w.clen >= 0 && w.written+int64(len(p)) > w.clen {
		return 0, http.ErrContentLength
	}
	w.written += int64(len(p))
	if w.head {
		// Nothing is sent, but the Content-Type is sniffed from the
		// first bytes, as net/http does.
		if k := min(len(p), sniffLen-len(w.buf)); k > 0 {
			w.buf = append(w.buf, p[:k]...)
		}
		return len(p), nil
	}
	if !w.sentHeader {
		if len(w.buf)+len(p) <= w.srv.cfg.writeBuf {
			w.buf = append(w.buf, p...)
			return len(p), nil
		}
		if err := w.sendHead(false, p); err != nil {
			return 0, err
		}
	}
	if err := w.st.WriteData(p, false); err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteString is Write for a string, without converting it.
func (w *h2Writer) WriteString(s string) (int, error) {
	return w.Write(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// Flush sends the head and everything buffered now.
func (w *h2Writer) Flush() { _ = w.FlushError() }

// FlushError is Flush returning the error, for http.ResponseController.
func (w *h2Writer) FlushError() error {
	if w.done {
		return nil
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !w.sentHeader {
		return w.sendHead(false, nil)
	}
	return nil
}

// SetReadDeadline bounds the handler's body reads (http.ResponseController).
func (w *h2Writer) SetReadDeadline(t time.Time) error { return w.st.SetReadDeadline(t) }

// SetWriteDeadline bounds the handler's writes (http.ResponseController).
func (w *h2Writer) SetWriteDeadline(t time.Time) error { return w.st.SetWriteDeadline(t) }

// EnableFullDuplex reports success: an HTTP/2 stream always lets a handler
// read the request body while it writes the response.
func (w *h2Writer) EnableFullDuplex() error { return nil }

// sendHead queues the HEADERS frame and the held-back body (with next, the
// bytes about to be written, taking part in Content-Type sniffing). With
// final set the handler has returned: the body is whole, so its length is
// sent, and the stream ends unless trailers follow.
func (w *h2Writer) sendHead(final bool, next []byte) error {
	trailers := final && w.hasTrailers()
	body := w.buf
	if w.head || !h1.BodyAllowed(w.status) {
		body = nil
	}
	h := w.encodeHead(w.status, final, next)
	err := w.st.WriteHead(&h, body, final && !trailers)
	// The head is out unless the stream was gone before it (a write that
	// timed out waiting for window sent it).
	w.sentHeader = err == nil || err == os.ErrDeadlineExceeded
	w.buf = w.buf[:0]
	return err
}

// encodeHead builds the head: :status and the header map, Date, a sniffed
// Content-Type and Content-Length.
func (w *h2Writer) encodeHead(status int, final bool, next []byte) h2.Head {
	hd := h2.Head{Status: status, ContentLength: -1}
	fields := w.fields[:0]
	sawDate, sawType := false, false
	h := w.header
	if status >= 200 {
		h = w.snap
	}
	for k, vs := range h {
		switch k {
		case "Connection", "Transfer-Encoding", "Keep-Alive", "Upgrade", "Proxy-Connection":
			continue // connection-specific: not in HTTP/2 (RFC 9113 §8.2.2)
		case "Content-Length":
			continue // sent below when valid (w.clen), as net/http does
		case "Date":
			sawDate = true
		case "Content-Type":
			sawType = true
		}
		if strings.HasPrefix(k, http.TrailerPrefix) || !h1.ValidHeaderName(k) {
			continue
		}
		name := h2LowerName(k)
		for _, v := range vs {
			if h1.ValidHeaderValue(v) {
				fields = append(fields, h2.Field{Name: name, Value: v})
			}
		}
	}
	if status >= 200 {
		if !sawDate {
			fields = append(fields, h2.Field{Name: "date", Value: h2Date()})
		}
		if a := w.srv.h3state.altSvc.Load(); a != nil && h["Alt-Svc"] == nil {
			fields = append(fields, h2.Field{Name: "alt-svc", Value: a.value}) // h3.go
		}
		if !sawType && h1.BodyAllowed(status) && !w.hasEncoding() {
			if data := w.sniffData(next); len(data) > 0 {
				fields = append(fields, h2.Field{Name: "content-type", Value: http.DetectContentType(data)})
			}
		}
		clen := w.clen
		if final && clen < 0 && h1.BodyAllowed(status) && (!w.head || w.written > 0) {
			clen = w.written
		}
		hd.ContentLength = clen
	}
	w.fields = fields
	hd.Fields = fields
	return hd
}

// hasEncoding reports a Content-Encoding the handler set (no sniffing then).
func (w *h2Writer) hasEncoding() bool {
	vs := w.snap["Content-Encoding"]
	return len(vs) > 0 && vs[0] != ""
}

// sniffData returns the first body bytes for Content-Type detection: the
// held-back ones and, up to sniffLen, the start of next (w.buf's length
// is left as it is).
func (w *h2Writer) sniffData(next []byte) []byte {
	if len(w.buf) >= sniffLen || len(next) == 0 {
		return w.buf
	}
	if len(w.buf) == 0 {
		return next[:min(len(next), sniffLen)]
	}
	return append(w.buf, next[:min(len(next), sniffLen-len(w.buf))]...)
}

// h2ContentLength parses a Content-Length the handler set as net/http's
// HTTP/2 server does (strconv.ParseUint: digits only, no sign or space);
// -1 when invalid, and the field is then not sent.
func h2ContentLength(v string) int64 {
	n, err := strconv.ParseUint(v, 10, 63)
	if err != nil {
		return -1
	}
	return int64(n)
}

// hasTrailers reports whether the handler declared or set trailers.
func (w *h2Writer) hasTrailers() bool {
	if _, ok := w.snap["Trailer"]; ok {
		return true
	}
	for k := range w.header {
		if strings.HasPrefix(k, http.TrailerPrefix) {
			return true
		}
	}
	return false
}

// sendInformational sends a 1xx response with the header fields set so far.
func (w *h2Writer) sendInformational(code int) {
	h := w.encodeHead(code, false, nil)
	_ = w.st.WriteHead(&h, nil, false)
}

// finish completes the response after the handler returned: the head if
// it is not out yet, the rest of the body, and the trailers.
func (w *h2Writer) finish() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.clen >= 0 && !w.head && h1.BodyAllowed(w.status) && w.written != w.clen {
		// Shorter than declared: what there is goes out, but the stream
		// is reset so that the client does not take it as complete.
		if !w.sentHeader {
			_ = w.sendHead(false, nil)
		}
		w.st.Reset()
		w.done = true
		return
	}
	if !w.sentHeader {
		if w.sendHead(true, nil) != nil {
			w.done = true
			return
		}
	} else if !w.hasTrailers() {
		_ = w.st.EndStream()
	}
	if w.hasTrailers() {
		w.sendTrailers() // unless the stream has ended
	}
	w.done = true
}

// CloseNotify implements the deprecated http.CloseNotifier: the channel
// receives true when the request's Context is done.
func (w *h2Writer) CloseNotify() <-chan bool {
	ch := make(chan bool, 1)
	done := w.rq.ctx.Done()
	go func() {
		<-done
		ch <- true
	}()
	return ch
}

// sendTrailers sends the trailer fields as a HEADERS frame ending the
// stream; names RFC 9110 §6.5.1 forbids in trailers are dropped.
func (w *h2Writer) sendTrailers() {
	w.fields = w.fields[:0]
	for _, v := range w.snap["Trailer"] {
		for name := range strings.SplitSeq(v, ",") {
			name = textproto.CanonicalMIMEHeaderKey(textproto.TrimString(name))
			if name == "" || forbiddenTrailer(name) || !h1.ValidHeaderName(name) {
				continue
			}
			w.encodeTrailer(name, w.header[name])
		}
	}
	for k, vs := range w.header {
		if name, ok := strings.CutPrefix(k, http.TrailerPrefix); ok {
			name = textproto.CanonicalMIMEHeaderKey(name)
			if !forbiddenTrailer(name) && h1.ValidHeaderName(name) {
				w.encodeTrailer(name, vs)
			}
		}
	}
	_ = w.st.WriteTrailers(w.fields)
}

func (w *h2Writer) encodeTrailer(name string, vs []string) {
	lname := h2LowerName(name)
	for _, v := range vs {
		if h1.ValidHeaderValue(v) {
			w.fields = append(w.fields, h2.Field{Name: lname, Value: v})
		}
	}
}

// h2LowerName returns the lower-case field name for an http.Header key,
// without allocating for common names.
func h2LowerName(k string) string {
	switch k {
	case "Content-Type":
		return "content-type"
	case "Content-Length":
		return "content-length"
	case "Date":
		return "date"
	case "Server":
		return "server"
	case "Cache-Control":
		return "cache-control"
	case "Set-Cookie":
		return "set-cookie"
	case "Content-Encoding":
		return "content-encoding"
	case "Vary":
		return "vary"
	case "Etag":
		return "etag"
	case "Last-Modified":
		return "last-modified"
	case "Location":
		return "location"
	case "Grpc-Status":
		return "grpc-status"
	case "Grpc-Message":
		return "grpc-message"
	}
	if ascii.IsLower(k) {
		return k
	}
	return strings.ToLower(k)
}
