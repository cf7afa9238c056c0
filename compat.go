package riptide

import (
	"log/slog"
	"net/http"
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
// strings after ServeHTTP returns; they are never reused. The ResponseWriter
// is reused for a later request and must not be used after ServeHTTP
// returns. Differences from net/http are listed, with their reasons, in
// docs/compat.md, which also says which io.ReaderFrom sources are sent with
// sendfile.
func FromHTTP(h http.Handler) Handler {
	if h == nil {
		h = http.NotFoundHandler()
	}
	return compatHandler{h}
}

type compatHandler struct{ h http.Handler }

// compatState is the per-Ctx (so per-connection, pooled with it) state of
// the compat door: the reusable ResponseWriter and values cached for the
// connection.
type compatState struct {
	w compatWriter
	// copyBuf serves ReadFrom when a body cannot be sent with sendfile.
	copyBuf []byte
	// segs is compactHead's segment table, reused.
	segs []headSeg
}

// ServeCtx serves one request through the net/http handler.
func (ch compatHandler) ServeCtx(x *Ctx) {
	st := x.compat
	if st == nil {
		st = new(compatState)
		x.compat = st
	}
	rq, ok := st.newRequest(x)
	if !ok {
		return
	}
	w := &st.w
	w.start(x, rq)
	// As net/http's HTTP/2 server: a panicking handler's stream is reset,
	// not answered 500.
	x.resp.resetOnPanic = x.conn.ex.protoMajor() > 1
	defer w.end()
	if rq.req.Method == "OPTIONS" && rq.req.RequestURI == "*" {
		// As net/http's server does for "OPTIONS *" (RFC 9110 §9.3.7).
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
	} else {
		ch.h.ServeHTTP(w, &rq.req)
	}
	w.finish()
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
