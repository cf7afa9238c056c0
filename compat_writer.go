package riptide

import (
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/ascii"
	"github.com/riptide-http/riptide/internal/israce"
)

// sniffLen is how many body bytes http.DetectContentType looks at.
const sniffLen = 512

// compatWriter is the http.ResponseWriter of the compat door. It is pooled
// with the connection (one per Ctx) and reset per request. It keeps the
// handler's http.Header map until the head is written, then translates it
// into the engine's response (Ctx.resp): the engine does the framing,
// buffering and writing, so native and compat responses go out the same
// way. The header map itself is never pooled (a handler may keep it)
// unless CompatOptions.ReuseRequests says it is not kept.
//
// The handler never holds it: it gets its request's compatResponse, which
// reaches this writer only while the request has not ended. The methods
// here are called with the request's compatContext.mu held (see
// compatContext), by compatResponse or by the serving goroutine.
type compatWriter struct {
	x      *Ctx
	rq     *compatRequest // nil once ServeHTTP has returned
	cx     *compatContext
	st     *compatState
	header http.Header
	status int

	wroteHeader bool
	hijacked    bool
	// sniff: Content-Type is still to be detected from the body.
	sniff bool
	// trailers: the handler announced trailers (a Trailer header or
	// TrailerPrefix keys when the head was written), so the body is
	// chunked even if it would fit the buffer.
	trailers bool

	// stream: the exchange is a stream of a multiplexed connection
	// (HTTP/2), where net/http's HTTP/2 rules apply: a field value with
	// CR, LF or NUL is dropped rather than mended, 304 keeps its
	// Content-Type, and trailers need no chunked body.
	stream bool

	// known: the header map, when the head was written, held only the
	// keys in this set (knownCL, knownCT), found by lookup (see
	// serializeHeader).
	known uint8

	cleanLen    uint8 // of clean (below)
	cleanStream bool  // clean was found valid for a stream

	// clean holds a copy of the last response field value addField
	// found to need no mending (trimmed, and without CR, LF or NUL, or on a
	// stream (cleanStream) a valid field value), if at most cleanMax
	// bytes: an equal value is added without the checks (a handler's
	// constant, such as its Content-Type, on every request of the
	// connection). A copy, so that nothing of the handler's is kept.
	// (cleanLen and cleanStream, beside the flags above, pack with them.)
	clean [cleanMax]byte

	keys []string // scratch for sorting header keys

	// sending: a ReadFrom is reading a file or sending it through the
	// exchange (sendfile) without the lock (readUnlocked,
	// sendUnlocked). The request does not end before it is done
	// (waitSend): a goroutine the handler left copying a file when it
	// returned finishes this response, and its bytes never reach the
	// next. send.done is broadcast when sending ends; send is made by
	// the first ReadFrom that sends (kept with the writer), so that a
	// writer that never sends a file holds no lock for it (a stream's
	// Ctx is held for as long as its handler runs).
	sending atomic.Bool
	send    *sendWait
}

// sendWait is what waitSend waits on: done (its L is mu) is broadcast
// when sending ends.
type sendWait struct {
	mu   sync.Mutex
	done sync.Cond
}

func (w *compatWriter) start(x *Ctx, rq *compatRequest) {
	w.x, w.rq, w.cx, w.st = x, rq, &rq.ctx, x.compat
	w.header = nil
	w.status = 0
	w.wroteHeader, w.hijacked, w.sniff, w.trailers = false, false, false, false
	w.known = 0
	w.stream = x.conn.ex.abilities()&multiplexed != 0
}

// end runs when ServeHTTP has returned or panicked: the request's Context
// is cancelled and its Body stops reading.
func (w *compatWriter) end() {
	if cx := w.cx; !cx.ended.Load() {
		// ServeHTTP panicked, or the connection was hijacked: finish
		// did not end the request.
		cx.mu.Lock()
		w.waitSend()
		cx.endLocked()
		cx.mu.Unlock()
	}
	w.cx.end()
	w.rq = nil
	if w.st.reuse && israce.Enabled && w.header != nil {
		// See poisonRequest: a handler that kept the map races with this.
		clear(w.header)
	}
	w.header = nil
	clear(w.keys)
	w.keys = w.keys[:0]
}

// headerMap returns the response header map. Changes after WriteHeader (or
// the first Write) have no effect except for trailers. The map is new for
// each request (made on first use, and it stays set until end), unless
// CompatOptions.ReuseRequests: then it is the connection's, cleared.
func (w *compatWriter) headerMap() http.Header {
	if w.header == nil {
		if st := w.st; st.reuse {
			// CompatOptions.ReuseRequests: the state's map, cleared.
			if st.resHdr == nil {
				st.resHdr = make(http.Header)
			} else {
				clear(st.resHdr)
			}
			w.header = st.resHdr
		} else {
			w.header = make(http.Header)
		}
	}
	return w.header
}

// writeHeader sends an informational (1xx other than 101) response at
// once, or records the final status and header.
func (w *compatWriter) writeHeader(code int) {
	if w.hijacked || w.wroteHeader {
		// net/http logs "superfluous WriteHeader" and ignores it.
		return
	}
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if code < 200 && code != http.StatusSwitchingProtocols {
		w.writeInformational(code)
		return
	}
	w.wroteHeader = true
	w.status = code
	w.serializeHeader()
}

// writeInformational sends a 1xx response now, with the header fields set
// so far (they stay set for the final response, RFC 8297).
func (w *compatWriter) writeInformational(code int) {
	x := w.x
	c := x.conn
	if x.req.Minor == 0 || c.werr != nil || x.resp.committed {
		// HTTP/1.0 clients do not expect interim responses (RFC 9110
		// §15.2).
		return
	}
	if code == http.StatusContinue {
		// Sent by the handler: the body read must not send another.
		c.body.sent100 = true
	}
	// The final head is not serialized yet (writeHeader does it): the
	// interim one's fields go through resp.hdr to the exchange.
	r := &x.resp
	if len(w.header) > 0 {
		for _, k := range w.sortedKeys() {
			if k == "Content-Length" || k == "Transfer-Encoding" || !h1.ValidHeaderName(k) {
				continue
			}
			for _, v := range w.header[k] {
				w.addField(&r.hdr, k, v)
			}
		}
	}
	x.writeInformational(code)
	r.hdr.reset()
}

// sniffBufs lends the buffers that a body's first bytes are gathered in
// to sniff its Content-Type (commit) or read into from a file (ReadFrom):
// a writer keeps none while its handler runs or waits (an HTTP/2 or
// HTTP/3 stream's Ctx is held for as long as its handler is).
var sniffBufs = sync.Pool{New: func() any { return new([sniffLen]byte) }}

// commit writes the response head through the engine, first adding the
// sniffed Content-Type if the handler set none. next is body data about to
// be written that is not buffered yet (it takes part in sniffing).
func (w *compatWriter) commit(streaming bool, next []byte) {
	x := w.x
	r := &x.resp
	if w.sniff && (len(r.body) > 0 || len(next) > 0) {
		data := r.body
		var sb *[sniffLen]byte
		if len(data) < sniffLen && len(next) > 0 {
			sb = sniffBufs.Get().(*[sniffLen]byte)
			n := copy(sb[:], data)
			n += copy(sb[n:], next)
			data = sb[:n]
		}
		addField(&r.hdr, "Content-Type", http.DetectContentType(data))
		if sb != nil {
			sniffBufs.Put(sb)
		}
	}
	w.sniff = false
	x.commit(streaming)
}

// write writes body bytes: buffered until the server's write buffer is
// full, then streamed.
func (w *compatWriter) write(p []byte) (int, error) {
	if w.hijacked {
		return 0, http.ErrHijacked
	}
	if !w.wroteHeader {
		w.writeHeader(http.StatusOK)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !h1.BodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	x := w.x
	r := &x.resp
	c := x.conn
	if c.werr != nil {
		return 0, c.werr
	}
	if !r.committed {
		if r.clen >= 0 && int64(len(r.body)+len(p)) > r.clen {
			return 0, http.ErrContentLength
		}
		if cap(r.body) == 0 {
			c.takeBody() // an HTTP/2 stream's, lent (newStreamConn)
		}
		if len(r.body)+len(p) <= c.cfg.writeBuf {
			r.body = append(r.body, p...)
			return len(p), nil
		}
		w.commit(true, p)
	}
	n, err := x.writeCommitted(p)
	if err == ErrContentLength {
		err = http.ErrContentLength
	}
	return n, err
}

// flush sends the head, if not sent yet, and everything buffered, and
// returns the write error.
func (w *compatWriter) flush() error {
	if w.hijacked {
		return http.ErrHijacked
	}
	if !w.wroteHeader {
		w.writeHeader(http.StatusOK)
	}
	if !w.x.resp.committed {
		w.commit(true, nil)
	}
	return w.x.conn.ex.flush()
}

// finish completes the response once ServeHTTP has returned: implicit 200,
// trailers, and the head if the handler never flushed. The engine then
// ends the body.
func (w *compatWriter) finish() {
	w.cx.lock()
	defer w.cx.unlock()
	w.waitSend()
	if w.hijacked {
		return
	}
	if !w.wroteHeader {
		w.writeHeader(http.StatusOK)
	}
	r := &w.x.resp
	if len(w.header) > 0 && (w.stream || r.clen < 0) && !w.onlyKnownKeys() {
		// On HTTP/1.x a declared Content-Length frames the body by
		// length, never chunked (h1.BodyFraming), so trailers cannot be
		// sent and are not looked for: net/http drops them too.
		w.collectTrailers()
	}
	if !r.committed {
		// Announced trailers make an HTTP/1.1 body chunked, as in
		// net/http; on a stream the body is whole and has its length.
		w.commit(!w.stream && (w.trailers || r.trl.len() > 0), nil)
	}
	// ServeHTTP has returned: the request ends before the lock is let
	// go (compatContext.end). The commit above may have ended the
	// response, and with it the client's wait: a body Read left running
	// on another goroutine must find the request ended when it takes
	// the lock, not find the stream's end first.
	w.cx.endLocked()
}

// waitSend waits, when a ReadFrom is sending without the lock (sending),
// until it is done. The request's lock is held, and released while
// waiting.
func (w *compatWriter) waitSend() {
	for w.sending.Load() {
		w.cx.mu.Unlock()
		sw := w.send // set before sending was (startSending)
		sw.mu.Lock()
		for w.sending.Load() {
			sw.done.Wait()
		}
		sw.mu.Unlock()
		w.cx.mu.Lock()
	}
}

// collectTrailers gathers the trailer values the handler set: the fields
// named in the Trailer header and the keys with http.TrailerPrefix, less
// the names that must not be trailers (net/http drops those only when
// declared, or over HTTP/2; riptide drops them always).
func (w *compatWriter) collectTrailers() {
	r := &w.x.resp
	h := w.header
	for _, v := range h["Trailer"] {
		for name := range strings.SplitSeq(v, ",") {
			name = textproto.CanonicalMIMEHeaderKey(textproto.TrimString(name))
			if name == "" || forbiddenTrailer(name) || !h1.ValidHeaderName(name) {
				continue
			}
			for _, tv := range h[name] {
				w.addField(&r.trl, name, tv)
			}
		}
	}
	for k, vs := range h {
		name, ok := strings.CutPrefix(k, http.TrailerPrefix)
		if !ok || forbiddenTrailer(name) || !h1.ValidHeaderName(name) {
			continue
		}
		for _, tv := range vs {
			w.addField(&r.trl, name, tv)
		}
	}
}

// prefixReader reads buf, then r.
type prefixReader struct {
	buf []byte
	r   io.Reader
}

func (p *prefixReader) Read(b []byte) (int, error) {
	if len(p.buf) > 0 {
		n := copy(b, p.buf)
		p.buf = p.buf[n:]
		return n, nil
	}
	return p.r.Read(b)
}

// forbiddenTrailers lists, in lower case, the fields that must not be sent
// as trailers (RFC 9110 §6.5.1: framing, routing, authentication, response
// controls): net/http's list (httpguts.ValidTrailerHeader).
var forbiddenTrailers = [...]string{
	"authorization", "cache-control", "connection", "content-encoding",
	"content-length", "content-range", "content-type", "expect", "host",
	"keep-alive", "max-forwards", "pragma", "proxy-authenticate",
	"proxy-authorization", "proxy-connection", "range", "realm", "te",
	"trailer", "transfer-encoding", "www-authenticate",
}

// forbiddenTrailer reports, case-insensitively and without allocating,
// whether name must not be sent as a trailer: one of forbiddenTrailers or
// an If-* precondition (as in net/http).
func forbiddenTrailer(name string) bool {
	if len(name) >= 3 && ascii.EqualFold(name[:3], "if-") {
		return true
	}
	for _, f := range forbiddenTrailers {
		if ascii.EqualFold(name, f) {
			return true
		}
	}
	return false
}
