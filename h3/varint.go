package h3

// QUIC variable-length integers (RFC 9000 §16): the two high bits of the
// first byte give the length (1, 2, 4 or 8 bytes), the rest the value in
// network byte order. Values need not use the shortest form (RFC 9000 §16
// requires that only of QUIC frame types, which HTTP/3 does not parse), so
// ParseVarint accepts any; AppendVarint always writes the shortest.

// MaxVarint is the largest value a varint holds, 2^62-1.
const MaxVarint = 1<<62 - 1

// VarintLen returns the number of bytes AppendVarint writes for v.
func VarintLen(v uint64) int {
	switch {
	case v < 1<<6:
		return 1
	case v < 1<<14:
		return 2
	case v < 1<<30:
		return 4
	}
	return 8
}

// AppendVarint appends v in its shortest encoding. It panics if v exceeds
// MaxVarint: callers encode lengths and identifiers they control.
func AppendVarint(b []byte, v uint64) []byte {
	switch {
	case v < 1<<6:
		return append(b, byte(v))
	case v < 1<<14:
		return append(b, 0x40|byte(v>>8), byte(v))
	case v < 1<<30:
		return append(b, 0x80|byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	case v <= MaxVarint:
		return append(b, 0xc0|byte(v>>56), byte(v>>48), byte(v>>40), byte(v>>32),
			byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	panic("h3: varint value exceeds 2^62-1")
}

// ParseVarint parses the varint at the start of b and returns its value and
// length, or ErrNeedMore if b holds only part of it.
func ParseVarint(b []byte) (v uint64, n int, err error) {
	if len(b) == 0 {
		return 0, 0, ErrNeedMore
	}
	n = 1 << (b[0] >> 6)
	if len(b) < n {
		return 0, 0, ErrNeedMore
	}
	v = uint64(b[0] & 0x3f)
	for _, c := range b[1:n] {
		v = v<<8 | uint64(c)
	}
	return v, n, nil
}

// parseVarintIn parses a varint that must lie wholly inside a frame
// payload: a short one is a malformed frame.
func parseVarintIn(p []byte) (uint64, int, error) {
	v, n, err := ParseVarint(p)
	if err != nil {
		return 0, 0, ErrMalformedFrame
	}
	return v, n, nil
}
