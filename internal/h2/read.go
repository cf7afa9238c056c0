package h2

import (
	"io"
	"sync"
)

// h2ReadBuf buffers an HTTP/2 connection's socket reads for the frame
// reader (frame.go).
// Unlike a bufio.Reader it does not hold 16 KiB for the connection's life:
// it reads into a small buffer (the connection's, lent while it is served:
// see park.go), and takes a large pooled one
// only while the client sends more than that fits (request bodies); the
// large one goes back to the pool as soon as a read does not fill it and
// it is drained, so an idle connection waits on the small one. It refills
// only when empty, so what it holds is always contiguous.
type h2ReadBuf struct {
	r        io.Reader
	buf      []byte // small[:] or big[:]
	off, end int    // unread: buf[off:end]
	full     bool   // the last read filled buf: more is probably waiting
	big      *[h2ReadBigSize]byte
	small    []byte // h2ReadSmallSize bytes; nil while parked (park.go)
	// idle: the reader waits for the first byte of a frame, none of it
	// read (readLoop sets it, a read that returns bytes clears it): only
	// then may the connection park.
	idle bool
}

const (
	// h2ReadSmallSize holds a burst of request HEADERS (10 GET requests
	// with indexed fields take a few hundred bytes) and control frames.
	h2ReadSmallSize = 1 << 10
	h2ReadBigSize   = 16 << 10
)

var h2ReadBigPool = sync.Pool{New: func() any { return new([h2ReadBigSize]byte) }}

func (b *h2ReadBuf) init(r io.Reader) {
	b.r = r
	if b.small == nil {
		b.small = make([]byte, h2ReadSmallSize)
	}
	b.buf = b.small
}

// lend gives the empty buffer its small one back (after a park).
func (b *h2ReadBuf) lend(small []byte) {
	b.small, b.buf, b.off, b.end, b.full = small, small, 0, 0, false
}

// Buffered reports how many bytes can be read without reading the socket.
func (b *h2ReadBuf) Buffered() int { return b.end - b.off }

// peek returns the next n buffered bytes, or nil if fewer are buffered.
func (b *h2ReadBuf) peek(n int) []byte {
	if b.end-b.off < n {
		return nil
	}
	return b.buf[b.off : b.off+n]
}

// next returns the next n buffered bytes and consumes them, or nil if
// fewer are buffered. They stay valid until the next read.
func (b *h2ReadBuf) next(n int) []byte {
	if b.end-b.off < n {
		return nil
	}
	p := b.buf[b.off : b.off+n : b.off+n]
	b.off += n
	return p
}

func (b *h2ReadBuf) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if b.off == b.end {
		b.pick()
		if len(p) >= len(b.buf) {
			// As large as the buffer: read straight into p.
			n, err := b.r.Read(p)
			b.full = n == len(p)
			b.idle = b.idle && n == 0
			return n, err
		}
		if err := b.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, b.buf[b.off:b.end])
	b.off += n
	return n, nil
}

// pick chooses the buffer for the next read of an empty h2ReadBuf: the
// large one after a read that filled its buffer, the small one otherwise.
func (b *h2ReadBuf) pick() {
	b.off, b.end = 0, 0
	switch {
	case b.full && b.big == nil:
		b.big = h2ReadBigPool.Get().(*[h2ReadBigSize]byte)
		b.buf = b.big[:]
	case !b.full && b.big != nil:
		h2ReadBigPool.Put(b.big)
		b.big = nil
		b.buf = b.small
	}
}

// fill reads into the empty buffer.
func (b *h2ReadBuf) fill() error {
	for range 100 {
		n, err := b.r.Read(b.buf)
		b.end = n
		b.full = n == len(b.buf)
		if n > 0 {
			b.idle = false
			return nil
		}
		if err != nil {
			return err
		}
	}
	return io.ErrNoProgress
}

// release returns the large buffer, if any, and lets go of the small
// one (the caller's: park.go): the connection is over or parks, with
// nothing buffered.
func (b *h2ReadBuf) release() {
	if b.big != nil {
		h2ReadBigPool.Put(b.big)
		b.big = nil
	}
	b.buf, b.small, b.off, b.end, b.full = nil, nil, 0, 0, false
}
