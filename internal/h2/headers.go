package h2

// Header blocks of the HTTP/2 connection: HEADERS and CONTINUATION
// frames are read without the Framer's per-frame allocations and their
// fragments decoded as they arrive, by one HPACK decoder per connection
// into a field slice reused for every block. Decoding applies the header
// list limit (SETTINGS_MAX_HEADER_LIST_SIZE: beyond it the request is
// answered 431), refuses malformed fields (RFC 9113 §8.2), and ends a
// connection whose block keeps growing far past the limit (the
// CONTINUATION flood).

import (
	"io"
	"strings"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/ascii"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Block is the header block being received. It is reused for every
// block of the connection and only touched by the connection's goroutine
// (onHeaders copies what a stream keeps).
type h2Block struct {
	id          uint32
	endStream   bool
	hasPriority bool
	dep         uint32
	fields      []hpack.HeaderField // pseudo-header fields first
	nPseudo     int
	remain      uint32 // header list bytes still allowed
	truncated   bool   // the list went over the limit: answer 431
	invalid     bool   // a malformed field: stream error
	sawRegular  bool
}

// pseudo and regular return the block's fields by kind.
func (b *h2Block) pseudo() []hpack.HeaderField  { return b.fields[:b.nPseudo] }
func (b *h2Block) regular() []hpack.HeaderField { return b.fields[b.nPseudo:] }

// initHeaders sets up the connection's HPACK decoder; its emit function is
// bound once, so decoding allocates nothing but literal strings.
func (hc *Conn) initHeaders() {
	hc.hdec = hpack.NewDecoder(h2HeaderTableSize, hc.emitField)
	hc.hdec.SetMaxStringLength(int(hc.headerListSize()))
	// hpayload is sized on the first header frame (readHeaderFrame): an
	// idle connection does not keep a 16 KiB buffer it never needed.
}

// readHeaderFrame reads the payload of a HEADERS or CONTINUATION frame
// (the Framer checked its size and order) and decodes its fragment; at the
// end of the block the request is handled. It reports whether the
// connection goes on.
func (hc *Conn) readHeaderFrame(fh http2.FrameHeader) bool {
	if cap(hc.hpayload) < int(fh.Length) {
		// At least 1 KiB, so that growing header blocks do not allocate
		// at every frame; HEADERS of real requests rarely need more.
		hc.hpayload = make([]byte, max(int(fh.Length), 1<<10))
	}
	p := hc.hpayload[:fh.Length]
	if _, err := io.ReadFull(&hc.br, p); err != nil {
		return false
	}
	hc.frameRead()
	if fh.StreamID == 0 {
		hc.connError(http2.ErrCodeProtocol)
		return false
	}
	b := &hc.block
	if fh.Type == http2.FrameHeaders {
		frag, ok := hc.startBlock(fh, p)
		if !ok {
			hc.connError(http2.ErrCodeProtocol)
			return false
		}
		p = frag
	}
	// Far more block than the limit allows, or more after a malformed
	// field: end the connection rather than decode it (as x/net does).
	if int64(len(p)) > 2*int64(b.remain) || b.invalid && fh.Type == http2.FrameContinuation {
		hc.connError(http2.ErrCodeProtocol)
		return false
	}
	if _, err := hc.hdec.Write(p); err != nil {
		hc.connError(http2.ErrCodeCompression)
		return false
	}
	if !fh.Flags.Has(http2.FlagHeadersEndHeaders) {
		return true
	}
	if err := hc.hdec.Close(); err != nil {
		hc.connError(http2.ErrCodeCompression)
		return false
	}
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if hc.dead {
		return false
	}
	var err error
	if b.invalid {
		if b.id > hc.maxID && hc.streams[b.id] == nil {
			hc.maxID = b.id // the stream was opened, and is closed
		}
		err = http2.StreamError{StreamID: b.id, Code: http2.ErrCodeProtocol}
	} else {
		err = hc.onHeaders(b)
	}
	clear(b.fields) // drop the strings
	return hc.handleError(err)
}

// startBlock begins a block from a HEADERS frame payload: padding and
// priority are taken off, and the fragment returned.
func (hc *Conn) startBlock(fh http2.FrameHeader, p []byte) ([]byte, bool) {
	b := &hc.block
	b.id, b.endStream = fh.StreamID, fh.Flags.Has(http2.FlagHeadersEndStream)
	b.fields, b.nPseudo = b.fields[:0], 0
	b.remain = hc.headerListSize()
	b.truncated, b.invalid, b.sawRegular, b.hasPriority = false, false, false, false
	hc.hdec.SetEmitEnabled(true)
	pad := 0
	if fh.Flags.Has(http2.FlagHeadersPadded) {
		if len(p) < 1 {
			return nil, false
		}
		pad, p = int(p[0]), p[1:]
	}
	if fh.Flags.Has(http2.FlagHeadersPriority) {
		if len(p) < 5 {
			return nil, false
		}
		b.hasPriority = true
		b.dep = (uint32(p[0])<<24 | uint32(p[1])<<16 | uint32(p[2])<<8 | uint32(p[3])) & 0x7fffffff
		p = p[5:]
	}
	if pad > len(p) {
		return nil, false
	}
	return p[:len(p)-pad], true
}

// emitField takes one decoded field (the HPACK decoder's emit function).
func (hc *Conn) emitField(f hpack.HeaderField) {
	b := &hc.block
	switch {
	case !h1.ValidHeaderValue(f.Value):
		// No NUL, CR, LF (RFC 9113 §8.2.1) nor other controls but
		// HTAB, as for HTTP/1.1 (RFC 9110 §5.5) and net/http.
		b.invalid = true
	case strings.HasPrefix(f.Name, ":"):
		b.invalid = b.invalid || b.sawRegular
	default:
		b.sawRegular = true
		b.invalid = b.invalid || !h1.ValidHeaderName(f.Name) || !ascii.IsLower(f.Name)
	}
	if b.invalid {
		hc.hdec.SetEmitEnabled(false)
		return
	}
	if size := f.Size(); size > b.remain {
		b.truncated, b.remain = true, 0
		hc.hdec.SetEmitEnabled(false)
		return
	} else {
		b.remain -= size
	}
	b.fields = append(b.fields, f)
	if !b.sawRegular {
		b.nPseudo++
	}
}
