package riptide

import (
	"net"
	"time"
)

// Hijack takes over the connection, for websockets and other protocols
// that leave HTTP behind. It writes out every complete response still
// pending and the committed part of this one (a response not yet committed
// is discarded), clears the connection's deadlines and returns the
// connection with a copy of the bytes the server had already read past the
// request head (the start of the new protocol, or an unread body).
//
// After Hijack the server no longer reads, writes, times out or closes the
// connection: the caller owns it and must close it. The Ctx stays valid
// until the handler returns, but writing to it fails with ErrHijacked.
// Hijacked connections are not counted by Shutdown or MaxConns.
//
// Over HTTP/2 and HTTP/3 only a CONNECT stream can be taken over (a plain
// CONNECT, or an extended CONNECT with HTTP2Config.EnableConnectProtocol:
// WebSocket over HTTP/2 and HTTP/3): the response head goes out with the
// status set (200 by default; any other than 2xx is ErrTunnelStatus), and
// the returned net.Conn is the stream, its reads the request's DATA and
// its writes the response's, with the stream's flow control; Close ends
// the stream, which is held (and counts as open) until then, even after
// the handler returns. No bytes are returned with it. Other streams give
// ErrHijackHTTP2 or ErrHijackHTTP3.
func (x *Ctx) Hijack() (net.Conn, []byte, error) {
	c := x.conn
	if c.hijacked {
		return nil, nil, ErrHijacked
	}
	if c.ex.abilities()&canHijack == 0 {
		if se, ok := c.ex.(streamExchange); ok && string(x.req.Method) == "CONNECT" {
			return x.hijackStream(se) // tunnel.go
		}
		if c.ex.abilities()&onQUIC != 0 {
			return nil, nil, ErrHijackHTTP3
		}
		return nil, nil, ErrHijackHTTP2 // a stream: the connection carries others
	}
	x.stopWatch(false)
	if err := c.flush(); err != nil {
		return nil, nil, err
	}
	var buffered []byte
	if b := &c.body; len(b.pending) > 0 {
		// Decoded chunk data not yet read belongs to the caller too.
		buffered = append(buffered, b.pending...)
	}
	buffered = append(buffered, c.rbuf[c.r:c.w]...)
	c.r = c.w
	c.hijacked = true
	if nc, ok, err := c.elDetach(); ok {
		// The socket leaves the event loop as an ordinary net.Conn.
		if err != nil {
			return nil, nil, err
		}
		return nc, buffered, nil
	}
	c.nc.SetDeadline(time.Time{})
	return c.nc, buffered, nil
}

// Hijacked reports whether Hijack was called.
func (x *Ctx) Hijacked() bool { return x.conn.hijacked }
