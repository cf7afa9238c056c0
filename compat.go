package riptide

import (
	"log/slog"
	"net/http"

	"github.com/riptide-http/riptide/internal/israce"
)

// FromHTTP returns a Handler that serves h, an ordinary net/http handler, on
// the riptide engine: the compat door. Routers, middleware, websockets
// (through http.Hijacker), http.FileServer (with sendfile through
// io.ReaderFrom), httputil.ReverseProxy and net/http/pprof run unchanged.
//
// h receives a real *http.Request, filled as net/http fills it (URL with
// RawPath and RawQuery, canonical Header, Body, ContentLength,
// TransferEncoding, Close, Host, RemoteAddr, RequestURI, TLS, Trailer), and
// an http.ResponseWriter with net/http's semantics: implicit 200,
// Content-Type sniffing, Content-Length when the whole body fits the
// server's write buffer and chunked otherwise, 1xx responses, trailers (the
// Trailer header and http.TrailerPrefix), http.Flusher, http.Hijacker,
// io.ReaderFrom, and what http.ResponseController reaches (Flush, Hijack,
// SetReadDeadline, SetWriteDeadline, EnableFullDuplex).
//
// The request's Context holds the connection's local address under
// http.LocalAddrContextKey and, under http.ServerContextKey, a *http.Server
// that describes the riptide Server (one per Server; see docs/compat.md).
// It is cancelled when the client goes away (detected
// once the body has been read to its end, as net/http does) and when
// ServeHTTP returns. Watching for the disconnect costs nothing until
// something waits on Context().Done().
//
// As with net/http, h may keep the *http.Request, its Header, URL and
// strings after ServeHTTP returns; they are never reused (FromHTTPWith with
// CompatOptions.ReuseRequests trades that for fewer allocations). The
// ResponseWriter is the request's own, and the writer behind it serves
// the connection's next requests: used after ServeHTTP returns (from a
// goroutine the handler did not wait for), Write, ReadFrom, Flush through
// http.ResponseController, Hijack and the deadlines return
// ErrHandlerReturned and send nothing, WriteHeader and Flush do nothing,
// and Header returns a map that is sent nowhere, so that no other response
// gets any of it. Differences from net/http are listed, with their
// reasons, in docs/compat.md, which also says which io.ReaderFrom sources
// are sent with sendfile.
func FromHTTP(h http.Handler) Handler {
	return FromHTTPWith(h, CompatOptions{})
}

// CompatOptions are opt-in departures from net/http's contract for the
// compat door (FromHTTPWith). The zero value keeps net/http's contract
// whole and is what FromHTTP uses.
type CompatOptions struct {
	// ReuseRequests reuses, for the connection's next request, the
	// objects net/http lets a handler keep: the *http.Request with its
	// URL, Header map, Body, Context and Trailer map, and the response
	// Header map the ResponseWriter's Header returns. It saves most of
	// what a compat request allocates (and the GC work that follows),
	// but it is only safe for a handler that keeps none of these after
	// ServeHTTP returns: no goroutine started by the handler may use the
	// *http.Request, r.URL, r.Header, r.Body, r.Context(), r.Trailer,
	// r.Form, r.PostForm or r.MultipartForm (or a value slice of one of
	// these maps), or the ResponseWriter or its Header map, once
	// ServeHTTP has returned (the ResponseWriter is then caught using the
	// writer only until the connection's next request starts, see
	// FromHTTP). Strings are not reused: a string read from the request
	// (a path, a header value) may be kept. Copy what must outlive the
	// call (r.Clone(ctx) copies the request, http.Header.Clone a map).
	//
	// Middleware that keeps the request past ServeHTTP must not be
	// used with it: http.TimeoutHandler (its handler goroutine runs on
	// after the timeout answer), handlers that hand r or r.Context() to a
	// goroutine that outlives the call, loggers that record the request
	// after the response, caches that store the Header map.
	//
	// Off by default. Under the race detector (go test -race), the reused
	// objects are overwritten as soon as ServeHTTP returns, so a handler
	// that retains one is reported as a data race.
	ReuseRequests bool
}

// FromHTTPWith is FromHTTP with options; FromHTTP(h) is
// FromHTTPWith(h, CompatOptions{}).
func FromHTTPWith(h http.Handler, opts CompatOptions) Handler {
	if h == nil {
		h = http.NotFoundHandler()
	}
	return compatHandler{h: h, reuse: opts.ReuseRequests}
}

type compatHandler struct {
	h     http.Handler
	reuse bool // CompatOptions.ReuseRequests
}

// compatState is the per-Ctx (so per-connection, pooled with it) state of
// the compat door: the reusable ResponseWriter and values cached for the
// connection.
type compatState struct {
	w compatWriter
	// copyBuf serves ReadFrom when a body cannot be sent with sendfile.
	copyBuf []byte
	// segs is compactHead's segment table, reused.
	segs []headSeg
	// blocks hands out the blocks requests are built in.
	blocks compatSlab

	// reuse is set for CompatOptions.ReuseRequests: the request, its
	// Header map and its values, and the response Header map below are
	// kept for the next request instead of allocated anew.
	reuse  bool
	rq     *compatRequest
	vals   []string
	reqHdr http.Header
	resHdr http.Header
}

// ServeCtx serves one request through the net/http handler.
func (ch compatHandler) ServeCtx(x *Ctx) {
	st := x.compat
	if st == nil {
		st = new(compatState)
		x.compat = st
	}
	st.reuse = ch.reuse
	rq, ok := st.newRequest(x)
	if !ok {
		return
	}
	w := &st.w
	w.start(x, rq)
	// As net/http's HTTP/2 server: a panicking handler's stream is reset,
	// not answered 500.
	x.resp.resetOnPanic = x.conn.ex.abilities()&multiplexed != 0
	defer w.end()
	// The handler gets the request's own writer (compatResponse), which
	// reaches w only until the request ends: a goroutine it leaves behind
	// cannot write into the connection's next response.
	rw := rq.writer()
	if rq.req.Method == "OPTIONS" && rq.req.RequestURI == "*" {
		// As net/http's server does for "OPTIONS *" (RFC 9110 §9.3.7).
		rw.Header().Set("Content-Length", "0")
		rw.WriteHeader(http.StatusOK)
	} else {
		ch.h.ServeHTTP(rw, &rq.req)
	}
	// As net/http, the Context is cancelled when ServeHTTP returns: before
	// finish sends the response's end, so that a goroutine the handler
	// left behind finds it cancelled once the client has the answer (and
	// may ask again, on another stream).
	w.cx.lazyCtx.cancel()
	w.finish()
	if st.reuse && israce.Enabled {
		poisonRequest(rq)
	}
}

// httpServer returns the *http.Server that a compat request's Context
// holds under http.ServerContextKey, as net/http's does: one per Server,
// built on first use. It describes s for code that reads it
// (ReadHeaderTimeout, WriteTimeout, IdleTimeout, MaxHeaderBytes and
// TLSConfig as s applies them, ErrorLog writing to s.Logger; ReadTimeout
// and Handler are unset); it serves nothing, and its methods (Shutdown,
// Close, ListenAndServe...) do not act on s.
func (s *Server) httpServer() *http.Server {
	if hs := s.httpShim.Load(); hs != nil {
		return hs
	}
	c := &s.cfg
	hs := &http.Server{
		ReadHeaderTimeout: c.readHeader,
		WriteTimeout:      c.write,
		IdleTimeout:       c.idle,
		MaxHeaderBytes:    c.limits.MaxHeadBytes,
		TLSConfig:         s.TLSConfig,
		ErrorLog:          slog.NewLogLogger(s.logger().Handler(), slog.LevelError),
	}
	if !s.httpShim.CompareAndSwap(nil, hs) {
		return s.httpShim.Load()
	}
	return hs
}
