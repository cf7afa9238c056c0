package client

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/riptide-http/riptide/h1"
)

const (
	defaultReadBufferSize  = 4 << 10
	defaultWriteBufferSize = 4 << 10
	// maxReadBuffer bounds how far a connection's read buffer grows to hold
	// a response head or a chunk-size line.
	maxReadBuffer = 1 << 20
	// inlineBodyMax is the largest request body appended to the head so
	// that head and body go out in one write.
	inlineBodyMax = 16 << 10
)

// conn is one client connection. It is used by one exchange at a time (or,
// with pipelining, by one writer and one reader at a time, see pipe.go).
type conn struct {
	nc   net.Conn
	p    *hostPool
	rbuf []byte
	r, w int // unread bytes are rbuf[r:w]
	wbuf []byte
	dec  h1.ChunkedDecoder
	tls  *tls.ConnectionState

	idleAt time.Time // when the connection was last put in the pool
	reused bool      // completed at least one exchange
	got    bool      // received bytes of the current response
	i1xx   interims  // interim responses read for the current request

	ctx        context.Context // of the current exchange
	deadline   time.Time       // of the current exchange
	dl         bool            // a deadline is set on nc
	hdrTimeout bool            // the read deadline is the response header one
	stop       func() bool     // stops the context watcher of the exchange
	canceled   atomic.Bool     // the context watcher fired
	cancelFn   func()          // c.cancel as a func value, made once

	live liveness // idle-close detection, see liveness_*.go

	pipe *pipeState // non-nil on pipelined connections
}

// sendState is how far liveness.sendRecv got.
type sendState uint8

const (
	sendUnsupported sendState = iota // not a plain socket: nothing done
	sendStart                        // (internal) nothing done yet
	sendNotQuiet                     // the peek found bytes or a close: nothing written
	sendFailed                       // the write failed (n bytes written)
	sendPartial                      // n bytes written, the rest is the caller's
	sendWaiting                      // (internal) written, waiting for the response
	sendRead                         // written; n response bytes read, or an error
)

func newConn(nc net.Conn, p *hostPool) *conn {
	rs, ws := p.c.ReadBufferSize, p.c.WriteBufferSize
	if rs <= 0 {
		rs = defaultReadBufferSize
	}
	if ws <= 0 {
		ws = defaultWriteBufferSize
	}
	c := &conn{nc: nc, p: p, rbuf: make([]byte, rs), wbuf: make([]byte, 0, ws)}
	c.dec.Limits = &p.c.Limits
	c.cancelFn = c.cancel
	if tc, ok := nc.(*tls.Conn); ok {
		st := tc.ConnectionState()
		c.tls = &st
		c.live.init(tc.NetConn(), false) // TLS records: no raw I/O
	} else {
		c.live.init(nc, true)
	}
	return c
}

// cancel runs in its own goroutine when the exchange's context is done: it
// unblocks any read or write, and the exchange then discards c.
func (c *conn) cancel() {
	c.canceled.Store(true)
	c.nc.SetDeadline(aLongTimeAgo)
}

var aLongTimeAgo = time.Unix(1, 0)

// fill reads more bytes into rbuf, compacting or growing it when full.
func (c *conn) fill() error {
	if c.r == c.w {
		c.r, c.w = 0, 0
	}
	if c.w == len(c.rbuf) {
		if c.r > 0 {
			c.w = copy(c.rbuf, c.rbuf[c.r:c.w])
			c.r = 0
		} else {
			if len(c.rbuf) >= maxReadBuffer {
				return h1.ErrHeaderTooLarge
			}
			nb := make([]byte, 2*len(c.rbuf))
			copy(nb, c.rbuf[:c.w])
			c.rbuf = nb
		}
	}
	n, err := c.nc.Read(c.rbuf[c.w:])
	c.w += n
	if n > 0 {
		c.got = true
		return nil
	}
	if err == nil {
		return io.ErrNoProgress
	}
	return err
}

// read reads into p the bytes already buffered, if any, else from the
// network: for bodies read until close and switched protocols.
func (c *conn) read(p []byte) (int, error) {
	if c.r < c.w {
		n := copy(p, c.rbuf[c.r:c.w])
		c.r += n
		return n, nil
	}
	return c.nc.Read(p)
}

// readErr translates a read or write error: deadlines become the timeout
// that set them or the context's error; EOF inside a message becomes
// io.ErrUnexpectedEOF.
func (c *conn) readErr(err error, inBody bool) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		if c.canceled.Load() && c.ctx != nil && c.ctx.Err() != nil {
			return c.ctx.Err()
		}
		if c.hdrTimeout {
			return ErrResponseHeaderTimeout
		}
		if c.ctx != nil {
			return deadlineErr(c.ctx, c.deadline)
		}
		return ErrRequestTimeout
	}
	if err == io.EOF {
		if !inBody && !c.got {
			return ErrServerClosed
		}
		return io.ErrUnexpectedEOF
	}
	return err
}

// setDeadlines arms the write and read deadlines of one exchange: deadline
// bounds the whole exchange, hdr (if earlier) the wait for the head.
func (c *conn) setDeadlines(deadline, hdr time.Time) {
	c.deadline = deadline
	if deadline.IsZero() && hdr.IsZero() {
		if c.dl {
			c.nc.SetDeadline(time.Time{})
			c.dl = false
		}
		c.hdrTimeout = false
		return
	}
	c.dl = true
	c.hdrTimeout = false
	if hdr.IsZero() || (!deadline.IsZero() && !hdr.Before(deadline)) {
		c.nc.SetDeadline(deadline)
		return
	}
	c.nc.SetWriteDeadline(deadline)
	c.nc.SetReadDeadline(hdr)
	c.hdrTimeout = true
}

// setReadDeadline moves the read deadline, keeping a cancelled exchange
// cancelled: the context watcher may have fired in between.
func (c *conn) setReadDeadline(t time.Time) {
	c.dl = true
	c.nc.SetReadDeadline(t)
	if c.canceled.Load() {
		c.nc.SetDeadline(aLongTimeAgo)
	}
}

// watch starts watching ctx for the exchange. It reports ctx's error if ctx
// is already done. A context that can never be done costs nothing.
func (c *conn) watch(ctx context.Context) error {
	c.ctx = ctx
	c.canceled.Store(false)
	if ctx.Done() == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c.stop = context.AfterFunc(ctx, c.cancelFn)
	return nil
}

// endExchange stops the context watcher. It reports false if the watcher
// fired (or may be firing), in which case c must not be reused.
func (c *conn) endExchange() bool {
	ok := !c.canceled.Load()
	if c.stop != nil {
		if !c.stop() {
			ok = false
		}
		c.stop = nil
	}
	c.ctx = nil
	return ok
}

// release ends the exchange and returns c to its pool.
func (c *conn) release() {
	if !c.endExchange() {
		c.p.closeConn(c)
		return
	}
	c.reused = true
	if c.pipe != nil {
		c.pipe.readDone(c)
		return
	}
	c.p.put(c)
}

// discard ends the exchange and closes c.
func (c *conn) discard() {
	c.endExchange()
	if c.pipe != nil {
		c.pipe.fail(c)
		return
	}
	c.p.closeConn(c)
}

// readHead reads and parses a response head into h. It returns the length
// of the head, which starts at c.rbuf[c.r].
func (c *conn) readHead(h *h1.Response) (int, error) {
	for {
		n, err := h.Parse(c.rbuf[c.r:c.w], &c.p.c.Limits)
		if err == nil {
			return n, nil
		}
		if http2Frame(c.rbuf[c.r:c.w]) {
			return 0, ErrHTTP2Only
		}
		if err != h1.ErrNeedMore {
			return 0, err
		}
		if err := c.fill(); err != nil {
			if http2Frame(c.rbuf[c.r:c.w]) {
				return 0, ErrHTTP2Only
			}
			return 0, c.readErr(err, false)
		}
	}
}

// http2Frame reports whether b, where a response head should start, starts
// with an HTTP/2 frame a server sends on a connection it reads as HTTP/2:
// its SETTINGS (the server's connection preface, RFC 9113 §3.4) or a
// GOAWAY, both on stream 0. A response head starts with "HTTP/", whose
// first byte is never the 0 that begins every such frame under 64 KiB.
func http2Frame(b []byte) bool {
	if len(b) < 9 || b[0] != 0 || b[5]&0x7f != 0 || b[6] != 0 || b[7] != 0 || b[8] != 0 {
		return false
	}
	length := int(b[1])<<8 | int(b[2])
	switch b[3] {
	case 0x4: // SETTINGS: six bytes per setting, or an ACK (flag 1) with none
		return length%6 == 0 && b[4]&^1 == 0
	case 0x7: // GOAWAY: last stream ID and error code, then debug data
		return length >= 8 && b[4] == 0
	}
	return false
}

// write writes b, translating errors like readErr.
func (c *conn) write(b []byte) error {
	if _, err := c.nc.Write(b); err != nil {
		return c.readErr(err, false)
	}
	return nil
}

// writeStream sends a streamed request body: exactly size bytes, or chunked
// when size < 0, followed by trailer's fields as they are once rd has
// returned io.EOF. It uses the write buffer, so it reads rd no faster than
// the connection drains.
func (c *conn) writeStream(rd io.Reader, size int64, trailer http.Header) error {
	buf := c.wbuf[:cap(c.wbuf)]
	if size >= 0 {
		for size > 0 {
			b := buf
			if int64(len(b)) > size {
				b = b[:size]
			}
			n, err := rd.Read(b)
			if n > 0 {
				if err := c.write(b[:n]); err != nil {
					return err
				}
				size -= int64(n)
			}
			if err == io.EOF && size > 0 {
				return ErrBodyLength
			}
			if err != nil && err != io.EOF {
				return err
			}
		}
		return nil
	}
	// Chunked: read into the middle of buf, leaving room for the chunk
	// header before and the CRLF after, so each chunk is one write.
	const hdrRoom = 18
	for {
		n, err := rd.Read(buf[hdrRoom : len(buf)-2])
		if n > 0 {
			var hb [hdrRoom]byte
			h := h1.AppendChunkHeader(hb[:0], n)
			start := hdrRoom - len(h)
			copy(buf[start:], h)
			buf[hdrRoom+n], buf[hdrRoom+n+1] = '\r', '\n'
			if err := c.write(buf[start : hdrRoom+n+2]); err != nil {
				return err
			}
		}
		if err == io.EOF {
			last, err := appendLastChunk(buf[:0], trailer)
			if err != nil {
				return err
			}
			return c.write(last)
		}
		if err != nil {
			return err
		}
	}
}

// await100 waits up to timeout for the server's answer to "Expect:
// 100-continue". It reports whether the body should be sent: true after a
// 100 response or when the wait times out, false when a final response
// arrived first (it stays in the buffer for readHead).
func (c *conn) await100(h *h1.Response, timeout time.Duration, restore time.Time) (bool, error) {
	c.setReadDeadline(time.Now().Add(timeout))
	defer c.setReadDeadline(restore)
	for {
		n, err := h.Parse(c.rbuf[c.r:c.w], &c.p.c.Limits)
		switch {
		case err == nil && h.Status == 100:
			c.r += n
			return true, c.got1xx(h)
		case err == nil && h.Status < 200 && h.Status != 101:
			if err := c.interim(n); err != nil {
				return false, err
			}
			if err := c.got1xx(h); err != nil {
				return false, err
			}
			c.r += n
			continue
		case err == nil:
			return false, nil
		case err != h1.ErrNeedMore:
			return false, err
		}
		if err := c.fill(); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) && !c.canceled.Load() {
				return true, nil
			}
			return false, c.readErr(err, false)
		}
	}
}

// appendLastChunk appends the last chunk of a chunked request body with
// trailer's fields. A field that would not be a valid header field fails
// the request rather than being sent.
func appendLastChunk(dst []byte, trailer http.Header) ([]byte, error) {
	var lines []byte
	for name, vs := range trailer {
		if !h1.ValidHeaderName(name) {
			return nil, ErrBadHeader
		}
		for _, v := range vs {
			if !h1.ValidHeaderValue(v) {
				return nil, ErrBadHeader
			}
			lines = h1.AppendHeader(lines, name, v)
		}
	}
	return h1.AppendLastChunkLines(dst, lines), nil
}
