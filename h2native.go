package riptide

// The native API over HTTP/2. x/net/http2 hands each stream to an
// http.Handler; h2NativeHandler runs the riptide Handler for it on an engine
// conn borrowed from the pool, so that a Ctx behaves exactly as over
// HTTP/1.1 (same parser, limits, response rules, panic handling):
//
//   - the request is written into the conn's read buffer as an HTTP/1.1 head
//     and parsed by the engine, so Ctx's zero-copy request view is the same;
//   - the conn's net.Conn is the stream itself (h2TextStream): reads return the
//     request body (re-framed as chunked when its length is unknown), and
//     the response the engine writes (an HTTP/1.1 head, then the body,
//     chunked when streamed) is turned back into the ResponseWriter's
//     header, status, body and trailers.
//
// The translation costs a head serialisation and two small parses per
// request; h2native_test.go measures it against the compat path and
// net/http.

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/riptide-http/riptide/h1"
)

// h2NativeHandler serves the streams of one HTTP/2 connection with the
// server's native Handler.
type h2NativeHandler struct {
	srv *Server
	nc  net.Conn // the connection, for addresses
}

var h2TextPool = sync.Pool{New: func() any { return &h2TextStream{wake: make(chan struct{}, 1)} }}

func (h *h2NativeHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	st := h2TextPool.Get().(*h2TextStream)
	st.start(h, w, r)
	abort := st.serve()
	st.reset()
	h2TextPool.Put(st)
	if abort {
		// Part of the response is out and the rest cannot follow: reset
		// the stream so that the client does not take it as complete.
		panic(http.ErrAbortHandler)
	}
}

// Output states of the response translation.
const (
	outHead    = iota // expecting a response head
	outRaw            // body bytes pass through
	outChunked        // body is chunked: decode it
	outDone           // last chunk seen; nothing more is sent
)

// h2TextStream is the net.Conn an engine conn uses while it serves one HTTP/2
// stream. Pooled; owned by the stream's goroutine (and, for Read while the
// Ctx watches for a disconnect, by the watch goroutine the engine waits for).
type h2TextStream struct {
	h *h2NativeHandler
	w http.ResponseWriter
	r *http.Request
	c *conn

	// Request body feed.
	chunked  bool   // re-frame the body as chunked
	eof      bool   // r.Body reached EOF
	pend     []byte // re-framed bytes not yet returned
	chunkBuf []byte
	wake     chan struct{} // SetReadDeadline in the past wakes a watch read

	// Response translation.
	out   int
	head  []byte // a response head split across writes (never, in practice)
	dec   h1.ChunkedDecoder
	final bool // the handler returned: do not flush, x/net ends the stream
	sent  bool // something was passed to w
	date  h2StringCache
	ctype h2StringCache
}

func (st *h2TextStream) start(h *h2NativeHandler, w http.ResponseWriter, r *http.Request) {
	st.h, st.w, st.r = h, w, r
	st.out = outHead
	select {
	case <-st.wake:
	default:
	}
}

func (st *h2TextStream) reset() {
	st.h, st.w, st.r, st.c = nil, nil, nil, nil
	st.chunked, st.eof, st.final, st.sent = false, false, false, false
	st.pend, st.head = nil, st.head[:0]
}

// serve runs the request through an engine conn and reports whether the
// stream must be aborted.
func (st *h2TextStream) serve() (abort bool) {
	s := st.h.srv
	c := newConn(s, st)
	st.c = c
	// Already active: the engine's state changes (and ConnState hooks)
	// are for the connection, not for its streams.
	c.state.Store(int32(StateActive))
	st.writeHead(c)
	if c.readRequest() {
		c.serveRequest()
	}
	st.final = true
	_ = c.flush()
	r := &c.ctx.resp
	// A panic after the response was committed, or a write that failed
	// midway, leaves it incomplete; so does a body shorter than declared.
	abort = c.werr != nil && (st.sent && st.out != outDone || c.werr == errPanicked) ||
		r.clen >= 0 && r.written != r.clen && !r.noBody && r.committed
	putConn(c)
	return abort
}

// writeHead writes the stream's request into c.rbuf as an HTTP/1.1 head.
func (st *h2TextStream) writeHead(c *conn) {
	r := st.r
	b := c.rbuf[:0]
	b = append(b, r.Method...)
	b = append(b, ' ')
	b = append(b, r.RequestURI...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, r.Host...)
	b = append(b, '\r', '\n')
	for name, vs := range r.Header {
		switch name {
		case "Content-Length", "Expect", "Host", "Transfer-Encoding", "Connection":
			// Framing is set below; 100-continue is x/net's job.
			continue
		}
		for _, v := range vs {
			b = append(b, name...)
			b = append(b, ':', ' ')
			b = append(b, v...)
			b = append(b, '\r', '\n')
		}
	}
	switch {
	case r.ContentLength > 0:
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, r.ContentLength, 10)
		b = append(b, '\r', '\n')
	case r.ContentLength < 0:
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
		st.chunked = true
	default:
		st.eof = true
	}
	b = append(b, '\r', '\n')
	if cap(b) > len(c.rbuf) {
		c.rbuf = b[:cap(b)]
	}
	c.r, c.w = 0, len(b)
}

// Read returns request body bytes; once the body is over, it blocks until
// the stream is gone (io.EOF: the engine's disconnect watch) or a deadline
// in the past wakes it.
func (st *h2TextStream) Read(p []byte) (int, error) {
	if st.chunked {
		return st.readChunked(p)
	}
	if !st.eof {
		n, err := st.r.Body.Read(p)
		if err == io.EOF {
			st.eof = true
		}
		if n > 0 || err != io.EOF {
			return n, err
		}
	}
	return st.watch()
}

func (st *h2TextStream) readChunked(p []byte) (int, error) {
	if len(st.pend) == 0 {
		if st.eof {
			if !st.chunked {
				return st.watch()
			}
			st.chunked = false // the last chunk goes out once
			st.pend = append(st.chunkBuf[:0], "0\r\n\r\n"...)
		} else {
			if cap(st.chunkBuf) < 16<<10 {
				st.chunkBuf = make([]byte, 16<<10)
			}
			buf := st.chunkBuf[:cap(st.chunkBuf)]
			const hdr = 10 // room for the size line
			n, err := st.r.Body.Read(buf[hdr : len(buf)-2])
			if err == io.EOF {
				st.eof = true
			} else if err != nil {
				return 0, err
			}
			if n == 0 {
				return st.readChunked(p)
			}
			size := strconv.AppendInt(buf[:0:hdr], int64(n), 16)
			start := hdr - len(size) - 2
			copy(buf[start:], size)
			buf[hdr-2], buf[hdr-1] = '\r', '\n'
			buf[hdr+n], buf[hdr+n+1] = '\r', '\n'
			st.pend = buf[start : hdr+n+2]
		}
	}
	n := copy(p, st.pend)
	st.pend = st.pend[n:]
	return n, nil
}

// watch blocks until the stream's request is cancelled (client gone) or a
// past read deadline is set.
func (st *h2TextStream) watch() (int, error) {
	select {
	case <-st.r.Context().Done():
		return 0, io.EOF
	case <-st.wake:
		return 0, os.ErrDeadlineExceeded
	}
}

// Write takes what the engine writes for the response and passes it on to
// the ResponseWriter.
func (st *h2TextStream) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		switch st.out {
		case outHead:
			if len(st.head) > 0 {
				st.head = append(st.head, p...)
				p = st.head
			}
			end := bytes.Index(p, []byte("\r\n\r\n"))
			if end < 0 {
				if len(st.head) == 0 {
					st.head = append(st.head, p...)
				}
				return n, nil
			}
			rest := p[end+4:]
			st.response(p[:end+2], len(rest))
			if len(st.head) > 0 {
				rest = append([]byte(nil), rest...)
				st.head = st.head[:0]
			}
			p = rest
		case outRaw:
			if _, err := st.w.Write(p); err != nil {
				return 0, err
			}
			st.sent = true
			p = nil
		case outChunked:
			used, data, err := st.dec.Decode(p)
			if err != nil {
				return 0, err
			}
			p = p[used:]
			if len(data) > 0 {
				if _, err := st.w.Write(data); err != nil {
					return 0, err
				}
				st.sent = true
			}
			if st.dec.Done() {
				h := st.w.Header()
				for _, f := range st.dec.Trailers {
					h.Add(http.TrailerPrefix+string(f.Name), string(f.Value))
				}
				st.out = outDone
			}
		case outDone:
			p = nil
		}
	}
	if !st.final && st.out != outHead {
		if f, ok := st.w.(http.Flusher); ok {
			f.Flush()
		}
	}
	return n, nil
}

// response applies a response head (status line and header lines, each
// ending in CRLF, without the blank line) to the ResponseWriter. rest is
// how many body bytes follow it in the same write.
func (st *h2TextStream) response(head []byte, rest int) {
	code := 0
	if len(head) >= 12 {
		code = int(head[9]-'0')*100 + int(head[10]-'0')*10 + int(head[11]-'0')
	}
	head = head[bytes.IndexByte(head, '\n')+1:]
	h := st.w.Header()
	chunked := false
	for len(head) > 0 {
		eol := bytes.IndexByte(head, '\n')
		line := head[:eol-1]
		head = head[eol+1:]
		colon := bytes.IndexByte(line, ':')
		name, value := line[:colon], line[colon+2:]
		switch {
		case equalFold(name, "connection"), equalFold(name, "keep-alive"):
			continue
		case equalFold(name, "transfer-encoding"):
			chunked = true
			continue
		case st.derivable(name, value, rest):
			continue
		}
		key := h2HeaderKey(name)
		h[key] = append(h[key], st.value(name, value))
	}
	if code >= 100 && code < 200 {
		st.w.WriteHeader(code)
		for k := range h {
			delete(h, k) // the final head repeats what should stay
		}
		return
	}
	st.w.WriteHeader(code)
	st.sent = true
	if chunked {
		st.dec.Reset()
		st.out = outChunked
	} else {
		st.out = outRaw
	}
}

// derivable reports a header field x/net would produce the same by itself,
// and cheaper (each field in the header map costs two allocations: ours,
// and x/net's copy): the engine's own Date, and the Content-Length of a
// whole body that ends the stream in this write (x/net counts it).
func (st *h2TextStream) derivable(name, value []byte, rest int) bool {
	switch {
	case len(name) == 4 && equalFold(name, "date"):
		line := st.c.date.get() // "Date: value\r\n", what commit wrote
		return len(line) > 8 && bytes.Equal(value, line[6:len(line)-2])
	case len(name) == 14 && equalFold(name, "content-length"):
		if !st.final || st.r.Method == http.MethodHead {
			return false
		}
		n, ok := parseUint(value)
		return ok && n == int64(rest) && n > 0
	}
	return false
}

// value returns value as a string, reusing the last one made for Date and
// Content-Type.
func (st *h2TextStream) value(name, value []byte) string {
	switch {
	case len(name) == 4 && equalFold(name, "date"):
		return st.date.get(value)
	case len(name) == 12 && equalFold(name, "content-type"):
		return st.ctype.get(value)
	}
	return string(value)
}

// h2StringCache remembers the last string made from a value, for values
// that repeat from one response to the next (Content-Type, Date).
type h2StringCache struct {
	b []byte
	s string
}

func (sc *h2StringCache) get(v []byte) string {
	if !bytes.Equal(sc.b, v) {
		sc.b = append(sc.b[:0], v...)
		sc.s = string(v)
	}
	return sc.s
}

// h2HeaderKey returns the http.Header key for name: a constant for common
// names (no allocation), else the canonical form.
func h2HeaderKey(name []byte) string {
	switch len(name) {
	case 4:
		if equalFold(name, "date") {
			return "Date"
		}
	case 6:
		if equalFold(name, "server") {
			return "Server"
		}
	case 12:
		if equalFold(name, "content-type") {
			return "Content-Type"
		}
	case 13:
		if equalFold(name, "cache-control") {
			return "Cache-Control"
		}
	case 14:
		if equalFold(name, "content-length") {
			return "Content-Length"
		}
	case 10:
		if equalFold(name, "set-cookie") {
			return "Set-Cookie"
		}
	}
	return http.CanonicalHeaderKey(string(name))
}

// Close is a no-op: the stream ends when the handler returns.
func (st *h2TextStream) Close() error { return nil }

// LocalAddr returns the connection's local address.
func (st *h2TextStream) LocalAddr() net.Addr { return st.h.nc.LocalAddr() }

// RemoteAddr returns the client's address.
func (st *h2TextStream) RemoteAddr() net.Addr { return st.h.nc.RemoteAddr() }

// SetDeadline sets both deadlines.
func (st *h2TextStream) SetDeadline(t time.Time) error {
	_ = st.SetReadDeadline(t)
	return st.SetWriteDeadline(t)
}

// SetReadDeadline applies to the stream's body reads. A time in the past
// is how the engine stops a disconnect watch: it wakes a blocked Read.
func (st *h2TextStream) SetReadDeadline(t time.Time) error {
	if !t.IsZero() && t.Before(time.Now()) {
		select {
		case st.wake <- struct{}{}:
		default:
		}
		return nil
	}
	if d, ok := st.w.(interface{ SetReadDeadline(time.Time) error }); ok {
		return d.SetReadDeadline(t)
	}
	return nil
}

// SetWriteDeadline applies to the stream's writes.
func (st *h2TextStream) SetWriteDeadline(t time.Time) error {
	if d, ok := st.w.(interface{ SetWriteDeadline(time.Time) error }); ok {
		return d.SetWriteDeadline(t)
	}
	return nil
}
