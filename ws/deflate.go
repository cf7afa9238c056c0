package ws

import (
	"bytes"
	"compress/flate"
	"errors"
	"io"
	"sync"
)

// windowSize is DEFLATE's largest window: what a decompressor keeps of
// earlier messages under context takeover.
const windowSize = 32 << 10

// deflateTail ends every compressed message on the wire: the empty stored
// block of a sync flush, which RFC 7692 removes before sending.
var deflateTail = [4]byte{0x00, 0x00, 0xff, 0xff}

// inflateTail is what an inflater feeds after a message: the removed sync
// flush tail and a final empty stored block, so that the decompressor ends
// with io.EOF at the message's end.
var inflateTail = [...]byte{0x00, 0x00, 0xff, 0xff, 0x01, 0x00, 0x00, 0xff, 0xff}

// CompressionLevel is the compress/flate level compressors use.
const CompressionLevel = flate.BestSpeed

// Pooled compressors: LZ77 at CompressionLevel, and Huffman-only.
var writerPool, huffPool sync.Pool // *flate.Writer

// sliceWriter appends to b.
type sliceWriter struct{ b []byte }

func (w *sliceWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// Compressor compresses messages for permessage-deflate. Takeover keeps the
// compression context between messages (the compressor stays with its
// Compressor); without it, each message borrows a pooled compressor. The
// zero value compresses without takeover.
//
// HuffmanOnly compresses without LZ77 back-references (flate.HuffmanOnly):
// the output refers to no earlier byte, so it honours any
// server_max_window_bits (8 to 15) a peer asks for, which compress/flate's
// LZ77 levels, always using a 32 KiB window, cannot.
type Compressor struct {
	Takeover    bool
	HuffmanOnly bool
	fw          *flate.Writer
	out         sliceWriter
}

func (c *Compressor) pool() *sync.Pool {
	if c.HuffmanOnly {
		return &huffPool
	}
	return &writerPool
}

// Begin starts a message whose compressed bytes are appended to dst.
func (c *Compressor) Begin(dst []byte) {
	c.out.b = dst
	if c.fw == nil {
		if w, ok := c.pool().Get().(*flate.Writer); ok {
			c.fw = w
			c.fw.Reset(&c.out)
		} else {
			level := CompressionLevel
			if c.HuffmanOnly {
				level = flate.HuffmanOnly
			}
			c.fw, _ = flate.NewWriter(&c.out, level)
		}
	}
}

// Write compresses p, the next bytes of the message.
func (c *Compressor) Write(p []byte) (int, error) { return c.fw.Write(p) }

// Buffered returns the compressed bytes produced so far and not yet taken.
// A caller streaming a message in frames may send all but the last four
// (which may be the start of the tail Finish removes) and Drop them.
func (c *Compressor) Buffered() []byte { return c.out.b }

// Drop forgets the first n buffered bytes (those the caller has sent).
func (c *Compressor) Drop(n int) {
	c.out.b = c.out.b[:copy(c.out.b, c.out.b[n:])]
}

// Finish ends the message and returns the rest of its compressed bytes
// (the buffer Begin was given, appended to), without the sync flush tail.
func (c *Compressor) Finish() ([]byte, error) {
	if err := c.fw.Flush(); err != nil {
		return c.out.b, err
	}
	b := c.out.b
	if !bytes.HasSuffix(b, deflateTail[:]) {
		return b, errors.New("websocket: compressor output lacks the sync flush tail")
	}
	b = b[:len(b)-4]
	c.out.b = nil
	if !c.Takeover {
		c.Release()
	}
	return b, nil
}

// Compress appends the compressed form of message p to dst.
func (c *Compressor) Compress(dst, p []byte) ([]byte, error) {
	c.Begin(dst)
	if _, err := c.fw.Write(p); err != nil {
		return dst, err
	}
	return c.Finish()
}

// Release returns the compressor to the pool; the next message starts a
// fresh context. Call it when the connection ends.
func (c *Compressor) Release() {
	if c.fw != nil {
		c.fw.Reset(io.Discard)
		c.pool().Put(c.fw)
		c.fw = nil
	}
	c.out.b = nil
}

// inflateState is what one message's decompression borrows from a pool: a
// flate reader and the byte source that feeds it.
type inflateState struct {
	fr  io.ReadCloser
	src tailSource
}

var inflatePool sync.Pool // *inflateState

// tailSource reads a compressed message from r and then inflateTail, byte
// by byte from a small buffer (flate reads through io.ByteReader; without it
// flate would allocate a bufio.Reader per message).
type tailSource struct {
	r       io.Reader
	buf     [1024]byte
	i, n    int
	tail    int // bytes of inflateTail given, once r is done
	drained bool
}

func (s *tailSource) reset(r io.Reader) {
	s.r, s.i, s.n, s.tail, s.drained = r, 0, 0, 0, false
}

func (s *tailSource) fill() error {
	if !s.drained {
		n, err := s.r.Read(s.buf[:])
		s.i, s.n = 0, n
		if err == io.EOF {
			s.drained = true
			err = nil
		}
		if n > 0 || err != nil {
			return err
		}
		if !s.drained {
			return nil
		}
	}
	if s.tail < len(inflateTail) {
		s.n = copy(s.buf[:], inflateTail[s.tail:])
		s.i = 0
		s.tail += s.n
		return nil
	}
	return io.EOF
}

func (s *tailSource) ReadByte() (byte, error) {
	for s.i >= s.n {
		if err := s.fill(); err != nil {
			return 0, err
		}
	}
	c := s.buf[s.i]
	s.i++
	return c, nil
}

func (s *tailSource) Read(p []byte) (int, error) {
	for s.i >= s.n {
		if err := s.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, s.buf[s.i:s.n])
	s.i += n
	return n, nil
}

// Inflater decompresses permessage-deflate messages. Takeover keeps the
// last 32 KiB of output as the next message's dictionary (the peer keeps its
// context); the decompressor itself is borrowed from a pool for each
// message. The zero value inflates without takeover.
type Inflater struct {
	Takeover bool
	st       *inflateState
	window   []byte
	whole    bytes.Reader
}

var errInflate = &Error{CloseInvalidPayload, "invalid compressed data"}

// Begin starts a message whose compressed payload Read draws from r until
// r returns io.EOF.
func (f *Inflater) Begin(r io.Reader) {
	if f.st == nil {
		if st, ok := inflatePool.Get().(*inflateState); ok {
			f.st = st
		} else {
			f.st = &inflateState{}
		}
	}
	f.st.src.reset(r)
	if f.st.fr == nil {
		f.st.fr = flate.NewReader(&f.st.src)
	}
	var dict []byte
	if f.Takeover {
		dict = f.window
	}
	_ = f.st.fr.(flate.Resetter).Reset(&f.st.src, dict)
}

// Read reads the message's next decompressed bytes; io.EOF ends the
// message. Corrupt data is an *Error with CloseInvalidPayload.
func (f *Inflater) Read(p []byte) (int, error) {
	n, err := f.st.fr.Read(p)
	if f.Takeover && n > 0 {
		f.remember(p[:n])
	}
	if err == io.EOF {
		if !f.st.src.drained || f.st.src.tail < len(inflateTail) {
			// A final block before the message's end.
			return n, errInflate
		}
		f.End()
		return n, io.EOF
	}
	if err != nil {
		var ce flate.CorruptInputError
		if errors.As(err, &ce) || err == io.ErrUnexpectedEOF {
			err = errInflate
		}
		f.End()
	}
	return n, err
}

// End returns the borrowed decompressor to the pool (Read does this at the
// end of the message; call End when abandoning a message).
func (f *Inflater) End() {
	if f.st != nil {
		f.st.src.reset(nil)
		inflatePool.Put(f.st)
		f.st = nil
	}
}

// remember appends p to the takeover window, keeping its last 32 KiB.
func (f *Inflater) remember(p []byte) {
	if len(p) >= windowSize {
		f.window = append(f.window[:0], p[len(p)-windowSize:]...)
		return
	}
	if f.window == nil {
		f.window = make([]byte, 0, windowSize)
	}
	if over := len(f.window) + len(p) - windowSize; over > 0 {
		f.window = f.window[:copy(f.window, f.window[over:])]
	}
	f.window = append(f.window, p...)
}

// Inflate appends the decompressed form of message msg (a whole compressed
// payload) to dst, failing with ErrMessageTooBig once the output would pass
// limit bytes (0: no limit).
func (f *Inflater) Inflate(dst, msg []byte, limit int64) ([]byte, error) {
	f.whole.Reset(msg)
	f.Begin(&f.whole)
	defer f.End()
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		room := dst[len(dst):cap(dst)]
		if limit > 0 {
			left := limit - int64(len(dst)) + 1 // one byte over shows the overrun
			if int64(len(room)) > left {
				room = room[:left]
			}
		}
		n, err := f.Read(room)
		dst = dst[:len(dst)+n]
		if limit > 0 && int64(len(dst)) > limit {
			return dst, ErrMessageTooBig
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}
