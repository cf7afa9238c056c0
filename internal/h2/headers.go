package h2

// Header blocks of the HTTP/2 connection: the fragments of HEADERS and
// CONTINUATION frames (read and checked by frame.go) are decoded as they
// arrive, by one HPACK decoder per connection
// into a field slice reused for every block. Decoding applies the header
// list limit (SETTINGS_MAX_HEADER_LIST_SIZE: beyond it the request is
// answered 431), refuses malformed fields (RFC 9113 §8.2), and ends a
// connection whose block keeps growing far past the limit (the
// CONTINUATION flood).

import (
	"strings"
	"unsafe"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/ascii"
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
	// checked holds, by position in the block, the last field found
	// valid there (emitField). A client's later requests mostly refer to
	// the HPACK table, whose fields the decoder emits as the same strings
	// each time: a field whose name and value are those very strings
	// (same bytes in memory, held alive here, so unchanged) is not
	// checked again. At most len(checked) fields of at most
	// h2CheckedMax bytes are kept (4 KiB).
	checked [16]hpack.HeaderField
}

// pseudo and regular return the block's fields by kind.
func (b *h2Block) pseudo() []hpack.HeaderField  { return b.fields[:b.nPseudo] }
func (b *h2Block) regular() []hpack.HeaderField { return b.fields[b.nPseudo:] }

// initHeaders sets up the connection's HPACK decoder; its emit function is
// bound once, so decoding allocates nothing but literal strings.
func (hc *Conn) initHeaders() {
	hc.hdec = hpack.NewDecoder(h2HeaderTableSize, hc.emitField)
	hc.hdec.SetMaxStringLength(int(hc.headerListSize()))
}

// readHeaderFrame decodes the fragment of a HEADERS or CONTINUATION
// frame (the frame reader checked its size, order and layout); at the end
// of the block the request is handled. It reports whether the connection
// goes on.
func (hc *Conn) readHeaderFrame(f *frame) bool {
	b := hc.block
	p := f.data
	if f.Type == FrameHeaders {
		hc.startBlock(f)
	}
	// Far more block than the limit allows, or more after a malformed
	// field: end the connection rather than decode it (as x/net does).
	if int64(len(p)) > 2*int64(b.remain) || b.invalid && f.Type == FrameContinuation {
		hc.connError(ErrCodeProtocol)
		return false
	}
	if _, err := hc.hdec.Write(p); err != nil {
		hc.connError(ErrCodeCompression)
		return false
	}
	if !f.Flags.Has(FlagEndHeaders) {
		return true
	}
	if err := hc.hdec.Close(); err != nil {
		hc.connError(ErrCodeCompression)
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
		err = streamError{b.id, ErrCodeProtocol}
	} else {
		err = hc.onHeaders(b)
	}
	clear(b.fields) // drop the strings
	return hc.handleError(err)
}

// startBlock begins a block from a HEADERS frame.
func (hc *Conn) startBlock(f *frame) {
	b := hc.block
	b.id, b.endStream = f.StreamID, f.endStream
	b.fields, b.nPseudo = b.fields[:0], 0
	b.remain = hc.headerListSize()
	b.truncated, b.invalid, b.sawRegular = false, false, false
	b.hasPriority, b.dep = f.hasPriority, f.dep
	hc.hdec.SetEmitEnabled(true)
}

// emitField takes one decoded field (the HPACK decoder's emit function).
func (hc *Conn) emitField(f hpack.HeaderField) {
	b := hc.block
	i := len(b.fields)
	pseudo := strings.HasPrefix(f.Name, ":")
	switch {
	case i < len(b.checked) && f.Name != "" && sameString(b.checked[i].Name, f.Name) && sameString(b.checked[i].Value, f.Value):
		// Checked already (a field of the HPACK table): only its order.
		if pseudo {
			b.invalid = b.invalid || b.sawRegular
		} else {
			b.sawRegular = true
		}
	case !h1.ValidHeaderValue(f.Value):
		// No NUL, CR, LF (RFC 9113 §8.2.1) nor other controls but
		// HTAB, as for HTTP/1.1 (RFC 9110 §5.5) and net/http.
		b.invalid = true
	case pseudo:
		b.invalid = b.invalid || b.sawRegular
		b.keepChecked(i, f)
	default:
		b.sawRegular = true
		if !h1.ValidHeaderName(f.Name) || !ascii.IsLower(f.Name) {
			b.invalid = true
		} else {
			b.keepChecked(i, f)
		}
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

// h2CheckedMax is the largest field (name and value) h2Block.checked
// keeps.
const h2CheckedMax = 256

// keepChecked records f, found valid, as the field checked at position i
// of a block.
func (b *h2Block) keepChecked(i int, f hpack.HeaderField) {
	if i < len(b.checked) && len(f.Name)+len(f.Value) <= h2CheckedMax {
		b.checked[i] = hpack.HeaderField{Name: f.Name, Value: f.Value}
	}
}

// sameString reports whether a and b are the same bytes in memory.
func sameString(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}
