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
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/riptide-http/riptide/h1"
	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/http2"
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

// serve runs the stream's handler on a worker goroutine and completes the
// response.
func (st *h2Stream) serve() {
	hc := st.hc
	w := &st.w
	w.start(st)
	if hc.native != nil {
		st.serveNative(hc.native)
		return
	}
	// Counted as the native door counts its streams (h2ctx.go) and
	// HTTP/1.1 its requests (stats.go).
	hc.srv.stats.h2Streams.Add(1)
	var start int64
	if hc.srv.cfg.stats {
		start = monoNow()
	}
	var rq *h2Request
	if st.tooLarge {
		// As net/http: the header list is over the limit.
		w.header = http.Header{"Content-Type": {"text/plain; charset=utf-8"}}
		w.WriteHeader(http.StatusRequestHeaderFieldsTooLarge)
		_, _ = io.WriteString(w, "431 Request Header Fields Too Large\n")
		w.finish()
	} else if rq = st.newRequest(); rq == nil {
		w.WriteHeader(http.StatusBadRequest)
		w.finish()
	} else if rq.req.Method == "OPTIONS" && rq.req.RequestURI == "*" {
		// As net/http's server does for "OPTIONS *" (RFC 9110 §9.3.7), on
		// HTTP/2 as on HTTP/1.1 (compat.go).
		if hc.srv.addsServerHeader(false) {
			w.Header().Set("Server", hc.srv.Name)
		}
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
		w.finish()
	} else if hc.callHandler(w, &rq.req) {
		w.finish()
	}
	if rq != nil {
		rq.end()
	}
	if hc.srv.cfg.stats {
		status := w.status
		if !w.wroteHeader {
			status = 500 // the handler panicked before its head
		}
		hc.shard.observe(status, true, start)
	}
	w.end()
	hc.handlerDone(st)
}

// callHandler runs the handler and reports whether it returned normally.
// A panicking handler's stream is reset (as net/http's HTTP/2 does);
// h2CompatHandler has logged the panic.
func (hc *h2Conn) callHandler(w *h2Writer, r *http.Request) (ok bool) {
	defer func() { _ = recover() }()
	hc.h.ServeHTTP(w, r)
	return true
}

// newRequest builds the stream's *http.Request; nil for a target net/http
// would refuse.
func (st *h2Stream) newRequest() *h2Request {
	hc := st.hc
	rq := new(h2Request)
	r := &rq.req
	r.Method = st.method
	r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/2.0", 2, 0
	if st.method == "CONNECT" {
		rq.url.Host = st.authority
		r.RequestURI = st.authority
	} else if !rq.setURL(st.path) {
		return nil
	} else {
		r.RequestURI = st.path
	}
	r.URL = &rq.url
	r.Header = h2Header(st.fields)
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
	r.Host = st.authority
	if r.Host == "" {
		r.Host = r.Header.Get("Host")
	}
	r.RemoteAddr = hc.remoteAddr
	r.TLS = hc.tls
	switch {
	case st.endAtOpen:
		r.Body = http.NoBody
	default:
		r.ContentLength = st.declLen
		rq.body.rq, rq.body.st = rq, st
		rq.body.continues = continues
		r.Body = &rq.body
	}
	rq.ctx.laddr = hc.localAddr
	rq.ctx.srv = hc.srv.httpServer()
	setRequestContext(r, &rq.ctx)
	hc.mu.Lock()
	st.rctx = &rq.ctx
	if st.reset {
		rq.ctx.cancel()
	}
	hc.mu.Unlock()
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

// String names the context.
func (c *h2ReqCtx) String() string { return "riptide.h2RequestContext" }

// h2Body is Request.Body of a stream that has one.
type h2Body struct {
	rq       *h2Request
	st       *h2Stream
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
		b.st.send100Continue()
	}
	n, err := b.st.readBody(p)
	if err == io.EOF && !b.trailers {
		b.trailers = true
		b.mergeTrailers()
	}
	return n, err
}

// send100Continue sends "100 Continue" unless the response head is out.
func (st *h2Stream) send100Continue() {
	hc := st.hc
	if !st.lockToSend() {
		return
	}
	defer hc.mu.Unlock()
	if st.w.sentHeader || st.w.sent100 {
		return
	}
	st.w.sent100 = true
	hc.encodeField(":status", "100")
	hc.queueHeaders(st.id, false)
}

// mergeTrailers fills Request.Trailer from the trailing HEADERS.
func (b *h2Body) mergeTrailers() {
	st := b.st
	st.hc.mu.Lock()
	ts := st.trailers
	st.hc.mu.Unlock()
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
	hc := b.st.hc
	hc.mu.Lock()
	// ended is stored before handlerDone takes hc.mu, and the stream is
	// only reused after handlerDone: if ended is still false here, st is
	// still this request's stream.
	if !b.ended.Load() {
		st := b.st
		st.bodyClosed = true
		n := len(st.rbuf) - st.roff
		st.bodyDrained()
		if n > 0 {
			hc.consumed(st, n)
		}
		hc.cond.Broadcast()
	}
	hc.mu.Unlock()
	return nil
}

// h2Writer is the http.ResponseWriter of a stream. It lives in the pooled
// h2Stream; its header map is new per request (a handler may keep it).
type h2Writer struct {
	st     *h2Stream
	header http.Header
	snap   http.Header // the header as it was at WriteHeader (net/http's rule)
	status int
	buf    []byte // body held back until the head is sent

	wroteHeader bool // the final status is set
	sentHeader  bool // the HEADERS frame is queued
	done        bool // finish ran
	sent100     bool // a 100 Continue went out (hc.mu)
	head        bool // HEAD request: no body is sent
	clen        int64
	written     int64
	clenBuf     [20]byte
	lower       []byte // a lower-cased field name (h2ctx.go)
}

var (
	_ http.ResponseWriter = (*h2Writer)(nil)
	_ http.Flusher        = (*h2Writer)(nil)
	_ io.StringWriter     = (*h2Writer)(nil)
)

// reuse keeps old's buffer for the next request.
func (w *h2Writer) reuse(old *h2Writer) { w.buf, w.lower = old.buf[:0], old.lower[:0] }

func (w *h2Writer) start(st *h2Stream) {
	w.st = st
	w.header, w.snap = nil, nil
	w.status = 0
	w.wroteHeader, w.sentHeader, w.done, w.sent100 = false, false, false, false
	w.head = st.method == "HEAD"
	w.clen, w.written = -1, 0
	w.buf = w.buf[:0]
}

func (w *h2Writer) end() {
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
		if len(w.buf)+len(p) <= w.st.hc.srv.cfg.writeBuf {
			w.buf = append(w.buf, p...)
			return len(p), nil
		}
		if err := w.sendHead(false, p); err != nil {
			return 0, err
		}
	}
	if err := w.st.writeData(p, false); err != nil {
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
func (w *h2Writer) SetReadDeadline(t time.Time) error {
	st := w.st
	st.hc.mu.Lock()
	st.readDeadline, st.deadlineSet = t, true
	st.hc.cond.Broadcast()
	st.hc.mu.Unlock()
	return nil
}

// SetWriteDeadline bounds the handler's writes (http.ResponseController).
func (w *h2Writer) SetWriteDeadline(t time.Time) error {
	st := w.st
	st.hc.mu.Lock()
	st.writeDeadline = t
	st.hc.cond.Broadcast()
	st.hc.mu.Unlock()
	return nil
}

// EnableFullDuplex reports success: an HTTP/2 stream always lets a handler
// read the request body while it writes the response.
func (w *h2Writer) EnableFullDuplex() error { return nil }

// sendHead queues the HEADERS frame and the held-back body (with next, the
// bytes about to be written, taking part in Content-Type sniffing). With
// final set the handler has returned: the body is whole, so its length is
// sent, and the stream ends unless trailers follow.
func (w *h2Writer) sendHead(final bool, next []byte) error {
	st := w.st
	hc := st.hc
	trailers := final && w.hasTrailers()
	if !st.lockToSend() {
		return errH2StreamClosed
	}
	defer hc.mu.Unlock()
	body := w.buf
	if w.head || !h1.BodyAllowed(w.status) {
		body = nil
	}
	endNow := final && len(body) == 0 && !trailers
	w.encodeHead(w.status, final, next)
	hc.queueHeaders(st.id, endNow)
	w.sentHeader = true
	if endNow {
		st.sendEnd = true
		return nil
	}
	err := st.writeDataLocked(body, final && !trailers)
	w.buf = w.buf[:0]
	return err
}

// encodeHead encodes :status and the header map into hc.hbuf (hc.mu held).
func (w *h2Writer) encodeHead(status int, final bool, next []byte) {
	hc := w.st.hc
	hc.encodeField(":status", h2StatusText(status))
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
				hc.encodeField(name, v)
			}
		}
	}
	if status < 200 {
		return
	}
	if !sawDate {
		hc.encodeField("date", hc.dateValue())
	}
	if !sawType && h1.BodyAllowed(status) && !w.hasEncoding() {
		if data := w.sniffData(next); len(data) > 0 {
			hc.encodeField("content-type", http.DetectContentType(data))
		}
	}
	clen := w.clen
	if final && clen < 0 && h1.BodyAllowed(status) && (!w.head || w.written > 0) {
		clen = w.written
	}
	if clen >= 0 {
		b := strconv.AppendInt(w.clenBuf[:0], clen, 10)
		// Never indexed: the string is a view of a reused buffer.
		_ = hc.enc.WriteField(h2Field{Name: "content-length", Value: unsafe.String(&b[0], len(b)), Sensitive: true})
	}
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
	st := w.st
	hc := st.hc
	if !st.lockToSend() {
		return
	}
	defer hc.mu.Unlock()
	if code == http.StatusContinue {
		w.sent100 = true // not again on the first body read
	}
	w.encodeHead(code, false, nil)
	hc.queueHeaders(st.id, false)
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
		w.st.abort()
		w.done = true
		return
	}
	if !w.sentHeader {
		if w.sendHead(true, nil) != nil {
			w.done = true
			return
		}
	} else if !w.hasTrailers() {
		_ = w.st.writeData(nil, true)
	}
	if w.hasTrailers() && !w.st.sendEnd {
		w.sendTrailers()
	}
	w.done = true
}

// abort resets the stream with INTERNAL_ERROR unless it is already over.
func (st *h2Stream) abort() {
	hc := st.hc
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if st.inTable && !st.reset {
		hc.closeStream(st, http2.ErrCodeInternal, true)
	}
}

// CloseNotify implements the deprecated http.CloseNotifier: the channel
// receives true when the request's Context is done.
func (w *h2Writer) CloseNotify() <-chan bool {
	ch := make(chan bool, 1)
	done := w.st.rctx.Done()
	go func() {
		<-done
		ch <- true
	}()
	return ch
}

// sendTrailers sends the trailer fields as a HEADERS frame ending the
// stream; names RFC 9110 §6.5.1 forbids in trailers are dropped.
func (w *h2Writer) sendTrailers() {
	st := w.st
	hc := st.hc
	if !st.lockToSend() {
		return
	}
	defer hc.mu.Unlock()
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
	hc.queueHeaders(st.id, true)
	st.sendEnd = true
}

func (w *h2Writer) encodeTrailer(name string, vs []string) {
	lname := h2LowerName(name)
	for _, v := range vs {
		if h1.ValidHeaderValue(v) {
			w.st.hc.encodeField(lname, v)
		}
	}
}

// dateValue returns the Date header value for the current second.
func (hc *h2Conn) dateValue() string {
	sec := clockSec.Load()
	if sec != hc.dateSec || hc.dateStr == "" {
		line := hc.date.at(sec)
		hc.dateStr = string(line[len("Date: ") : len(line)-2])
		hc.dateSec = sec
	}
	return hc.dateStr
}

// h2StatusText returns the :status value for code.
func h2StatusText(code int) string {
	switch code {
	case 200:
		return "200"
	case 204:
		return "204"
	case 206:
		return "206"
	case 301:
		return "301"
	case 302:
		return "302"
	case 304:
		return "304"
	case 400:
		return "400"
	case 404:
		return "404"
	case 500:
		return "500"
	}
	return strconv.Itoa(code)
}
