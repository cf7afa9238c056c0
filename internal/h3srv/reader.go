package h3srv

import (
	"io"
	"sync/atomic"

	"github.com/riptide-http/riptide/h3"
	"github.com/riptide-http/riptide/quicx"
)

// reader reads frames from a stream through a small buffer: frame headers
// and varints from the buffer, payloads copied out of it or, once it is
// empty, read straight into the caller's slice.
type reader struct {
	r    quicx.ReceiveStream
	b    []byte
	i, n int            // b[i:n] is unread
	in   *atomic.Uint64 // counts the bytes read, when set (Config.BytesIn)
	// eof: the stream's Read returned io.EOF (quic-go returns it with the
	// last bytes): the stream's receive side is complete, and a later
	// Read returns io.EOF at once, whatever its deadline.
	eof bool
}

// fill reads more bytes after those unread, moving them to the front. It
// returns io.EOF at the stream's end.
func (r *reader) fill() error {
	if r.i > 0 {
		r.n = copy(r.b, r.b[r.i:r.n])
		r.i = 0
	}
	k, err := r.r.Read(r.b[r.n:])
	r.n += k
	if err == io.EOF {
		r.eof = true
	}
	if k > 0 {
		r.count(k)
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// varint reads one varint.
func (r *reader) varint() (uint64, error) {
	for {
		v, k, err := h3.ParseVarint(r.b[r.i:r.n])
		if err == nil {
			r.i += k
			return v, nil
		}
		if err := r.fill(); err != nil {
			return 0, eofIn(err, r.i < r.n)
		}
	}
}

// frameHeader reads a frame header: io.EOF at the stream's end between
// frames, io.ErrUnexpectedEOF within one.
func (r *reader) frameHeader() (h3.FrameHeader, error) {
	for {
		h, k, err := h3.ParseFrameHeader(r.b[r.i:r.n])
		if err == nil {
			r.i += k
			return h, nil
		}
		if err := r.fill(); err != nil {
			return h, eofIn(err, r.i < r.n)
		}
	}
}

// eofIn turns io.EOF into io.ErrUnexpectedEOF when bytes were pending.
func eofIn(err error, partial bool) error {
	if err == io.EOF && partial {
		return io.ErrUnexpectedEOF
	}
	return err
}

// read reads up to len(p) payload bytes: buffered ones first.
func (r *reader) read(p []byte) (int, error) {
	if r.i < r.n {
		k := copy(p, r.b[r.i:r.n])
		r.i += k
		return k, nil
	}
	k, err := r.r.Read(p)
	r.count(k)
	if err == io.EOF {
		r.eof = true
	}
	return k, err
}

// count adds k bytes read to the counter, if any.
func (r *reader) count(k int) {
	if r.in != nil && k > 0 {
		r.in.Add(uint64(k))
	}
}

// readFull reads exactly len(p) payload bytes; io.ErrUnexpectedEOF if the
// stream ends first.
func (r *reader) readFull(p []byte) error {
	for len(p) > 0 {
		k, err := r.read(p)
		p = p[k:]
		if k == 0 && err != nil {
			return eofIn(err, true)
		}
	}
	return nil
}

// skip discards n payload bytes.
func (r *reader) skip(n uint64) error {
	for n > 0 {
		if r.i == r.n {
			r.i, r.n = 0, 0
			if err := r.fill(); err != nil {
				return eofIn(err, true)
			}
		}
		k := min(n, uint64(r.n-r.i))
		r.i += int(k)
		n -= k
	}
	return nil
}
