// Package takeover is the seam through which a package of this module (the
// event-driven WebSocket of package websocket) takes an HTTP/1.1
// connection over from the root package's HTTP code on the event loop,
// without a public API on riptide.Ctx and without the root importing it:
// the root sets Take at init, the taker calls it with the *riptide.Ctx.
package takeover

import (
	"net"
	"sync/atomic"
)

// Proto is a protocol that took a connection over. The engine runs
// ServeConn on a worker goroutine: once right after the handler that took
// the connection returned, and again each time the connection, parked with
// Proto as its saved protocol state (evloop.Saved.Proto), is readable,
// writable with output queued (evloop.Conn.ParkFor), woken, closed or past
// its read deadline. ServeConn owns the connection until it returns: true
// when it parked it (it must not touch it again), false when the
// connection is over, which the server then closes and counts out.
//
// To the server the connection is idle (StateIdle) from the hand-over
// on: Server.Shutdown asks it to close by setting its read deadline in
// the past, which the protocol tells from its own deadlines, and then
// waits for it to end.
type Proto interface {
	ServeConn(c net.Conn) (parked bool)
}

// Take, set by the root package, hands the connection of x (a
// *riptide.Ctx, whose handler is running) over to p once the handler
// returns: the server writes nothing more on it and serves no further
// request. It returns the connection (an *evloop.Conn, for the handler to
// write the switch of protocols on) and the bytes already read past the
// request (valid until the handler returns): over TLS on the event loop a
// TLS (tls_linux.go) whose Write seals. ok is false, with nothing done,
// where the connection is not an HTTP/1.1 one on the event loop (the
// goroutine engine, TLS on the goroutine engine, HTTP/2 and HTTP/3, a
// request with a body, non-Linux): the caller falls back to Hijack. err
// is a failure to flush the response buffered so far. With a nil p it
// only reports ok, doing nothing.
var Take func(x any, p Proto) (c net.Conn, buffered []byte, ok bool, err error)

// Bytes, set by the root package, returns the counters of the server's
// Stats.BytesIn and BytesOut that the connection of x (a *riptide.Ctx, or
// the compat door's http.ResponseWriter, whose handler is running) counts
// in, for a protocol that reads and writes the connection itself after
// taking it over (Take, or Hijack): nil where the server keeps no
// statistics, for HTTP/2 and HTTP/3 (their engines count the frames of a
// tunnel themselves) and for anything else.
var Bytes func(x any) *Counters

// Counters are the server's Stats.BytesIn and BytesOut counters a
// connection counts in (one stats shard's).
type Counters struct{ In, Out atomic.Uint64 }
