package client

import (
	"io"

	"github.com/riptide-http/riptide/h1"
)

// trailerSink receives the trailer fields of a chunked body; the fields are
// slices into the connection buffer, valid only during the call.
type trailerSink interface {
	setTrailers([]h1.Header)
}

// bodyReader streams one response body off a connection. It frames the
// body (Content-Length, chunked, until close), enforces the size limit, and
// hands the connection back when the body ends. It reads from the network
// only when its caller asks for more bytes, so a slow reader slows the
// server down (TCP backpressure) instead of buffering.
type bodyReader struct {
	c    *conn
	h2   *h2Stream // an HTTP/2 response's stream (then c is nil)
	h3   HTTP3Body // an HTTP/3 response's body (then c is nil)
	mode h1.BodyMode
	left int64  // BodyLength: bytes still to come
	pend []byte // chunked: decoded bytes not yet delivered (in c.rbuf)
	n    int64  // bytes delivered so far
	max  int64  // limit on n; 0: none
	sink trailerSink
	keep bool // connection may be reused after the body
	done bool // body fully read (or closed); c released
	err  error
}

// init prepares b to read a body of the given mode from c.
func (b *bodyReader) init(c *conn, mode h1.BodyMode, length int64, max int64, keep bool, sink trailerSink) {
	*b = bodyReader{c: c, mode: mode, left: length, max: max, keep: keep, sink: sink}
	if mode == h1.BodyChunked {
		c.dec.Reset()
	}
	if mode == h1.BodyNone {
		b.finish(nil)
	}
}

// Read reads body bytes into p. It returns io.EOF at the end of the body,
// and at once when b holds no body (a Response never given a streamed one).
func (b *bodyReader) Read(p []byte) (int, error) {
	if b.h2 != nil {
		return b.readH2(p)
	}
	if b.h3 != nil {
		return b.readH3(p)
	}
	if b.c == nil {
		return 0, io.EOF
	}
	if b.done || len(p) == 0 {
		return b.ended()
	}
	var n int
	var err error
	switch b.mode {
	case h1.BodyLength:
		n, err = b.readLength(p)
	case h1.BodyChunked:
		n, err = b.readChunked(p)
	default:
		n, err = b.readUntilClose(p)
	}
	b.n += int64(n)
	if b.max > 0 && b.n > b.max {
		b.keep = false
		b.finish(ErrBodyTooLarge)
		return 0, ErrBodyTooLarge
	}
	if err != nil {
		if err == io.EOF {
			b.finish(nil)
		} else {
			b.keep = false
			b.finish(err)
		}
	}
	return n, err
}

func (b *bodyReader) readLength(p []byte) (int, error) {
	c := b.c
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	var n int
	if c.r == c.w && len(p) < len(c.rbuf) {
		// Small reads go through the buffer, so that a caller reading in
		// small pieces does not cost a system call each.
		if err := c.fill(); err != nil {
			return 0, c.readErr(err, true)
		}
	}
	if c.r < c.w {
		n = copy(p, c.rbuf[c.r:c.w])
		c.r += n
	} else {
		// Nothing buffered and a large p: read straight into it, saving a
		// copy through the connection buffer.
		var err error
		n, err = c.nc.Read(p)
		if n == 0 && err != nil {
			return 0, c.readErr(err, true)
		}
	}
	b.left -= int64(n)
	if b.left == 0 {
		return n, io.EOF
	}
	return n, nil
}

func (b *bodyReader) readChunked(p []byte) (int, error) {
	c := b.c
	for len(b.pend) == 0 {
		if c.dec.Done() {
			return 0, io.EOF
		}
		if c.r == c.w {
			if err := c.fill(); err != nil {
				return 0, c.readErr(err, true)
			}
		}
		n, data, err := c.dec.Decode(c.rbuf[c.r:c.w])
		if err == h1.ErrNeedMore {
			if err := c.fill(); err != nil {
				return 0, c.readErr(err, true)
			}
			continue
		}
		if err != nil {
			return 0, err
		}
		c.r += n
		b.pend = data
		if c.dec.Done() && b.sink != nil && len(c.dec.Trailers) > 0 {
			b.sink.setTrailers(c.dec.Trailers)
		}
	}
	n := copy(p, b.pend)
	b.pend = b.pend[n:]
	if len(b.pend) == 0 && c.dec.Done() {
		return n, io.EOF
	}
	return n, nil
}

func (b *bodyReader) readUntilClose(p []byte) (int, error) {
	n, err := b.c.read(p)
	if err == io.EOF {
		return n, io.EOF
	}
	if err != nil && n == 0 {
		return 0, b.c.readErr(err, true)
	}
	return n, nil
}

// ended is Read's result after the body ended, or for an empty p.
func (b *bodyReader) ended() (int, error) {
	switch {
	case !b.done:
		return 0, nil
	case b.err != nil:
		return 0, b.err
	}
	return 0, io.EOF
}

// Close ends the body. A body read to its end has already released its
// connection; otherwise the connection is closed, unless the rest of the
// body is already buffered, in which case it is skipped and the connection
// reused.
func (b *bodyReader) Close() error {
	if b.h2 != nil {
		b.finishH2(errBodyClosed)
		return nil
	}
	if b.h3 != nil {
		b.finishH3(errBodyClosed)
		return nil
	}
	if b.done || b.c == nil {
		return nil
	}
	if b.mode == h1.BodyLength && int64(b.c.w-b.c.r) >= b.left {
		b.c.r += int(b.left)
		b.left = 0
		b.finish(nil)
		return nil
	}
	b.keep = false
	b.finish(errBodyClosed)
	return nil
}

var errBodyClosed = errorString("client: read on closed response body")

type errorString string

func (e errorString) Error() string { return string(e) }

// finish releases the connection once, recording err for later reads.
func (b *bodyReader) finish(err error) {
	if b.done {
		return
	}
	b.done, b.err = true, err
	b.pend = nil
	c := b.c
	if c == nil {
		return
	}
	// Bytes left over after the body are unsolicited, except on a pipelined
	// connection, where they begin the next response.
	if b.keep && err == nil && (c.r == c.w || c.pipe != nil) {
		c.release()
	} else {
		c.discard()
	}
}

// maxPresize bounds how much room readAll makes up front for a declared
// Content-Length: the length is the peer's claim, so a larger body grows
// the buffer as its bytes actually arrive.
const maxPresize = 64 << 10

// readAll reads the rest of the body into dst, growing it, and returns it.
func (b *bodyReader) readAll(dst []byte) ([]byte, error) {
	if b.mode == h1.BodyLength && b.left > 0 {
		if b.max > 0 && b.left > b.max-b.n {
			b.keep = false
			b.finish(ErrBodyTooLarge)
			return dst, ErrBodyTooLarge
		}
		dst = grow(dst, int(min(b.left, maxPresize)))
	}
	for {
		if len(dst) == cap(dst) {
			dst = grow(dst, 4096)
		}
		n, err := b.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// grow makes room for at least n more bytes after len(b).
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	nb := make([]byte, len(b), 2*cap(b)+n)
	copy(nb, b)
	return nb
}
