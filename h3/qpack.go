package h3

import "unsafe"

// QPACK field sections (RFC 9204 §4.5) with the static table only: the
// dynamic table capacity is advertised as 0, so a field section's prefix is
// always Required Insert Count 0 and Delta Base 0, and every field line is
// an indexed static entry, a literal with a static name reference or a
// literal with a literal name.

// Field is one decoded field line. Name and Value point into the buffer
// passed to DecodeFieldSection.
type Field struct {
	Name  []byte
	Value []byte
}

// FieldOverhead is what each field adds to a field section's size beyond
// its name and value (RFC 9114 §4.2.2).
const FieldOverhead = 32

// DecodeFieldSection decodes the encoded field section p (a HEADERS
// payload) and appends its fields to fields, their names and values copied
// into buf after len(buf). buf never grows: decoded bytes beyond cap(buf)
// are ErrFieldSectionTooLarge, as is a section whose size (each field's
// name and value length plus 32, RFC 9114 §4.2.2) exceeds maxSize, checked
// as each field is decoded. A buf with room for maxSize bytes always
// suffices. fields grows only when its capacity is short, and by at most
// maxSize/32 fields.
//
// It returns the fields and buf extended by the decoded bytes. Any
// reference to the dynamic table, a prefix other than 0 0, an index outside
// the static table, a truncated line or bad Huffman code is a connection
// error of type QPACK_DECOMPRESSION_FAILED.
func DecodeFieldSection(fields []Field, buf, p []byte, maxSize uint64) ([]Field, []byte, error) {
	ric, k, err := readInt(p, 8)
	if err != nil {
		return fields, buf, err
	}
	if ric != 0 {
		return fields, buf, ErrDynamicReference
	}
	p = p[k:]
	if len(p) == 0 {
		return fields, buf, ErrQPACKTruncated
	}
	sign := p[0] & 0x80
	db, k, err := readInt(p, 7)
	if err != nil {
		return fields, buf, err
	}
	if sign != 0 || db != 0 {
		return fields, buf, ErrDynamicReference // a Base other than 0
	}
	p = p[k:]
	size := uint64(0)
	for len(p) > 0 {
		var f Field
		start := len(buf)
		f, buf, k, err = decodeLine(buf, p, maxSize-size)
		if err != nil {
			return fields, buf[:start], err
		}
		p = p[k:]
		size += uint64(len(f.Name)+len(f.Value)) + FieldOverhead
		if size > maxSize {
			return fields, buf[:start], ErrFieldSectionTooLarge
		}
		fields = append(fields, f)
	}
	return fields, buf, nil
}

// decodeLine decodes one field line at the start of p (non-empty) into
// buf; room bounds the bytes its name and value may take.
func decodeLine(buf, p []byte, room uint64) (f Field, _ []byte, n int, err error) {
	c := p[0]
	switch {
	case c&0x80 != 0: // Indexed Field Line, §4.5.2: 1 T index(6)
		if c&0x40 == 0 {
			return f, buf, 0, ErrDynamicReference
		}
		i, k, err := readInt(p, 6)
		if err != nil {
			return f, buf, 0, err
		}
		if i >= uint64(len(staticTable)) {
			return f, buf, 0, ErrBadStaticIndex
		}
		e := &staticTable[i]
		if uint64(len(e[0])+len(e[1])) > room {
			return f, buf, 0, ErrFieldSectionTooLarge
		}
		f.Name, buf, err = appendStatic(buf, e[0])
		if err == nil {
			f.Value, buf, err = appendStatic(buf, e[1])
		}
		return f, buf, k, err
	case c&0xc0 == 0x40: // Literal With Name Reference, §4.5.4: 01 N T index(4)
		if c&0x10 == 0 {
			return f, buf, 0, ErrDynamicReference
		}
		i, k, err := readInt(p, 4)
		if err != nil {
			return f, buf, 0, err
		}
		if i >= uint64(len(staticTable)) {
			return f, buf, 0, ErrBadStaticIndex
		}
		name := staticTable[i][0]
		if uint64(len(name)) > room {
			return f, buf, 0, ErrFieldSectionTooLarge
		}
		if f.Name, buf, err = appendStatic(buf, name); err != nil {
			return f, buf, 0, err
		}
		var k2 int
		f.Value, buf, k2, err = readString(buf, p[k:], 7, room-uint64(len(name)))
		return f, buf, k + k2, err
	case c&0xe0 == 0x20: // Literal With Literal Name, §4.5.6: 001 N H len(3)
		var k int
		f.Name, buf, k, err = readString(buf, p, 3, room)
		if err != nil {
			return f, buf, 0, err
		}
		var k2 int
		f.Value, buf, k2, err = readString(buf, p[k:], 7, room-uint64(len(f.Name)))
		return f, buf, k + k2, err
	}
	// 0001: Indexed Field Line With Post-Base Index (§4.5.3);
	// 0000: Literal With Post-Base Name Reference (§4.5.5).
	return f, buf, 0, ErrDynamicReference
}

// appendStatic copies a static-table string into buf's spare capacity.
func appendStatic(buf []byte, s string) ([]byte, []byte, error) {
	if len(s) > cap(buf)-len(buf) {
		return nil, buf, ErrFieldSectionTooLarge
	}
	start := len(buf)
	buf = append(buf, s...)
	return buf[start:len(buf):len(buf)], buf, nil
}

// readString reads a string literal (RFC 9204 §4.1.2) whose length has an
// n-bit prefix, its Huffman flag the bit above it, and decodes it into buf.
func readString(buf, p []byte, n uint, room uint64) ([]byte, []byte, int, error) {
	if len(p) == 0 {
		return nil, buf, 0, ErrQPACKTruncated
	}
	huff := p[0]&(1<<n) != 0
	l, k, err := readInt(p, n)
	if err != nil {
		return nil, buf, 0, err
	}
	if l > uint64(len(p)-k) {
		return nil, buf, 0, ErrQPACKTruncated
	}
	src := p[k : k+int(l)]
	start := len(buf)
	free := min(uint64(cap(buf)-len(buf)), room)
	if !huff {
		if l > free {
			return nil, buf, 0, ErrFieldSectionTooLarge
		}
		buf = append(buf, src...)
	} else {
		// Decode into a window capped at the room left, so that the
		// decoder stops there rather than growing buf.
		out, err := huffmanDecode(buf[start:start:start+int(free)], src)
		if err != nil {
			return nil, buf, 0, err
		}
		buf = buf[:start+len(out)]
	}
	return buf[start:len(buf):len(buf)], buf, k + int(l), nil
}

// readInt reads a prefix integer (RFC 7541 §5.1) with an n-bit prefix in
// p[0]. More than eight continuation bytes (a value of 2^56 or more, far
// beyond any length or index) is ErrQPACKInteger.
func readInt(p []byte, n uint) (uint64, int, error) {
	if len(p) == 0 {
		return 0, 0, ErrQPACKTruncated
	}
	mask := uint64(1)<<n - 1
	v := uint64(p[0]) & mask
	if v < mask {
		return v, 1, nil
	}
	var m uint
	for k := 1; k < len(p); k++ {
		b := p[k]
		v += uint64(b&0x7f) << m
		if b&0x80 == 0 {
			return v, k + 1, nil
		}
		m += 7
		if m > 55 {
			return 0, 0, ErrQPACKInteger
		}
	}
	return 0, 0, ErrQPACKTruncated
}

// appendInt appends a prefix integer with an n-bit prefix; flags are the
// bits above it in the first byte.
func appendInt(b []byte, flags byte, n uint, v uint64) []byte {
	mask := uint64(1)<<n - 1
	if v < mask {
		return append(b, flags|byte(v))
	}
	b = append(b, flags|byte(mask))
	v -= mask
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// AppendFieldSectionPrefix appends the prefix every field section this
// package encodes starts with: Required Insert Count 0, Delta Base 0.
func AppendFieldSectionPrefix(b []byte) []byte { return append(b, 0, 0) }

// AppendField appends one field line: an indexed static entry when name and
// value match one, a literal with a static name reference when the name
// does, else a literal with a literal name. The name is written in lower
// case (HTTP/3 requires it; the caller may pass canonical "Content-Type").
// With huffman, literals are Huffman-coded when that is shorter. The caller
// validates names and values.
func AppendField(b []byte, name, value string, huffman bool) []byte {
	var low [maxStaticName]byte
	idx, exact := -1, false
	if len(name) <= maxStaticName {
		for i := 0; i < len(name); i++ {
			low[i] = fold(name[i], true)
		}
		// The map index with string(bytes) does not allocate.
		idx, exact = staticLookup(string(low[:len(name)]), value)
	}
	switch {
	case exact: // 1 T=1 index(6)
		return appendInt(b, 0xc0, 6, uint64(idx))
	case idx >= 0: // 01 N=0 T=1 index(4)
		b = appendInt(b, 0x50, 4, uint64(idx))
	default: // 001 N=0 H len(3) name
		b = appendString(b, 0x20, 3, name, huffman, true)
	}
	return appendString(b, 0, 7, value, huffman, false)
}

// AppendFieldBytes is AppendField for byte slices.
func AppendFieldBytes(b []byte, name, value []byte, huffman bool) []byte {
	return AppendField(b, bytesString(name), bytesString(value), huffman)
}

// bytesString views b as a string for the encoder, which only reads it.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// appendString appends a string literal whose length has an n-bit prefix
// after flags, the Huffman flag the bit above the prefix.
func appendString(b []byte, flags byte, n uint, s string, huffman, lower bool) []byte {
	if huffman {
		if hl := huffmanLen(s, lower); hl < len(s) {
			b = appendInt(b, flags|1<<n, n, uint64(hl))
			return appendHuffman(b, s, lower)
		}
	}
	b = appendInt(b, flags, n, uint64(len(s)))
	if !lower {
		return append(b, s...)
	}
	for i := 0; i < len(s); i++ {
		b = append(b, fold(s[i], true))
	}
	return b
}

// AppendStatus appends the :status field line for a three-digit code.
func AppendStatus(b []byte, code int) []byte {
	var d [3]byte
	d[0], d[1], d[2] = byte('0'+code/100%10), byte('0'+code/10%10), byte('0'+code%10)
	return AppendField(b, ":status", bytesString(d[:]), false)
}
