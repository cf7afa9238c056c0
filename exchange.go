package riptide

import (
	"context"
	"crypto/tls"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/riptide-http/riptide/h1"
)

// exchange is what a Ctx needs from the protocol that carries its request:
// the HTTP/1.1 connection (conn, which frames the body and the response
// itself on the socket) or one stream of a multiplexed connection (an
// HTTP/2 stream, h2ctx.go; an HTTP/3 one the same way). The Ctx keeps the
// HTTP rules (status, header checks, buffering, the framing decision, body
// limits, the disconnect watch's bookkeeping); the exchange moves bytes
// and says what the transport can do.
//
// A Ctx reaches its exchange as conn.ex. For a stream the conn is only
// the Ctx's home (buffers, body reader, statistics): its nc is nil, and
// nothing but the exchange may touch the transport.
type exchange interface {
	// The response. The Ctx applies the HTTP rules (the head decided by
	// Ctx.outHead, body bytes admitted and counted: admitBody, the
	// declared length, whether the response is complete); the exchange
	// only encodes what it is given and moves the bytes, reporting a
	// failed write as its error (the Ctx keeps it: conn.werr).

	// writeHead sends the final head h and body, the first body bytes;
	// end: the body is complete with them (trailers may still follow:
	// h.trailers).
	writeHead(h *outHead, body []byte, end bool) error
	// writeBody sends body bytes after the head.
	writeBody(p []byte) error
	// sendFile sends n bytes of f from offset as body bytes after the
	// head with the kernel's copy (sendfile), leaving f's offset alone,
	// and reports handled; it reports handled false, having sent
	// nothing, where the transport cannot (TLS, a stream): the caller
	// copies through writeBody. sent is short, with no error, when f
	// ended first.
	sendFile(f *os.File, offset, n int64) (sent int64, handled bool, err error)
	// flush sends whatever is buffered.
	flush() error
	// endStream completes the response after the body: the trailers
	// (none when empty); with reset, as incomplete instead (a body short
	// of its declared length, an invalid trailer), so that the client
	// does not take it as complete.
	endStream(trailers *headerFields, reset bool)
	// writeInformational sends the 1xx head h at once.
	writeInformational(h *outHead) error

	// The request body, for a protocol that frames it (bodyReader's
	// stream branch); HTTP/1.1's is framed by bodyReader on the
	// connection's bytes.

	// readBody reads body bytes: io.EOF at the end, ErrBodyReadAfterClose
	// after closeBody.
	readBody(p []byte) (int, error)
	// appendTrailers appends the request's trailers, complete once
	// readBody returned io.EOF, as fields whose bytes are copied into buf
	// (reused; grown when too small).
	appendTrailers(dst []h1.Header, buf []byte) ([]h1.Header, []byte)
	// send100Continue answers "Expect: 100-continue" before a body read
	// waits, unless a head went out already.
	send100Continue()
	// closeBody makes body reads fail and discards the rest of the body,
	// unless ended is set: it may be called from any goroutine, also
	// after the handler returned (a retained Request.Body), and must then
	// leave a reused exchange alone.
	closeBody(ended *atomic.Bool)
	// stopBody is the exchange's part in ending the body once the handler
	// has returned, for every protocol the same (bodyReader.endReads, its
	// only caller, on the serving goroutine, before the exchange or its
	// conn is reused): a body read that starts later fails, and reads in
	// flight on other goroutines (a compat Request.Body the handler left
	// to one; counted by bodyReader.enterRead) are made to return at once;
	// endReads then waits for them. It is called only while such a read is
	// in flight, and need not wait itself.
	stopBody()

	// Deadlines for the rest of the request: body reads, response writes.
	setReadDeadline(t time.Time) error
	setWriteDeadline(t time.Time) error

	// The disconnect watch (watch.go). watchArm readies a watch on the
	// handler's goroutine and reports whether one can run. watchRead runs
	// on the watch's own goroutine: it returns 0 and an error that is not
	// a deadline when the client has gone away, n > 0 when it sent more
	// (a pipelined request, into rbuf past c.w), or a deadline error once
	// watchStop was called.
	watchArm() bool
	watchRead() (int, error)
	watchStop()

	// Addresses and TLS.
	remoteAddr() net.Addr
	remoteAddrString() string // without allocating per request
	localAddr() net.Addr
	tlsState() *tls.ConnectionState // nil without TLS
	// transport is the connection's own net.Conn (for the PROXY header),
	// nil where there is none.
	transport() net.Conn

	// protoMajor is 1, 2 or 3.
	protoMajor() int
	// abilities says what the transport offers a handler.
	abilities() ability
}

// watchNotifier is an exchange whose client-disconnect signal is a
// context (HTTP/3: the stream's, cancelled when the client resets or stops
// the stream or the connection closes): the watch is a callback on it
// (context.AfterFunc), with no goroutine of its own, instead of
// watchRead's blocking read.
type watchNotifier interface {
	watchContext() context.Context
}

// ability is a set of things an exchange can do beyond HTTP semantics.
type ability uint8

const (
	// canHijack: the handler may take the connection over (HTTP/1.1).
	canHijack ability = 1 << iota
	// canSendfile: the response goes straight to a socket, which may
	// take a body from a file with the kernel's copy (sendfile, splice).
	canSendfile
	// canFullDuplex: the body may be read while the response is written.
	canFullDuplex
	// multiplexed: the request is a stream of a connection that carries
	// others (HTTP/2, HTTP/3): the protocol delimits bodies itself, has
	// no connection-level fields, and a stream is reset, not the
	// connection cut.
	multiplexed
	// onQUIC: the request came over HTTP/3, so Alt-Svc has nothing to
	// tell the client.
	onQUIC
	// overTLS: the request came over TLS (HTTP/1.1 or HTTP/2), the only
	// origin a browser takes an HTTP/3 alternative from (Alt-Svc).
	overTLS
)

// The HTTP/1.1 connection is the exchange of its requests.
var _ exchange = (*conn)(nil)

func (c *conn) readBody(p []byte) (int, error) { return c.body.readFramed(p) }

// appendTrailers: HTTP/1.1 trailers are the chunked decoder's (Ctx.Trailers).
func (c *conn) appendTrailers(dst []h1.Header, buf []byte) ([]h1.Header, []byte) {
	return append(dst, c.body.dec.Trailers...), buf
}

// send100Continue: on HTTP/1.1 bodyReader.wait sends it into wbuf.
func (c *conn) send100Continue() {}

// closeBody: the server drains or cuts what is left after the handler.
func (c *conn) closeBody(*atomic.Bool) {}

// stopBody is not called on HTTP/1.1: its body is read on the connection
// with the compat lock held (bodyReader.stream is false), so no read is in
// flight once the handler has returned, and the server drains or cuts the
// rest of the body before the connection reads its next request.
func (c *conn) stopBody() {}

func (c *conn) setReadDeadline(t time.Time) error  { return c.nc.SetReadDeadline(t) }
func (c *conn) setWriteDeadline(t time.Time) error { return c.nc.SetWriteDeadline(t) }

// watchArm: the watch reads into rbuf past c.w, so it needs room there,
// and nothing pipelined may be waiting (then the client has not gone).
// The header or idle deadline is cleared for the watch's read.
func (c *conn) watchArm() bool {
	if c.w == len(c.rbuf) || c.r < c.w {
		return false
	}
	c.nc.SetReadDeadline(time.Time{})
	return true
}

func (c *conn) watchRead() (int, error) { return c.nc.Read(c.rbuf[c.w:]) }
func (c *conn) watchStop()              { c.nc.SetReadDeadline(aLongTimeAgo) }

func (c *conn) remoteAddr() net.Addr { return c.nc.RemoteAddr() }

// localAddr and remoteAddrString are kept for the connection (they stay
// the same for all its requests, and a net.Conn may make a new value per
// call).
func (c *conn) localAddr() net.Addr {
	if c.laddrOf != c.nc {
		c.laddrOf, c.laddr = c.nc, c.nc.LocalAddr()
	}
	return c.laddr
}

func (c *conn) remoteAddrString() string {
	if c.addrOf != c.nc {
		c.addrOf, c.addrStr = c.nc, c.nc.RemoteAddr().String()
	}
	return c.addrStr
}

// tlsState is made once per connection and shared by its requests, as
// net/http's are: the handshake is over once a request has been read, so
// the state does not change for the rest of the connection.
func (c *conn) tlsState() *tls.ConnectionState {
	tc, ok := c.nc.(*tls.Conn)
	if !ok {
		return nil
	}
	if c.tlsOf != c.nc {
		cs := tc.ConnectionState()
		c.tlsOf, c.tlsCS = c.nc, &cs
	}
	return c.tlsCS
}

func (c *conn) transport() net.Conn { return c.nc }
func (c *conn) protoMajor() int     { return 1 }

func (c *conn) abilities() ability {
	a := canHijack | canFullDuplex
	if _, ok := tcpConnOf(c.nc); ok || c.ec != nil {
		a |= canSendfile
	}
	if c.isTLS() {
		a |= overTLS
	}
	return a
}
