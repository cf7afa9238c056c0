package riptide

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/netx"
)

// ErrBodyTooLarge is returned by body reads past Server.MaxRequestBodySize.
// The connection closes after the response; a handler that writes nothing
// gets a 413 sent for it.
var ErrBodyTooLarge = errors.New("riptide: request body too large")

// ErrBodyReadAfterClose is returned by body reads after the handler
// returned (a retained reader).
var ErrBodyReadAfterClose = errors.New("riptide: body read after handler returned")

// directReadMin is the read size from which a fixed-length body is read
// from the socket straight into the caller's buffer instead of via rbuf.
const directReadMin = 4 << 10

// bodyReader streams the request body out of the connection. It is the
// io.Reader returned by Ctx.Body; one per conn, reset per request.
//
// Contract: bytes before c.r are consumed; the reader never touches
// rbuf[:pin] (the head). Decoded chunk data not yet returned is kept in
// pending, a slice of rbuf[r-…:r], and rbuf is not refilled while pending is
// non-empty.
type bodyReader struct {
	c         *conn
	chunked   bool
	remaining int64 // fixed length: bytes still to come
	read      int64 // body bytes delivered so far
	limit     int64 // chunked: most body bytes allowed, 0 for any (bodylimit.go)
	dec       h1.ChunkedDecoder
	pending   []byte
	done      bool  // io.EOF reached
	err       error // sticky failure
	expect    bool  // client sent Expect: 100-continue
	sent100   bool  // 100 Continue sent (or no longer appropriate)
	waited    bool  // a read waited on the network (deadline armed)
	closed    bool  // the handler returned

	// stream: the exchange frames the body (an HTTP/2 stream), read with
	// its readBody (readStream); its trailers are copied into trailers and
	// tbuf at the end.
	stream   bool
	trailers []h1.Header
	tbuf     []byte

	// Stream reads made by a compat Request.Body outside the compat
	// lock, possibly on another goroutine (compatBody.Read): entered
	// while the handler runs, stopped and waited for before the exchange
	// and the conn are given back (endReads), so that none reads a stream
	// reused for another request. The same on HTTP/2 and HTTP/3.
	reading atomic.Int32
	reads   sync.WaitGroup
}

// enterRead counts a stream read about to start outside the compat lock;
// it is called with that lock held while the handler has not returned, so
// that a read either is counted before endReads runs or finds the request
// ended and does not start.
func (b *bodyReader) enterRead() {
	b.reading.Add(1)
	b.reads.Add(1)
}

// leaveRead ends what enterRead began. b is not touched after it: the conn
// may serve another request at once.
func (b *bodyReader) leaveRead() {
	b.reading.Add(-1)
	b.reads.Done()
}

// endReads runs on the goroutine serving a stream (HTTP/2 or HTTP/3) once
// the handler has returned, before the exchange or the conn may be reused:
// no read enters any more, and one still in flight is made to return at
// once (the exchange's stopBody) and waited for.
func (b *bodyReader) endReads() {
	if b.reading.Load() > 0 {
		b.c.ex.stopBody()
		b.reads.Wait()
	}
}

func (b *bodyReader) start(req *h1.Request) {
	b.stream = false
	b.chunked = req.Chunked
	b.remaining = 0
	if !req.Chunked {
		b.remaining = req.ContentLength
	} else {
		b.dec.Reset()
		b.dec.Limits = &b.c.cfg.limits
	}
	b.read = 0
	b.limit = b.c.cfg.maxBody
	b.pending = nil
	b.done = !req.Chunked && req.ContentLength == 0
	b.err = nil
	// RFC 9110 §10.1.1: a server ignores 100-continue from HTTP/1.0.
	b.expect = req.Expect100 && req.Minor == 1
	b.sent100 = false
	b.waited = false
	b.closed = false
}

// Read implements io.Reader over the request body.
func (b *bodyReader) Read(p []byte) (int, error) {
	if b.stream {
		return b.readStream(p)
	}
	switch {
	case b.closed:
		return 0, ErrBodyReadAfterClose
	case b.err != nil:
		return 0, b.err
	case b.done:
		return 0, io.EOF
	case len(p) == 0:
		return 0, nil
	}
	return b.readFramed(p)
}

// readFramed reads an HTTP/1.1 body off the connection: chunked or of a
// fixed length.
func (b *bodyReader) readFramed(p []byte) (int, error) {
	if b.chunked {
		return b.readChunked(p)
	}
	return b.readFixed(p)
}

// startStream prepares the reader for a body the exchange frames (an
// HTTP/2 stream's): hasBody is false when the request ended with its
// head, expect when the client waits for 100 Continue.
func (b *bodyReader) startStream(hasBody, expect bool) {
	b.stream = true
	b.chunked = false
	b.remaining = 0
	b.read = 0
	b.limit = b.c.cfg.maxBody
	b.pending = nil
	b.done = !hasBody
	b.err = nil
	b.expect, b.sent100 = expect && hasBody, false
	b.waited, b.closed = true, false
	b.trailers = b.trailers[:0]
}

// readStream reads the body from the exchange, with MaxRequestBodySize.
func (b *bodyReader) readStream(p []byte) (int, error) {
	n, err, ok := b.beginStreamRead(p)
	if !ok {
		return n, err
	}
	n, err = b.c.ex.readBody(p)
	return b.endStreamRead(n, err)
}

// beginStreamRead makes Read's checks before a read from the exchange,
// whose answer n, err is when ok is false; else it sends 100 Continue on
// the first read when the client waits for it. The read itself touches
// nothing of b: the compat door makes it without holding its lock.
func (b *bodyReader) beginStreamRead(p []byte) (n int, err error, ok bool) {
	switch {
	case b.closed:
		return 0, ErrBodyReadAfterClose, false
	case b.err != nil:
		return 0, b.err, false
	case b.done:
		return 0, io.EOF, false
	case len(p) == 0:
		return 0, nil, false
	}
	if b.expect && !b.sent100 {
		b.sent100 = true
		b.c.ex.send100Continue()
	}
	return 0, nil, true
}

// endStreamRead accounts for what a read from the exchange returned: the
// body limit, the trailers at the end, a failure.
func (b *bodyReader) endStreamRead(n int, err error) (int, error) {
	ex := b.c.ex
	if overBodyLimit(b.limit, b.read+int64(n)) {
		return 0, b.tooLarge()
	}
	b.read += int64(n)
	switch err {
	case nil:
		return n, nil
	case io.EOF:
		b.trailers, b.tbuf = ex.appendTrailers(b.trailers[:0], b.tbuf)
		b.hitEOF()
		return n, io.EOF
	}
	return n, b.fail(err)
}

func (b *bodyReader) readFixed(p []byte) (int, error) {
	c := b.c
	if c.r == c.w {
		if err := b.wait(); err != nil {
			return 0, err
		}
		if len(p) >= directReadMin {
			// Large read: straight from the socket into p, no copy.
			n, err := c.nc.Read(p[:min(int64(len(p)), b.remaining)])
			if n == 0 {
				return 0, b.fail(err)
			}
			return b.gotFixed(n)
		}
		if err := c.fill(); err != nil {
			return 0, b.fail(err)
		}
	}
	n := copy(p, c.rbuf[c.r:c.r+int(min(int64(c.w-c.r), b.remaining))])
	c.r += n
	return b.gotFixed(n)
}

func (b *bodyReader) gotFixed(n int) (int, error) {
	b.remaining -= int64(n)
	b.read += int64(n)
	if b.remaining == 0 {
		b.hitEOF()
		return n, io.EOF
	}
	return n, nil
}

func (b *bodyReader) readChunked(p []byte) (int, error) {
	c := b.c
	for {
		if len(b.pending) > 0 {
			n := copy(p, b.pending)
			b.pending = b.pending[n:]
			return n, nil
		}
		if b.dec.Done() {
			b.hitEOF()
			return 0, io.EOF
		}
		if c.r < c.w {
			n, data, err := b.dec.Decode(c.rbuf[c.r:c.w])
			if err == nil {
				c.r += n
				if len(data) > 0 {
					if overBodyLimit(b.limit, b.read+int64(len(data))) {
						return 0, b.tooLarge()
					}
					b.read += int64(len(data))
					b.pending = data
				}
				continue
			}
			if err != h1.ErrNeedMore {
				return 0, b.fail(err)
			}
		}
		if err := b.wait(); err != nil {
			return 0, err
		}
		if err := c.fill(); err != nil {
			return 0, b.fail(err)
		}
	}
}

// wait prepares a read that will block on the network: 100 Continue if the
// client waits for it, pending responses out (so a pipelining client is not
// kept waiting), and the body deadline armed once per request.
func (b *bodyReader) wait() error {
	c := b.c
	if b.expect && !b.sent100 {
		b.sent100 = true
		if !c.ctx.resp.committed {
			c.wbuf = append(c.wbuf, "HTTP/1.1 100 Continue\r\n\r\n"...)
		}
	}
	if err := c.flush(); err != nil {
		return b.fail(err)
	}
	if !b.waited {
		b.waited = true
		if c.cfg.readBody > 0 {
			c.armRead(dlBody, c.cfg.readBody, false)
		} else {
			// Clear a header or idle deadline left from reading the head.
			c.armRead(dlNone, 0, false)
		}
	}
	return nil
}

func (b *bodyReader) hitEOF() {
	b.done = true
	b.c.ctx.bodyEOF()
}

// fail records a read error: the body can no longer be framed, so the
// connection closes after this response.
func (b *bodyReader) fail(err error) error {
	switch {
	case err == nil || err == io.EOF:
		err = io.ErrUnexpectedEOF
	case err == errBufferFull:
		err = h1.ErrChunkExtTooLarge
	}
	b.err = err
	if netx.DeadlineExceeded(err) {
		b.c.srv.statTimeout(timeoutBody)
	}
	b.c.closeAfter = true
	b.c.ctx.resp.close = true
	return err
}

func (b *bodyReader) tooLarge() error {
	b.fail(ErrBodyTooLarge)
	b.c.ctx.resp.bodyTooLarge = true
	return ErrBodyTooLarge
}

// undrainable reports, before the response is committed, whether an unread
// body will force the connection to close: the client still waits for 100
// Continue, or more is left than the server will drain.
func (b *bodyReader) undrainable() bool {
	if b.done {
		return false
	}
	if b.err != nil || b.expect && !b.sent100 {
		return true
	}
	return !b.chunked && b.remaining-int64(b.c.w-b.c.r) > DefaultMaxDrainBytes
}

// finishRequest runs after the handler: it reads and discards what is left
// of the body (bounded) so the next request can be parsed, or marks the
// connection to close.
func (b *bodyReader) finishRequest() {
	c := b.c
	defer func() { b.closed = true }()
	if b.done || c.closeAfter {
		return
	}
	if b.undrainable() {
		c.closeAfter = true
		return
	}
	// Discard into the response body buffer, free now that the response is
	// in wbuf.
	buf := c.ctx.resp.body[:cap(c.ctx.resp.body)]
	if len(buf) == 0 {
		buf = make([]byte, 4<<10)
	}
	if !b.waited && c.cfg.readBody <= 0 {
		// Do not let a silent client hold the connection: bound the drain
		// by the header timeout.
		b.waited = true
		c.armRead(dlBody, c.cfg.readHeader, false)
	}
	var total int64
	for total <= DefaultMaxDrainBytes {
		n, err := b.Read(buf)
		total += int64(n)
		if err == io.EOF {
			return
		}
		if err != nil {
			c.closeAfter = true
			return
		}
	}
	c.closeAfter = true
}
