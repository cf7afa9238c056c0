package riptide

import (
	"net/http"
	"runtime/debug"
)

// The server's policies that every path applies the same way: HTTP/1.1 and
// HTTP/2, native handlers and compat ones. Each path encodes the result its
// own way (pre-encoded header bytes, an HPACK field, an http.Header), but
// the decision is made here.

// addsServerHeader reports whether a response gets the server's Server
// field: Server.Name is set and the handler did not set its own.
func (s *Server) addsServerHeader(handlerSet bool) bool {
	return s.Name != "" && !handlerSet
}

// overBodyLimit reports whether n request body bytes (declared, or read so
// far) exceed limit, MaxRequestBodySize or a lower SetBodyLimit; 0 is no
// limit. A declared length over it is answered 413 before the handler
// runs; a read past it fails with ErrBodyTooLarge.
func overBodyLimit(limit, n int64) bool {
	return limit > 0 && n > limit
}

// CountPanic adds one to the server's count of handler panics
// (Stats.Panics, riptide_panics_total), for middleware that recovers a
// panic itself and answers the request (middleware.Recover) instead of
// letting the server do it. A panic the server recovers is counted already.
func (x *Ctx) CountPanic() { x.conn.srv.stats.panics.Add(1) }

// logPanic counts and logs a handler panic through Server.Logger, unless v
// is one of the abort values that cut a response on purpose. Call it from
// the deferred recover so that the stack still shows the panic.
func (s *Server) logPanic(v any, remote, method, target string) {
	if v == ErrAbortHandler || v == http.ErrAbortHandler {
		return
	}
	s.stats.panics.Add(1)
	s.logger().Error("riptide: panic serving request",
		"remote", remote, "method", method, "target", target,
		"panic", v, "stack", string(debug.Stack()))
}
