package riptide

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/clock"
	"github.com/riptide-http/riptide/internal/netx"
	"github.com/riptide-http/riptide/internal/reqhead"
	"github.com/riptide-http/riptide/internal/takeover"
)

// conn is the per-connection engine state. It is pooled: a connection's
// buffers, Ctx, parsed request and body reader are reused by every request
// on it and then by later connections, which is what makes the request path
// allocation-free.
//
// Internal contracts (for code in this package, including compat*.go):
//   - Only the connection's goroutine touches a conn, except Server.Shutdown
//     and Server.Close (which only call nc.SetReadDeadline / nc.Close and
//     load state) and the disconnect watcher (see watch.go).
//   - rbuf[r:w] is read but unconsumed input. rbuf[:pin] holds the live
//     request's head, which h1.Request slices point into; it is not moved or
//     overwritten until the handler has returned.
//   - wbuf holds complete responses (and at most the current one's
//     committed part) not yet written; it is written with one Write call
//     when the connection is about to block on a read, when it grows past
//     the write buffer size, or on Flush.
type conn struct {
	srv *Server
	cfg *config
	nc  net.Conn
	// ex is the exchange the Ctx serves (exchange.go): c itself, or the
	// HTTP/2 stream it serves (nc is then nil).
	ex exchange
	// tunnel is the CONNECT stream the handler took over (tunnel.go):
	// serveStream waits for it to close after the handler.
	tunnel *streamTunnel
	// addrOf and laddrOf are the connections remoteAddrString and
	// localAddr last kept addrStr and laddr for (kept across putConn: the
	// event loop releases a conn between two requests of one connection;
	// and carried in evloop.Saved across a park, since its worker's conn
	// serves other connections' requests meanwhile).
	addrOf, laddrOf net.Conn
	addrStr         string
	laddr           net.Addr
	// tlsOf is the connection tlsState last made tlsCS for.
	tlsOf net.Conn
	tlsCS *tls.ConnectionState
	// ec is the event-loop socket when the event-loop engine serves the
	// connection (nc is then ec), nil on the goroutine engine.
	ec *elConn
	// tl is the socket under the tls.Conn nc when the event loop serves a
	// TLS connection (ec is then nil: see loopConn, tlsloop_linux.go).
	tl *tlsSock
	// parked: the event-loop engine released the connection to its loop
	// while waiting for the next request (see conn.fillHead, engine_linux.go).
	parked bool
	// headArmed: the header deadline is running for a partial head;
	// resumed: the connection was parked (both carried across a park, see
	// readRequest).
	headArmed, resumed bool
	// iov is the event loop's writev argument (writevDirect), kept here
	// so that building it does not allocate.
	iov [2][]byte
	// kept: an event-loop worker owns this conn and reuses it for every
	// connection it serves; putConn resets it without pooling it.
	kept bool
	// stream: c serves an HTTP/2 stream natively (newStreamConn): it has
	// no write buffer, and its response body buffer is lent.
	stream bool

	// state is a ConnState, read by Shutdown.
	state atomic.Int32

	rbuf      []byte
	r, w, pin int
	wbuf      []byte
	werr      error // sticky: the connection is broken for writing
	// The response being written (HTTP/1.1, h1exchange.go): where it
	// starts in wbuf (so that a panic before anything of it was sent can
	// cut it off), whether bytes of it reached the socket, whether its
	// body is chunked.
	wmark         int
	sent, chunked bool
	closeAfter    bool // close once the current response is out
	hijacked      bool
	h2up          bool // hijacked by an h2c upgrade: the request is stream 1 of the HTTP/2 connection
	// handover: hijacked by another protocol that serves the connection on
	// the event loop once the handler returns (takeover_linux.go).
	handover  takeover.Proto
	untracked bool // untrack ran: the server no longer counts c
	nreq      int

	// head is the current request's head as the protocol's fill left it
	// (reqhead): method first, in rbuf[:pin], for the compat door.
	head reqhead.Head

	// Read and write deadline bookkeeping; see armRead.
	rkind, wkind uint8
	rsec, wsec   int64
	born         int64 // clock second of the accept, for Shutdown

	ctx     Ctx
	body    bodyReader
	date    clock.Date
	watchWG sync.WaitGroup
	linger  bool // the client may still be sending: half-close first

	// Statistics (stats.go): the shard this connection counts in, the
	// current request's start, bytes not yet added to the shard.
	shard     *statShard
	reqStart  int64 // monoNow
	nin, nout uint64

	sf *sendfileState // Ctx.SendFile on the goroutine engine (sendfile_linux.go)

	// wbufs is the holder lendWriteBufs reuses (TLS only).
	wbufs *writeBufs
	// idleBuf takes the first bytes of a request while the buffers are
	// lent (fillIdle; TLS on the goroutine engine only, made on first use
	// and kept while the conn is pooled).
	idleBuf *[idleBufSize]byte
	// bodyHold is the holder lendBody reuses (HTTP/2 streams only).
	bodyHold *bodyBuf
}

var connPool sync.Pool

func newConn(s *Server, nc net.Conn) *conn {
	c, _ := connPool.Get().(*conn)
	if c == nil || c.cfg != &s.cfg {
		c = &conn{
			rbuf: make([]byte, s.cfg.readBuf),
			wbuf: make([]byte, 0, s.cfg.writeBuf+1024),
		}
		c.ctx.resp.body = make([]byte, 0, s.cfg.writeBuf)
	}
	c.attach(s, nc)
	return c
}

// attach readies c, fresh or reset by putConn, to serve nc.
func (c *conn) attach(s *Server, nc net.Conn) {
	c.srv, c.cfg, c.nc = s, &s.cfg, nc
	c.ex = c
	c.born = clock.Sec()
	c.shard = s.pickShard()
	c.ctx.conn = c
	c.body.c = c
	c.body.done = true // no request yet: nothing unread to linger for
	c.state.Store(int32(StateNew))
}

// streamConnPool holds the conns that serve HTTP/2 and HTTP/3 streams
// (stream.go). Their read buffer holds only the copy of the request head
// (nothing is read into it from a socket): it is made, and grown, to the
// head's size by the fill (h2.Stream.FillRequest, copyH3Head), as is their
// header storage (streamRoom), so that a stream's Ctx, held for as long as
// its handler runs (a long poll, a held HTTP/3 stream), holds what its
// request needs, kept while the conn is pooled. They have no write
// buffer: a stream's response goes through its connection's writer (the
// exchange), never through wbuf. Their response body buffer is
// taken from bodyBufPool when the handler first writes and given back
// once the head has gone to the stream (takeBody, giveBody), so a stream
// whose handler waits holds neither.
var streamConnPool sync.Pool

// newStreamConn is newConn for a request stream, which the caller sets
// as the exchange (c.ex): the conn has no net.Conn.
func newStreamConn(s *Server) *conn {
	c, _ := streamConnPool.Get().(*conn)
	if c == nil || c.cfg != &s.cfg {
		c = &conn{stream: true}
		c.ctx.req.Headers = make([]h1.Header, 0, streamHeaders)
	}
	c.attach(s, nil)
	return c
}

// streamHeaders is the header storage a stream's conn starts with (a
// Request without any would take h1.InlineHeaders, 3.5 KiB, on Reset):
// streamRoom grows it to a head's field count, and it is kept while the
// conn is pooled, up to 2*h1.InlineHeaders (putConn).
const streamHeaders = 4

// bodyBuf holds a response body buffer in bodyBufPool; the holder
// circulates with it, so that neither lending nor taking allocates.
type bodyBuf struct{ b []byte }

var bodyBufPool sync.Pool

// takeBody gives a stream's conn a response body buffer, on the first
// write that buffers (cap(resp.body) == 0 on no other conn).
func (c *conn) takeBody() {
	h, _ := bodyBufPool.Get().(*bodyBuf)
	if h == nil {
		h = new(bodyBuf)
	}
	b := h.b
	h.b = nil
	c.bodyHold = h
	if cap(b) < c.cfg.writeBuf {
		b = make([]byte, 0, c.cfg.writeBuf)
	}
	c.ctx.resp.body = b[:0]
}

// giveBody lends a stream's response body buffer back to bodyBufPool,
// once it holds nothing (the head and buffered body went to the stream).
func (c *conn) giveBody() {
	b := c.ctx.resp.body
	c.ctx.resp.body = nil
	if cap(b) == 0 {
		return
	}
	h := c.bodyHold
	if h == nil {
		h = new(bodyBuf)
	}
	c.bodyHold = nil
	if cap(b) <= 4*c.cfg.writeBuf {
		h.b = b[:0]
	}
	bodyBufPool.Put(h)
}

// putConn returns c to the pool, dropping buffers that grew unusually large
// and every reference to the old connection.
func putConn(c *conn) {
	if c.stream {
		c.giveBody()
	}
	if len(c.rbuf) > 4*c.cfg.readBuf {
		c.rbuf = nil // a stream's: the next head's fill makes one
		if !c.stream {
			c.rbuf = make([]byte, c.cfg.readBuf)
		}
	}
	if cap(c.wbuf) > 4*c.cfg.writeBuf {
		c.wbuf = make([]byte, 0, c.cfg.writeBuf+1024)
	}
	if cap(c.ctx.resp.body) > 4*c.cfg.writeBuf {
		c.ctx.resp.body = make([]byte, 0, c.cfg.writeBuf)
	}
	if cap(c.ctx.scratch) > 64<<10 {
		c.ctx.scratch = nil
	}
	if cap(c.ctx.req.Headers) > 2*h1.InlineHeaders {
		// A head of many fields (MaxHeaders allowed it) does not stay
		// with the pooled conn; Reset allocates an HTTP/1.1 conn's.
		c.ctx.req.Headers = nil
		if c.stream {
			c.ctx.req.Headers = make([]h1.Header, 0, streamHeaders)
		}
	}
	c.nc, c.ec, c.tl, c.parked, c.headArmed, c.resumed = nil, nil, nil, false, false, false
	c.sf.reset()
	c.r, c.w, c.pin = 0, 0, 0
	c.head = reqhead.Head{}
	c.wbuf = c.wbuf[:0]
	c.werr, c.closeAfter, c.hijacked, c.nreq, c.linger, c.untracked = nil, false, false, 0, false, false
	c.h2up, c.handover = false, nil
	c.rkind, c.wkind = dlNone, dlNone
	c.ctx.req.Reset()
	c.ctx.resetResponse()
	switch {
	case c.kept:
	case c.stream:
		streamConnPool.Put(c)
	default:
		connPool.Put(c)
	}
}

func (c *conn) setState(st ConnState) {
	if ConnState(c.state.Load()) == st {
		return
	}
	c.state.Store(int32(st))
	c.elMirrorState(st) // for Shutdown, while c is parked
	if h := c.srv.ConnState; h != nil {
		h(c.nc, st)
	}
}

// serveHTTP1 serves HTTP/1.1 requests until the connection closes, is
// hijacked or (event-loop engine) is parked; c is released unless parked.
func (c *conn) serveHTTP1() {
	for c.readRequest() {
		c.serveRequest()
		c.statRequestDone()
		if c.hijacked {
			if c.handover != nil {
				c.serveHandover() // takeover_linux.go
				return
			}
			c.setState(StateHijacked)
			c.untrack()
			putConn(c)
			return
		}
		if c.closeAfter || c.werr != nil {
			break
		}
		if len(c.wbuf) >= c.cfg.writeBuf {
			c.flush()
		}
	}
	if c.parked {
		putConn(c)
		return
	}
	c.flush()
	c.closeConn()
}

// untrack ends the server's accounting of c (closed or hijacked).
func (c *conn) untrack() {
	if c.untracked {
		return // already, by an h2c upgrade (upgradeH2C)
	}
	c.untracked = true
	if c.elUntrack() {
		return
	}
	c.srv.trackConn(c, false)
}

// closeConn closes the socket. When the client may still be sending (an
// undrained body, a rejected request), it half-closes first and discards
// input briefly so that the last response is not destroyed by an RST.
func (c *conn) closeConn() {
	var cw interface{ CloseWrite() error }
	if tc, ok := tcpConnOf(c.nc); ok { // also under the PROXY protocol (proxy.go)
		cw = tc
	} else if ec := c.elCloseWriter(); ec != nil {
		cw = ec
	}
	if cw != nil && c.werr == nil && (c.linger || c.r < c.w || !c.body.done) {
		netx.HalfCloseAndDrain(c.nc, cw)
	}
	c.nc.Close()
	c.setState(StateClosed)
	c.untrack()
	c.statClose()
	putConn(c)
}

// readRequest reads and parses the next request head into c.ctx.req. It
// returns false when the connection should close (EOF, timeout, shutdown,
// or a parse error, which it has answered).
func (c *conn) readRequest() bool {
	req := &c.ctx.req
	// A parked connection keeps its deadlines: its partial head's, or the
	// idle one (so re-entering here after a park does not re-arm them).
	armed, idleArmed := c.headArmed, c.resumed
	c.headArmed, c.resumed = false, false
	for {
		if c.r < c.w {
			n, err := req.Parse(c.rbuf[c.r:c.w], &c.cfg.limits)
			if err == nil {
				c.head = reqhead.Parsed(c.rbuf[c.r : c.r+n])
				c.r += n
				c.pin = c.r
				c.setState(StateActive)
				c.statRequestStart()
				return true
			}
			if err != h1.ErrNeedMore {
				c.setState(StateActive)
				// RFC 9110 §9.3.2: no content in an answer to HEAD, even
				// to a request refused after its method was read.
				c.ctx.resp.head = headRequestLine(c.rbuf[c.r:c.w])
				code := h1.StatusOf(err)
				c.statParseError(code)
				if code != 505 || !c.refuseH2Preface() {
					c.writeCanned(code)
				}
				return false
			}
			if !armed {
				// Part of a head is here: from now on the head must
				// complete within ReadHeaderTimeout (slowloris).
				c.armRead(dlHeader, c.cfg.readHeader, false)
				armed = true
			}
		}
		// About to block: this is the end of a pipelined batch.
		if c.flush() != nil {
			return false
		}
		if c.r == c.w {
			if c.nreq > 0 {
				// Draining: no next request (a new connection still gets
				// its first one answered, with Connection: close).
				if c.srv.draining.Load() {
					return false
				}
				c.r, c.w = 0, 0
				if !idleArmed {
					c.armRead(dlIdle, c.cfg.idle, true)
				}
				idleArmed = false
				// Order matters for Shutdown: deadline, then state, then
				// the flag check (see Server.closeIdle).
				c.setState(StateIdle)
				if c.srv.draining.Load() {
					return false
				}
			}
		}
		var err error
		if el, elErr := c.elFill(armed); el {
			// Event loop: read what is there, or park until more comes.
			if err = elErr; c.parked {
				return false
			}
		} else if c.w == 0 && c.isTLS() {
			// Waiting for a request on TLS: see lendWriteBufs.
			c.lendWriteBufs()
			err = c.fillIdle()
			c.takeWriteBufs()
		} else {
			err = c.fill()
		}
		if err != nil {
			c.statReadError(err)
			if c.r < c.w && netx.DeadlineExceeded(err) && !c.srv.draining.Load() {
				c.ctx.resp.head = false
				c.writeCanned(408)
			}
			return false
		}
		c.setState(StateActive)
	}
}

// serveRequest runs the handler for the parsed request and completes its
// response in wbuf.
func (c *conn) serveRequest() {
	x := &c.ctx
	req := &x.req
	c.nreq++
	x.resetResponse()
	cfg := c.cfg
	x.resp.close = req.Close || !cfg.keepAlive ||
		(cfg.maxReqs > 0 && c.nreq >= cfg.maxReqs) || c.tooOld()
	x.resp.head = isHEAD(req.Method)
	if req.ExpectOther {
		c.writeCanned(417)
		return
	}
	if overBodyLimit(cfg.maxBody, req.ContentLength) {
		c.writeCanned(413)
		return
	}
	c.body.start(req)

	x.inHandler.Store(true)
	if settings, ok := c.h2cUpgrade(req); ok { // serve.go: instead of the handler
		c.upgradeH2C(settings)
	} else {
		c.callHandler()
	}
	x.stopWatch(true)
	if c.hijacked {
		return
	}
	x.finish()
	c.body.finishRequest()
	x.raceRelease() // racecheck.go: race builds only
	if c.wkind == dlUser {
		// The handler's write deadline ends with its request.
		c.wkind = dlNone
		c.nc.SetWriteDeadline(time.Time{})
	}
	if x.resp.close {
		c.closeAfter = true
	}
	if cap(x.scratch) > 1<<20 {
		// Do not keep a large ReadBody buffer for the connection's life.
		x.scratch = nil
	}
	c.pin = 0
}

func isHEAD(m []byte) bool { return string(m) == "HEAD" }

// headRequestLine reports whether b, the start of a request head (perhaps
// after empty lines, which RFC 9112 §2.2 lets a server skip), asks for HEAD.
func headRequestLine(b []byte) bool {
	for len(b) >= 2 && b[0] == '\r' && b[1] == '\n' {
		b = b[2:]
	}
	return bytes.HasPrefix(b, []byte("HEAD "))
}

// callHandler runs the handler with panic recovery. A separate function so
// the deferred recover is open-coded (free when nothing panics).
func (c *conn) callHandler() {
	defer func() {
		if v := recover(); v != nil {
			c.handlerPanicked(v)
		}
	}()
	c.ctx.raceOwnHead() // racecheck.go: race builds only
	if h := c.srv.Handler; h != nil {
		h.ServeCtx(&c.ctx)
	} else {
		notFound(&c.ctx)
	}
}

func notFound(x *Ctx) { x.Error(404, "404 page not found") }

// writeCanned appends the canned answer (canned.go) with Connection:
// close after whatever complete responses are pending, and marks the
// connection to close. Used for requests the handler never sees.
func (c *conn) writeCanned(code int) {
	c.wbuf = h1.AppendStatusLine(c.wbuf, code)
	var h outHead
	h.serverFields(c.srv, c.abilities(), &noUserFields)
	c.wbuf = c.appendServerLines(c.wbuf, &h)
	c.wbuf = append(c.wbuf, "Content-Type: "+cannedType+"\r\nConnection: close\r\n"...)
	c.wbuf = h1.AppendContentLength(c.wbuf, int64(cannedBodyLen(code)))
	c.wbuf = append(c.wbuf, "\r\n"...)
	if !c.ctx.resp.head { // RFC 9110 §9.3.2: no content in an answer to HEAD
		c.wbuf = appendCannedBody(c.wbuf, code)
	}
	c.closeAfter = true
	c.ctx.resp.close = true
	c.ctx.resp.status = code // for the statistics
	// The client may be sending a body we will not read: half-close and
	// drain briefly so that this response is not lost to an RST.
	c.linger = true
}

// flush writes wbuf with a single Write call.
func (c *conn) flush() error {
	if c.werr != nil {
		return c.werr
	}
	if len(c.wbuf) == 0 {
		return nil
	}
	c.armWrite()
	n, err := c.nc.Write(c.wbuf)
	c.nout += uint64(n)
	c.wbuf = c.wbuf[:0]
	c.sent = true // writeHead clears it for the next response
	if err != nil {
		c.werr = err
	}
	return err
}

// writeDirect writes p straight to the socket after flushing wbuf; used for
// large response bodies so they are not copied.
func (c *conn) writeDirect(p []byte) error {
	if ok, err := c.elWritev(p); ok {
		// Event loop: head (and anything pending) and body in one writev.
		return err
	}
	if err := c.flush(); err != nil {
		return err
	}
	c.armWrite()
	c.sent = true
	n, err := c.nc.Write(p)
	c.nout += uint64(n)
	if err != nil {
		c.werr = err
	}
	return err
}

// fill reads more input into rbuf[w:], making room first. It returns nil
// when at least one byte was read.
func (c *conn) fill() error {
	if c.w == len(c.rbuf) {
		if err := c.makeRoom(); err != nil {
			return err
		}
	}
	return c.readInto(c.rbuf[c.w:])
}

// readInto reads into p, the free part of the input (rbuf[w:], or idleBuf
// while w is 0: fillIdle), and counts what came in w. It returns nil when
// at least one byte was read.
func (c *conn) readInto(p []byte) error {
	n, err := c.nc.Read(p)
	c.w += n
	c.nin += uint64(n)
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// isTLS reports whether c serves a TLS connection (on the goroutine engine:
// the event loop serves plain TCP only).
func (c *conn) isTLS() bool {
	_, ok := c.nc.(*tls.Conn)
	return ok
}

// writeBufs holds the write buffer, the response body buffer and the read
// buffer of a conn whose TLS connection waits for a request
// (lendWriteBufs).
type writeBufs struct{ wbuf, body, rbuf []byte }

var writeBufsPool sync.Pool

// lendWriteBufs gives c's write buffer, response body buffer and (empty:
// the caller checked c.w == 0) read buffer, about 37 KiB by default, to a
// pool while c waits for a request on TLS on the goroutine engine, where no
// event loop holds the connection instead: an idle TLS connection keeps
// its goroutine, the conn and crypto/tls's own state, not these (the wait
// reads into c.idleBuf: fillIdle). takeWriteBufs gets buffers back once the
// read returns; the holder struct circulates, so neither allocates.
func (c *conn) lendWriteBufs() {
	h := c.wbufs
	if h == nil {
		h = new(writeBufs)
	}
	c.wbufs = nil
	if cap(c.wbuf) <= 4*c.cfg.writeBuf && cap(c.ctx.resp.body) <= 4*c.cfg.writeBuf && len(c.rbuf) <= 4*c.cfg.readBuf {
		h.wbuf, h.body, h.rbuf = c.wbuf[:0], c.ctx.resp.body[:0], c.rbuf
	}
	c.wbuf, c.ctx.resp.body, c.rbuf = nil, nil, nil
	writeBufsPool.Put(h)
}

// fillIdle is fill while the buffers are lent (c.w == 0): it reads into
// c.idleBuf, whose bytes takeWriteBufs moves to the read buffer. crypto/tls
// keeps the rest of a record's plaintext for the next read.
func (c *conn) fillIdle() error {
	if c.idleBuf == nil {
		c.idleBuf = new([idleBufSize]byte)
	}
	return c.readInto(c.idleBuf[:min(idleBufSize, c.cfg.readBuf)])
}

// idleBufSize is the size of a conn's idleBuf.
const idleBufSize = 256

// takeWriteBufs gives c write buffers again after lendWriteBufs.
func (c *conn) takeWriteBufs() {
	h, _ := writeBufsPool.Get().(*writeBufs)
	if h == nil {
		h = new(writeBufs)
	}
	c.wbuf, c.ctx.resp.body, c.rbuf = h.wbuf, h.body, h.rbuf
	h.wbuf, h.body, h.rbuf = nil, nil, nil
	c.wbufs = h
	// Buffers of another server's sizes, or none: fresh ones.
	if cap(c.wbuf) < c.cfg.writeBuf+1024 {
		c.wbuf = make([]byte, 0, c.cfg.writeBuf+1024)
	}
	if cap(c.ctx.resp.body) < c.cfg.writeBuf {
		c.ctx.resp.body = make([]byte, 0, c.cfg.writeBuf)
	}
	if len(c.rbuf) < c.cfg.readBuf {
		c.rbuf = make([]byte, c.cfg.readBuf)
	}
	if c.w > 0 {
		copy(c.rbuf, c.idleBuf[:c.w]) // read by fillIdle
	}
}

// errBufferFull is returned by makeRoom when a head or chunk framing does
// not fit the largest read buffer allowed; the parser reports the real
// limit error before this in practice.
var errBufferFull = errors.New("riptide: read buffer full")

// makeRoom compacts rbuf[r:w] down to pin, or grows rbuf when it is full of
// unconsumed bytes. Growth is bounded by the head limit plus room for chunk
// framing and trailers.
func (c *conn) makeRoom() error {
	if c.r > c.pin {
		n := copy(c.rbuf[c.pin:], c.rbuf[c.r:c.w])
		c.r, c.w = c.pin, c.pin+n
		return nil
	}
	limit := c.cfg.limits.MaxHeadBytes + 32<<10
	if len(c.rbuf) >= limit {
		return errBufferFull
	}
	// Request slices may point into the old buffer; it stays alive and
	// unchanged for them, so copying is safe.
	nb := make([]byte, min(2*len(c.rbuf), limit))
	copy(nb, c.rbuf[:c.w])
	c.rbuf = nb
	return nil
}

// Deadline kinds, recorded so a deadline of the same kind can be kept
// instead of re-armed on every request.
const (
	dlNone uint8 = iota
	dlIdle
	dlHeader
	dlBody
	dlWrite
	dlUser
)

// armRead sets the read deadline to now+d (none when d is 0). With lazy set,
// a deadline of the same kind armed less than d/4 ago is kept: keep-alive
// connections then re-arm the idle timeout a few times a minute instead of
// on every request, at the price of the timeout firing up to a quarter
// early. Short timeouts are always armed exactly.
func (c *conn) armRead(kind uint8, d time.Duration, lazy bool) {
	if d <= 0 {
		if c.rkind != dlNone {
			c.nc.SetReadDeadline(time.Time{})
			c.rkind = dlNone
		}
		return
	}
	sec := clock.Sec()
	if lazy && kind == c.rkind && d >= 4*time.Second && sec != 0 &&
		time.Duration(sec-c.rsec)*time.Second < d/4 {
		return
	}
	c.nc.SetReadDeadline(time.Now().Add(d))
	c.rkind, c.rsec = kind, sec
}

// armWrite applies WriteTimeout before a socket write, lazily as armRead.
func (c *conn) armWrite() {
	d := c.cfg.write
	if d <= 0 || c.wkind == dlUser {
		return
	}
	sec := clock.Sec()
	if c.wkind == dlWrite && d >= 4*time.Second && sec != 0 &&
		time.Duration(sec-c.wsec)*time.Second < d/4 {
		return
	}
	c.nc.SetWriteDeadline(time.Now().Add(d))
	c.wkind, c.wsec = dlWrite, sec
}

// handlerPanicked recovers from a handler panic: it logs it (unless the
// value is ErrAbortHandler), drops whatever part of this response is still
// unsent, answers 500 if nothing of the response has left yet or cuts the
// connection otherwise. The connection always closes: the handler may have
// left the body or the response half done.
func (c *conn) handlerPanicked(v any) {
	x := &c.ctx
	c.srv.logPanic(v, c.ex.remoteAddrString(), string(x.req.Method), string(x.req.Target))
	if c.hijacked {
		return
	}
	x.stopWatch(true)
	c.closeAfter = true
	c.linger = true
	r := &x.resp
	switch {
	case r.resetOnPanic:
		// The stream is reset: the exchange ends it unfinished. Counted
		// as a 500 (statistics) unless a status went out.
		c.werr = errPanicked
		if !r.committed {
			r.status = 500
		}
	case !r.committed:
		x.resetResponse()
		r.head = isHEAD(x.req.Method)
		r.status = 500
		r.close = true
		addField(&r.hdr, "Content-Type", "text/plain; charset=utf-8")
		r.body = append(r.body, "500 Internal Server Error\n"...)
	case !c.sent:
		// This response is only in wbuf: cut it off so that earlier
		// pipelined responses still go out whole, then close.
		c.wbuf = c.wbuf[:c.wmark]
		c.flush()
		c.werr = errPanicked
	default:
		// Bytes of this response are on the wire: the client must see the
		// connection cut, not a response that looks complete.
		c.werr = errPanicked
	}
}

var errPanicked = errors.New("riptide: handler panicked")
