package h2

// The server's HPACK encoder (RFC 7541): what golang.org/x/net/http2/hpack's
// Encoder writes, field for field (the same search, indexing and table
// size updates), with a smaller dynamic table: a slice of entries searched
// in order, where x/net's keeps two maps beside its slice. A connection
// keeps its encoder for life, parked too, and an HTTP/2 response's few
// indexed fields (a Date, a Content-Type) cost x/net's maps some 600
// bytes per connection (issue 36: HTTP/2 over TLS at most 16 KiB of RSS
// per idle connection); here they cost the entries, 32 bytes each.

import "golang.org/x/net/http2/hpack"

// hpackEntry is a dynamic table entry.
type hpackEntry struct{ name, value string }

// size is the entry's size for the table (RFC 7541 §4.1).
func (e hpackEntry) size() uint32 { return uint32(len(e.name) + len(e.value) + 32) }

// hpackEncoder encodes header fields into a block (appendField).
type hpackEncoder struct {
	ents    []hpackEntry // the dynamic table, oldest first
	size    uint32       // the entries' total size
	maxSize uint32       // the table's size now, at most limit
	limit   uint32       // the most the peer allows (SETTINGS_HEADER_TABLE_SIZE)
	// minSize is the smallest size the table had since the last update
	// was sent (hpackNoSize: none smaller); update: an update is owed,
	// to begin the next block (§4.2).
	minSize uint32
	update  bool
}

const (
	hpackNoSize     = ^uint32(0)
	hpackStaticSize = 61 // entries in the static table (Appendix A)
)

func newHpackEncoder() *hpackEncoder {
	return &hpackEncoder{maxSize: h2HeaderTableSize, limit: h2HeaderTableSize, minSize: hpackNoSize}
}

// setMaxSizeLimit applies the peer's SETTINGS_HEADER_TABLE_SIZE: a table
// larger than v shrinks to it, and the next block says so.
func (e *hpackEncoder) setMaxSizeLimit(v uint32) {
	e.limit = v
	if e.maxSize > v {
		e.update = true
		e.setMaxSize(v)
	}
}

// setMaxSize sets the table's size, evicting the oldest entries that no
// longer fit.
func (e *hpackEncoder) setMaxSize(v uint32) {
	e.maxSize = v
	e.evict(0)
}

// evict drops the oldest entries until room more bytes fit.
func (e *hpackEncoder) evict(room uint32) {
	k := 0
	for k < len(e.ents) && e.size+room > e.maxSize {
		e.size -= e.ents[k].size()
		k++
	}
	if k > 0 {
		n := copy(e.ents, e.ents[k:])
		clear(e.ents[n:]) // drop the evicted strings
		e.ents = e.ents[:n]
	}
}

// appendField appends f's representation to the block dst.
func (e *hpackEncoder) appendField(dst []byte, f hpack.HeaderField) []byte {
	if e.update {
		e.update = false
		if e.minSize < e.maxSize {
			dst = hpackAppendInt(dst, 0x20, 5, uint64(e.minSize))
		}
		e.minSize = hpackNoSize
		dst = hpackAppendInt(dst, 0x20, 5, uint64(e.maxSize))
	}
	// A sensitive field is never matched whole, only by name (as x/net's
	// search): its value must not go by index.
	exactIdx, idx := hpackStatic(f.Name, f.Value)
	exact := exactIdx != 0 && !f.Sensitive
	if exact {
		idx = exactIdx
	} else {
		// The newest entry that matches: x/net's maps hold the latest
		// index of each name and of each pair.
		name := uint64(0)
		for i := len(e.ents) - 1; i >= 0; i-- {
			ent := e.ents[i]
			if ent.name != f.Name {
				continue
			}
			j := uint64(hpackStaticSize + len(e.ents) - i)
			if ent.value == f.Value && !f.Sensitive {
				idx, exact = j, true
				break
			}
			if name == 0 {
				name = j
			}
		}
		if !exact && idx == 0 {
			idx = name
		}
	}
	if exact {
		return hpackAppendInt(dst, 0x80, 7, idx) // indexed field (§6.1)
	}
	ent := hpackEntry{f.Name, f.Value}
	indexing := !f.Sensitive && ent.size() <= e.maxSize
	if indexing {
		e.evict(ent.size())
		e.ents = append(e.ents, ent)
		e.size += ent.size()
	}
	// A literal (§6.2): with incremental indexing (01, 6-bit index), never
	// indexed (0001) or without indexing (0000, 4-bit index); the name by
	// index, or as a string when idx is 0.
	first, prefix := byte(0), byte(4)
	switch {
	case indexing:
		first, prefix = 0x40, 6
	case f.Sensitive:
		first = 0x10
	}
	dst = hpackAppendInt(dst, first, prefix, idx)
	if idx == 0 {
		dst = hpackAppendString(dst, f.Name)
	}
	return hpackAppendString(dst, f.Value)
}

// hpackAppendInt appends i with an n-bit prefix (§5.1), the first byte's
// other bits set to first.
func hpackAppendInt(dst []byte, first, n byte, i uint64) []byte {
	k := uint64(1)<<n - 1
	if i < k {
		return append(dst, first|byte(i))
	}
	dst = append(dst, first|byte(k))
	for i -= k; i >= 128; i >>= 7 {
		dst = append(dst, byte(0x80|i&0x7f))
	}
	return append(dst, byte(i))
}

// hpackAppendString appends s as a string literal (§5.2), Huffman-coded
// when that is shorter.
func hpackAppendString(dst []byte, s string) []byte {
	if n := hpack.HuffmanEncodeLength(s); n < uint64(len(s)) {
		dst = hpackAppendInt(dst, 0x80, 7, n)
		return hpack.AppendHuffmanString(dst, s)
	}
	dst = hpackAppendInt(dst, 0, 7, uint64(len(s)))
	return append(dst, s...)
}

// hpackStatic searches the static table (Appendix A) as x/net's table
// does: exact, the index of the field's name and value (0: none); name,
// the index of the name's last entry (0: none).
func hpackStatic(name, value string) (exact, last uint64) {
	switch name {
	case ":authority":
		return hpackIf(value == "", 1), 1
	case ":method":
		switch value {
		case "GET":
			return 2, 3
		case "POST":
			return 3, 3
		}
		return 0, 3
	case ":path":
		switch value {
		case "/":
			return 4, 5
		case "/index.html":
			return 5, 5
		}
		return 0, 5
	case ":scheme":
		switch value {
		case "http":
			return 6, 7
		case "https":
			return 7, 7
		}
		return 0, 7
	case ":status":
		switch value {
		case "200":
			return 8, 14
		case "204":
			return 9, 14
		case "206":
			return 10, 14
		case "304":
			return 11, 14
		case "400":
			return 12, 14
		case "404":
			return 13, 14
		case "500":
			return 14, 14
		}
		return 0, 14
	case "accept-encoding":
		return hpackIf(value == "gzip, deflate", 16), 16
	}
	i := uint64(hpackStaticNames[name])
	return hpackIf(i != 0 && value == "", i), i
}

// hpackIf is i if ok, else 0.
func hpackIf(ok bool, i uint64) uint64 {
	if ok {
		return i
	}
	return 0
}

// hpackStaticNames indexes the static table's names from entry 15 on,
// but accept-encoding's (16; hpackStatic answers it), whose entries have
// an empty value.
var hpackStaticNames = map[string]uint8{
	"accept-charset": 15, "accept-language": 17, "accept-ranges": 18, "accept": 19,
	"access-control-allow-origin": 20, "age": 21, "allow": 22, "authorization": 23,
	"cache-control": 24, "content-disposition": 25, "content-encoding": 26,
	"content-language": 27, "content-length": 28, "content-location": 29,
	"content-range": 30, "content-type": 31, "cookie": 32, "date": 33, "etag": 34,
	"expect": 35, "expires": 36, "from": 37, "host": 38, "if-match": 39,
	"if-modified-since": 40, "if-none-match": 41, "if-range": 42,
	"if-unmodified-since": 43, "last-modified": 44, "link": 45, "location": 46,
	"max-forwards": 47, "proxy-authenticate": 48, "proxy-authorization": 49,
	"range": 50, "referer": 51, "refresh": 52, "retry-after": 53, "server": 54,
	"set-cookie": 55, "strict-transport-security": 56, "transfer-encoding": 57,
	"user-agent": 58, "vary": 59, "via": 60, "www-authenticate": 61,
}
