package riptide

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

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
// Every method that touches engine state holds the request's
// compatContext.mu (see compatContext).
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

	// clean holds a copy of the last response field value addField
	// found to need no mending (trimmed, and without CR or LF, or on a
	// stream (cleanStream) a valid field value), if at most cleanMax
	// bytes: an equal value is added without the checks (a handler's
	// constant, such as its Content-Type, on every request of the
	// connection). A copy, so that nothing of the handler's is kept.
	clean       [cleanMax]byte
	cleanLen    int
	cleanStream bool

	keys     []string // scratch for sorting header keys
	lr       io.LimitedReader
	sniffBuf [sniffLen]byte
}

var (
	_ http.ResponseWriter = (*compatWriter)(nil)
	_ http.Flusher        = (*compatWriter)(nil)
	_ http.Hijacker       = (*compatWriter)(nil)
	_ io.ReaderFrom       = (*compatWriter)(nil)
	_ io.StringWriter     = (*compatWriter)(nil)
)

func (w *compatWriter) start(x *Ctx, rq *compatRequest) {
	w.x, w.rq, w.cx, w.st = x, rq, &rq.ctx, x.compat
	w.header = nil
	w.status = 0
	w.wroteHeader, w.hijacked, w.sniff, w.trailers = false, false, false, false
	w.known = 0
	w.stream = x.conn.ex.protoMajor() > 1
}

// end runs when ServeHTTP has returned or panicked: the request's Context
// is cancelled and its Body stops reading.
func (w *compatWriter) end() {
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

// Header returns the response header map. Changes after WriteHeader (or
// the first Write) have no effect except for trailers. The map is new for
// each request (made on first use, and it stays set until end), unless
// CompatOptions.ReuseRequests: then it is the connection's, cleared.
func (w *compatWriter) Header() http.Header {
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

// WriteHeader sends an informational (1xx other than 101) response at once,
// or records the final status and header.
func (w *compatWriter) WriteHeader(code int) {
	w.cx.lock()
	defer w.cx.unlock()
	if w.wroteHeader && !w.hijacked && w.rq != nil {
		// Logged once per response, as net/http logs it (superfluous WriteHeader).
		w.x.superfluousStatus("ResponseWriter.WriteHeader", w.status, code, 2)
	}
	w.writeHeader(code)
}

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

// appendStatusLine is h1.AppendStatusLine, except that codes 600..999 are
// sent as they are: RFC 9110 §15 ends the valid codes at 599, but net/http
// sends any three-digit code a handler sets (its WriteHeader panics only
// outside 100..999) and the compat door does the same. Only compat
// handlers can set such a code: Ctx.SetStatus sends it as 500.
func appendStatusLine(dst []byte, code int) []byte {
	if code < 600 || code > 999 {
		return h1.AppendStatusLine(dst, code)
	}
	dst = append(dst, "HTTP/1.1 "...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	return append(dst, " \r\n"...) // no reason phrase, as for 599
}

// serializeHeader turns the handler's header map into the engine's header
// lines: sorted by key (as net/http sends them), invalid names dropped, CR
// and LF in values replaced by spaces (net/http's rules), and the fields the
// engine manages (Content-Length, Transfer-Encoding, Connection) turned into
// its settings.
//
// The common header of a handler that sets only Content-Type and/or
// Content-Length is found with lookups rather than by iterating and
// sorting the map; w.known records it, so that finish can skip looking
// for trailers (see onlyKnownKeys).
func (w *compatWriter) serializeHeader() {
	r := &w.x.resp
	code := w.status
	r.status = code
	w.sniff = h1.BodyAllowed(code)
	w.known = 0
	h := w.header
	if len(h) == 0 {
		return
	}
	te := ""
	if known, cl, ct := knownKeys(h); known != 0 {
		// Sorted: "Content-Length" < "Content-Type". The names are
		// known: serializeField's cases for them are called directly.
		if known&knownCL != 0 {
			w.contentLength(cl)
		}
		if known&knownCT != 0 {
			w.contentType(ct)
		}
		w.known = known
	} else {
		for _, k := range w.sortedKeys() {
			w.serializeField(k, h[k], &te)
		}
	}
	if te != "" && te != "identity" {
		// A Transfer-Encoding overrides a Content-Length (net/http logs it).
		r.clen = -1
	}
}

// The keys of the header fast path (serializeHeader).
const (
	knownCL uint8 = 1 << iota // Content-Length
	knownCT                   // Content-Type
)

// knownKeys reports which of Content-Length and Content-Type h holds, with
// their values, when h holds no other key; otherwise known is 0.
func knownKeys(h http.Header) (known uint8, cl, ct []string) {
	if len(h) > 2 {
		return 0, nil, nil
	}
	n := 0
	cl, okCL := h["Content-Length"]
	if okCL {
		known |= knownCL
		n++
	}
	ct, okCT := h["Content-Type"]
	if okCT {
		known |= knownCT
		n++
	}
	if n != len(h) {
		return 0, nil, nil
	}
	return known, cl, ct
}

// onlyKnownKeys reports whether the header map still holds exactly the
// keys serializeHeader found by lookup, so nothing in it can be a trailer.
func (w *compatWriter) onlyKnownKeys() bool {
	if w.known == 0 {
		return false
	}
	known, _, _ := knownKeys(w.header)
	return known == w.known
}

// serializeField adds the header field k with values vs to the response
// head, or turns it into the engine's settings.
func (w *compatWriter) serializeField(k string, vs []string, te *string) {
	r := &w.x.resp
	code := w.status
	// checked: k is one of the names below, valid and not a trailer.
	checked := true
	switch k {
	case "Content-Type":
		w.contentType(vs)
		return
	case "Content-Length":
		w.contentLength(vs)
		return
	case "Transfer-Encoding":
		if h1.BodyAllowed(code) && len(vs) > 0 {
			*te = vs[0]
			w.sniff = false
		}
		// The engine frames the body itself: chunked on HTTP/1.1.
		return
	case "Connection":
		rest := vs[:0:0]
		for _, v := range vs {
			switch {
			case ascii.HasToken(v, "close"):
				r.close = true
			case strings.EqualFold(strings.TrimSpace(v), "keep-alive"):
				// The engine says keep-alive itself where needed.
			default:
				rest = append(rest, v)
			}
		}
		vs = rest
	case "Content-Encoding":
		if len(vs) > 0 && vs[0] != "" {
			w.sniff = false
		}
	case "Date":
		r.userDate = true
	case "Server":
		r.userServer = true
	case "Alt-Svc":
		r.userAltSvc = true
	case "Trailer":
		w.trailers = true
	default:
		checked = false
	}
	if !checked {
		if strings.HasPrefix(k, http.TrailerPrefix) {
			w.trailers = true
			return
		}
		if !h1.ValidHeaderName(k) {
			return
		}
	}
	for _, v := range vs {
		w.addField(&r.hdr, k, v)
	}
}

// contentType is serializeField for Content-Type: the handler's type, so
// none is sniffed; a 304 over HTTP/1.1 is sent without it, as net/http
// does.
func (w *compatWriter) contentType(vs []string) {
	w.sniff = false
	if w.status == http.StatusNotModified && !w.stream {
		return
	}
	r := &w.x.resp
	for _, v := range vs {
		w.addField(&r.hdr, "Content-Type", v)
	}
}

// contentLength is serializeField for Content-Length: the declared
// length, for the engine's framing.
func (w *compatWriter) contentLength(vs []string) {
	if h1.BodyAllowed(w.status) && len(vs) > 0 {
		if n, ok := parseContentLength(vs[0]); ok {
			w.x.resp.clen = n
		}
	}
}

// addField adds the field name with value to h, the value cleaned as
// appendCleanValue does; on a stream a value that is not a valid field
// value (before trimming) is left out instead, as net/http's HTTP/2 server
// does (a valid one has no CR or LF: it is copied without a second scan).
// A value equal to the one it last found clean (w.clean) is added
// unchecked.
func (w *compatWriter) addField(h *headerFields, name, value string) {
	if len(value) == w.cleanLen && w.cleanStream == w.stream && string(w.clean[:w.cleanLen]) == value {
		addField(h, name, value) // checked before: see clean
		return
	}
	if w.stream && !h1.ValidHeaderValue(value) {
		// As net/http's HTTP/2 server, which checks the value as the
		// handler set it: a trailing CR or LF drops it too.
		return
	}
	t := textproto.TrimString(value)
	if !w.stream && (strings.IndexByte(t, '\r') >= 0 || strings.IndexByte(t, '\n') >= 0) {
		addFieldClean(h, name, t)
		return
	}
	addField(h, name, t)
	if len(t) == len(value) && len(value) <= cleanMax {
		w.cleanLen, w.cleanStream = copy(w.clean[:], value), w.stream
	}
}

// cleanMax is the longest value compatWriter.clean holds.
const cleanMax = 128

// parseContentLength parses a Content-Length value the handler set:
// strconv.ParseInt's result when that is a non-negative int64, with a fast
// path for plain digits.
func parseContentLength(v string) (int64, bool) {
	if len(v) > 0 && len(v) <= 18 {
		var n int64
		for i := 0; i < len(v); i++ {
			c := v[i]
			if c < '0' || c > '9' {
				goto slow
			}
			n = n*10 + int64(c-'0')
		}
		return n, true
	}
slow:
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil && n >= 0
}

// sortedKeys returns the header map's keys, sorted, in a reused slice.
func (w *compatWriter) sortedKeys() []string {
	keys := w.keys[:0]
	for k := range w.header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	w.keys = keys
	return keys
}

// addFieldClean adds a field to h with the value cleaned as
// appendCleanValue does.
func addFieldClean(h *headerFields, name, value string) {
	start := len(h.buf)
	h.buf = append(h.buf, name...)
	h.buf = appendCleanValue(h.buf, value)
	h.pushField(start, start+len(name))
}

// appendCleanValue appends value trimmed and with any CR or LF in it
// replaced by a space.
func appendCleanValue(dst []byte, value string) []byte {
	value = textproto.TrimString(value)
	if strings.IndexByte(value, '\r') < 0 && strings.IndexByte(value, '\n') < 0 {
		return append(dst, value...)
	}
	for i := 0; i < len(value); i++ {
		c := value[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		dst = append(dst, c)
	}
	return dst
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
	c.ex.writeInformational(x, code)
	r.hdr.reset()
}

// commit writes the response head through the engine, first adding the
// sniffed Content-Type if the handler set none. next is body data about to
// be written that is not buffered yet (it takes part in sniffing).
func (w *compatWriter) commit(streaming bool, next []byte) {
	x := w.x
	r := &x.resp
	if w.sniff && (len(r.body) > 0 || len(next) > 0) {
		data := r.body
		if len(data) < sniffLen && len(next) > 0 {
			n := copy(w.sniffBuf[:], data)
			n += copy(w.sniffBuf[n:], next)
			data = w.sniffBuf[:n]
		}
		addField(&r.hdr, "Content-Type", http.DetectContentType(data))
	}
	w.sniff = false
	x.commit(streaming)
}

// Write writes body bytes: buffered until the server's write buffer is
// full, then streamed.
func (w *compatWriter) Write(p []byte) (int, error) {
	w.cx.lock()
	defer w.cx.unlock()
	return w.write(p)
}

// WriteString is Write without converting s to a []byte.
func (w *compatWriter) WriteString(s string) (int, error) {
	w.cx.lock()
	defer w.cx.unlock()
	// The engine only reads p during the call and never retains it.
	return w.write(unsafe.Slice(unsafe.StringData(s), len(s)))
}

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

// Flush sends the head, if not sent yet, and everything buffered.
func (w *compatWriter) Flush() { w.FlushError() }

// FlushError is Flush returning the write error, for
// http.ResponseController.
func (w *compatWriter) FlushError() error {
	w.cx.lock()
	defer w.cx.unlock()
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

// ReadFrom copies src into the body. When src is a file (or a socket) and
// the response has a declared Content-Length, the body goes out with the
// connection's ReadFrom (sendfile or splice) after the head, once the
// first bytes went through Write (nothing is committed for an empty
// source); anything else goes through Write, so a small body still gets a
// Content-Length. No lock is held while src is read: src may be the
// request body.
func (w *compatWriter) ReadFrom(src io.Reader) (int64, error) {
	if !sendfileSource(src) {
		return w.copyFrom(src)
	}
	var n int64
	if open, empty := w.headOpen(); open {
		// As net/http: the first bytes go through Write, so that nothing
		// is committed before the source has a byte to send (an empty
		// file leaves the status and header open) and Content-Type can
		// be sniffed from them. They are read into sniffBuf only when
		// nothing is buffered: a commit in Write then copies them onto
		// themselves; otherwise it would sniff into the bytes it sends.
		buf := w.sniffBuf[:]
		if !empty {
			buf = w.copyBuffer()[:sniffLen]
		}
		k, err := io.ReadFull(src, buf)
		n = int64(k)
		if k > 0 {
			if _, werr := w.Write(buf[:k]); werr != nil {
				return n, werr
			}
		}
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				err = nil
			}
			return n, err
		}
	}
	rf, ok := w.sendfileTarget()
	if !ok {
		m, err := w.copyFrom(src)
		return n + m, err
	}
	w.cx.lock()
	x := w.x
	r := &x.resp
	c := x.conn
	if !r.committed {
		w.commit(true, nil)
	}
	err := c.flush()
	remaining := r.clen - r.written
	if err == nil {
		c.armWrite()
	}
	w.cx.unlock()
	if err != nil {
		return n, err
	}
	// Only this goroutine writes the response: the socket is ours until
	// the next engine write, which needs the lock. Go's sendfile unwraps
	// one io.LimitedReader only: a caller's (io.CopyN, http.ServeContent)
	// is replaced by ours, with the smaller of the two limits, and its N
	// is brought up to date afterwards.
	outer, _ := src.(*io.LimitedReader)
	if outer != nil {
		src, remaining = outer.R, min(remaining, outer.N)
	}
	w.lr = io.LimitedReader{R: src, N: remaining}
	m, err := rf.ReadFrom(&w.lr)
	w.lr.R = nil
	if outer != nil {
		outer.N -= m
	}
	w.cx.lock()
	r.written += m
	if err != nil && c.werr == nil {
		// The head is out and the body is short: the connection cannot
		// be reused.
		c.closeAfter = true
	}
	w.cx.unlock()
	return n + m, err
}

// sendfileSource reports whether src is something the kernel can copy
// from: a file or a socket, possibly behind an io.LimitedReader.
func sendfileSource(src io.Reader) bool {
	if lr, ok := src.(*io.LimitedReader); ok {
		src = lr.R
	}
	switch src.(type) {
	case *os.File, *net.TCPConn:
		return true
	}
	return false
}

// sendfileTarget reports whether the body can be sent with the socket's
// ReadFrom: a declared Content-Length, a body to send and a TCP
// connection. ReadFrom calls it once the status is set.
func (w *compatWriter) sendfileTarget() (io.ReaderFrom, bool) {
	w.cx.lock()
	defer w.cx.unlock()
	if w.hijacked || !w.wroteHeader {
		return nil, false
	}
	r := &w.x.resp
	c := w.x.conn
	if r.clen < 0 || r.head || !h1.BodyAllowed(w.status) || c.ex.abilities()&canSendfile == 0 {
		return nil, false
	}
	// The exchange is the HTTP/1.1 connection on a socket.
	if rf, ok := c.elReaderFrom(); ok {
		return rf, true // the event loop's socket: sendfile too
	}
	rf, ok := tcpConnOf(c.nc) // also under the PROXY protocol (proxy.go)
	return rf, ok
}

// headOpen reports whether the response head is still open (nothing
// committed, not hijacked), and whether no body is buffered.
func (w *compatWriter) headOpen() (open, empty bool) {
	w.cx.lock()
	defer w.cx.unlock()
	return !w.hijacked && !w.x.resp.committed, len(w.x.resp.body) == 0
}

// copyFrom is ReadFrom through Write, with a buffer kept per connection.
func (w *compatWriter) copyFrom(src io.Reader) (int64, error) {
	buf := w.copyBuffer()
	var n int64
	for {
		k, err := src.Read(buf)
		if k > 0 {
			m, werr := w.Write(buf[:k])
			n += int64(m)
			if werr != nil {
				return n, werr
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// copyBuffer returns the connection's ReadFrom buffer, made on first use.
func (w *compatWriter) copyBuffer() []byte {
	if w.st.copyBuf == nil {
		w.st.copyBuf = make([]byte, 32<<10)
	}
	return w.st.copyBuf
}

// Hijack hands the connection to the handler, after sending the head it
// has written (a 101 Switching Protocols, say). The returned reader holds
// any bytes the server had already read past the request head.
func (w *compatWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.cx.lock()
	defer w.cx.unlock()
	if w.hijacked {
		return nil, nil, http.ErrHijacked
	}
	x := w.x
	if x.conn.ex.abilities()&canHijack == 0 {
		// An HTTP/2 stream: net/http's ResponseWriter there is no
		// http.Hijacker, which ResponseController reports so.
		return nil, nil, http.ErrNotSupported
	}
	if w.wroteHeader && !x.resp.committed {
		w.commit(true, nil)
	}
	// The engine ends the disconnect watch on Hijack; the Context then
	// stays live until ServeHTTP returns, as in net/http.
	w.cx.setFlag(ctxHijack, true)
	nc, buffered, err := x.Hijack()
	if err != nil {
		w.cx.setFlag(ctxHijack, false)
		return nil, nil, err
	}
	w.hijacked = true
	br := bufio.NewReaderSize(&prefixReader{buf: buffered, r: nc}, max(4<<10, len(buffered)))
	if len(buffered) > 0 {
		// Make the bytes visible through Buffered, as net/http's are.
		br.Peek(len(buffered))
	}
	return nc, bufio.NewReadWriter(br, bufio.NewWriterSize(nc, 4<<10)), nil
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

// SetReadDeadline sets the connection's read deadline for the rest of the
// request (http.ResponseController).
func (w *compatWriter) SetReadDeadline(t time.Time) error {
	w.cx.lock()
	defer w.cx.unlock()
	if w.hijacked {
		return http.ErrHijacked
	}
	return w.x.SetReadDeadline(t)
}

// SetWriteDeadline sets the connection's write deadline for the rest of
// the request (http.ResponseController).
func (w *compatWriter) SetWriteDeadline(t time.Time) error {
	w.cx.lock()
	defer w.cx.unlock()
	if w.hijacked {
		return http.ErrHijacked
	}
	return w.x.SetWriteDeadline(t)
}

// EnableFullDuplex reports success: riptide never discards the unread
// request body when the response starts, so a handler may always
// interleave reading the body and writing the response. Body reads and
// response writes made from two goroutines at once are serialised: a write
// waits for a body read that is blocked on the network.
func (w *compatWriter) EnableFullDuplex() error { return nil }

// CloseNotify implements the deprecated http.CloseNotifier: the channel
// receives true when the request's Context is done.
func (w *compatWriter) CloseNotify() <-chan bool {
	ch := make(chan bool, 1)
	done := w.cx.Done()
	go func() {
		<-done
		ch <- true
	}()
	return ch
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
