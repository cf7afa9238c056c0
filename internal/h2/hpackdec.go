package h2

// An HPACK decoder (RFC 7541) for the client role that allocates nothing
// per header block: golang.org/x/net/http2/hpack's Decoder makes a string
// of every literal it decodes (a Content-Length, a Date), which costs a
// response an allocation or more. Here literals are decoded into a buffer
// the decoder reuses and handed out as byte slices; only the fields added
// to the dynamic table are copied into strings it keeps (once per new
// value, not per response that refers to it). Huffman codes are undone by
// hpack.HuffmanDecode (pooled buffer).

import (
	"unsafe"

	"golang.org/x/net/http2/hpack"
)

// HeaderDecoder decodes the header blocks of one connection.
type HeaderDecoder struct {
	max     int // the table size this side allows (SETTINGS_HEADER_TABLE_SIZE)
	cap     int // the table size the peer chose, at most max
	size    int // the table's size as RFC 7541 §4.1 counts it
	ents    []hdEntry
	buf     []byte
	maxStr  int
	scratch appendBuf
}

type hdEntry struct{ name, value string }

type appendBuf struct{ b []byte }

func (w *appendBuf) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// errHpack is a malformed header block: a COMPRESSION_ERROR of the
// connection (RFC 9113 §4.3).
var errHpack = connError(ErrCodeCompression)

// NewHeaderDecoder returns a decoder whose dynamic table holds at most
// tableSize bytes and whose strings are at most maxString bytes long.
func NewHeaderDecoder(tableSize, maxString int) *HeaderDecoder {
	return &HeaderDecoder{max: tableSize, cap: tableSize, maxStr: maxString}
}

// Decode decodes a whole header block, calling emit with each field in
// order. The slices passed to emit are valid only during the call and must
// not be modified. Errors are connection errors of type COMPRESSION_ERROR
// (see ErrorCode).
func (d *HeaderDecoder) Decode(block []byte, emit func(name, value []byte)) error {
	sawField := false
	for len(block) > 0 {
		b := block[0]
		switch {
		case b&0x80 != 0: // indexed field (§6.1)
			idx, rest, err := readInt(block, 7)
			if err != nil {
				return err
			}
			block = rest
			name, value, ok := d.at(idx)
			if !ok {
				return errHpack
			}
			emit(sb(name), sb(value))
			sawField = true
		case b&0xe0 == 0x20: // dynamic table size update (§6.3)
			n, rest, err := readInt(block, 5)
			if err != nil {
				return err
			}
			if sawField || n > uint64(d.max) {
				return errHpack
			}
			block = rest
			d.cap = int(n)
			d.evict(0)
		default: // literal (§6.2): with indexing (01), without (0000), never (0001)
			indexing := b&0xc0 == 0x40
			prefix := 4
			if indexing {
				prefix = 6
			}
			idx, rest, err := readInt(block, uint8(prefix))
			if err != nil {
				return err
			}
			block = rest
			d.buf = d.buf[:0]
			var nameLen int
			if idx == 0 {
				if block, err = d.readString(block); err != nil {
					return err
				}
				nameLen = len(d.buf)
			} else {
				name, _, ok := d.at(idx)
				if !ok {
					return errHpack
				}
				d.buf = append(d.buf, name...)
				nameLen = len(name)
			}
			if block, err = d.readString(block); err != nil {
				return err
			}
			name, value := d.buf[:nameLen], d.buf[nameLen:]
			if indexing {
				d.add(string(name), string(value))
			}
			emit(name, value)
			sawField = true
		}
	}
	return nil
}

// sb is a string's bytes, not to be modified.
func sb(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// readInt reads an integer with an n-bit prefix (§5.1), bounded to fit
// any length or index a block can use.
func readInt(p []byte, n uint8) (uint64, []byte, error) {
	mask := uint64(1)<<n - 1
	v := uint64(p[0]) & mask
	p = p[1:]
	if v < mask {
		return v, p, nil
	}
	for shift := uint(0); len(p) > 0; shift += 7 {
		if shift > 28 {
			return 0, nil, errHpack
		}
		c := p[0]
		p = p[1:]
		v += uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, p, nil
		}
	}
	return 0, nil, errHpack
}

// readString appends the string at the start of p (§5.2) to d.buf.
func (d *HeaderDecoder) readString(p []byte) ([]byte, error) {
	if len(p) == 0 {
		return nil, errHpack
	}
	huff := p[0]&0x80 != 0
	n, p, err := readInt(p, 7)
	if err != nil {
		return nil, err
	}
	if n > uint64(len(p)) || n > uint64(d.maxStr) {
		return nil, errHpack
	}
	s := p[:n]
	if !huff {
		d.buf = append(d.buf, s...)
		return p[n:], nil
	}
	d.scratch.b = d.buf
	if _, err := hpack.HuffmanDecode(&d.scratch, s); err != nil {
		return nil, errHpack
	}
	d.buf = d.scratch.b
	d.scratch.b = nil
	if len(d.buf) > 2*d.maxStr {
		return nil, errHpack
	}
	return p[n:], nil
}

// at returns the field at index idx of the static and dynamic tables.
func (d *HeaderDecoder) at(idx uint64) (name, value string, ok bool) {
	switch {
	case idx == 0:
		return "", "", false
	case idx <= uint64(len(staticTable)):
		e := &staticTable[idx-1]
		return e.name, e.value, true
	}
	i := idx - uint64(len(staticTable)) - 1
	if i >= uint64(len(d.ents)) {
		return "", "", false
	}
	e := &d.ents[len(d.ents)-1-int(i)]
	return e.name, e.value, true
}

// add inserts a field in the dynamic table, evicting the oldest (§4.4).
func (d *HeaderDecoder) add(name, value string) {
	n := len(name) + len(value) + 32
	if n > d.cap {
		d.evict(d.cap + 1) // empties the table
		return
	}
	d.evict(n)
	d.ents = append(d.ents, hdEntry{name, value})
	d.size += n
}

// evict drops the oldest entries until n more bytes fit.
func (d *HeaderDecoder) evict(n int) {
	k := 0
	for k < len(d.ents) && d.size+n > d.cap {
		e := &d.ents[k]
		d.size -= len(e.name) + len(e.value) + 32
		k++
	}
	if k > 0 {
		m := copy(d.ents, d.ents[k:])
		clear(d.ents[m:])
		d.ents = d.ents[:m]
	}
}

// staticTable is RFC 7541 Appendix A.
var staticTable = [...]hdEntry{
	{":authority", ""}, {":method", "GET"}, {":method", "POST"}, {":path", "/"},
	{":path", "/index.html"}, {":scheme", "http"}, {":scheme", "https"},
	{":status", "200"}, {":status", "204"}, {":status", "206"}, {":status", "304"},
	{":status", "400"}, {":status", "404"}, {":status", "500"},
	{"accept-charset", ""}, {"accept-encoding", "gzip, deflate"}, {"accept-language", ""},
	{"accept-ranges", ""}, {"accept", ""}, {"access-control-allow-origin", ""},
	{"age", ""}, {"allow", ""}, {"authorization", ""}, {"cache-control", ""},
	{"content-disposition", ""}, {"content-encoding", ""}, {"content-language", ""},
	{"content-length", ""}, {"content-location", ""}, {"content-range", ""},
	{"content-type", ""}, {"cookie", ""}, {"date", ""}, {"etag", ""}, {"expect", ""},
	{"expires", ""}, {"from", ""}, {"host", ""}, {"if-match", ""},
	{"if-modified-since", ""}, {"if-none-match", ""}, {"if-range", ""},
	{"if-unmodified-since", ""}, {"last-modified", ""}, {"link", ""}, {"location", ""},
	{"max-forwards", ""}, {"proxy-authenticate", ""}, {"proxy-authorization", ""},
	{"range", ""}, {"referer", ""}, {"refresh", ""}, {"retry-after", ""}, {"server", ""},
	{"set-cookie", ""}, {"strict-transport-security", ""}, {"transfer-encoding", ""},
	{"user-agent", ""}, {"vary", ""}, {"via", ""}, {"www-authenticate", ""},
}
