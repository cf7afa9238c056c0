package h2

import (
	"io"
	"sync"
)

// h2ReadBuf buffers an HTTP/2 connection's socket reads for the frame
// reader (frame.go).
// Unlike a bufio.Reader it does not hold 16 KiB for the connection's life:
// it reads into a small buffer of its own, and takes a large pooled one
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
	small    [h2ReadSmallSize]byte
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
	b.buf = b.small[:]
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
		b.buf = b.small[:]
	}
}

// fill reads into the empty buffer.
func (b *h2ReadBuf) fill() error {
	for range 100 {
		n, err := b.r.Read(b.buf)
		b.end = n
		b.full = n == len(b.buf)
		if n > 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return io.ErrNoProgress
}

// release returns the large buffer, if any, for good: the connection is
// over.
func (b *h2ReadBuf) release() {
	if b.big != nil {
		h2ReadBigPool.Put(b.big)
		b.big = nil
	}
	b.buf, b.off, b.end = nil, 0, 0
}
