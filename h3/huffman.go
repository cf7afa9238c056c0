package h3

// Decoding and encoding tables derived from huffLen at initialisation.
var (
	huffCode   [257]uint32 // code of each symbol, right-aligned
	huffFirst  [31]uint32  // first code of each length
	huffCount  [31]uint32  // number of codes of each length
	huffOffset [31]uint16  // index in huffSyms of the first symbol of each length
	huffSyms   [257]uint16 // symbols ordered by (length, symbol)
	// huffFast maps the next 8 bits to sym|len<<8 when they start with a
	// code of at most 8 bits (most symbols of field values), else 0.
	huffFast [256]uint16
)

func init() {
	for _, l := range huffLen {
		huffCount[l]++
	}
	code, idx := uint32(0), uint16(0)
	for l := 1; l <= 30; l++ {
		code = (code + huffCount[l-1]) << 1
		huffFirst[l], huffOffset[l] = code, idx
		idx += uint16(huffCount[l])
	}
	next := huffFirst
	for s, l := range huffLen {
		huffCode[s] = next[l]
		huffSyms[huffOffset[l]+uint16(next[l]-huffFirst[l])] = uint16(s)
		next[l]++
		if l <= 8 {
			lo := huffCode[s] << (8 - l)
			for i := lo; i < lo+1<<(8-l); i++ {
				huffFast[i] = uint16(s) | uint16(l)<<8
			}
		}
	}
}

// errHuffmanFull reports a decoded string that does not fit in dst.
var errHuffmanFull = ErrFieldSectionTooLarge

// huffmanDecode appends the decoding of src to dst without growing dst
// beyond its capacity (errHuffmanFull). It rejects EOS in the string,
// padding longer than 7 bits and padding that is not all ones (RFC 7541
// §5.2).
func huffmanDecode(dst, src []byte) ([]byte, error) {
	var acc uint64 // bits left-aligned
	var n uint     // valid bits in acc
	i := 0
	for {
		for n <= 56 && i < len(src) {
			acc |= uint64(src[i]) << (56 - n)
			i++
			n += 8
		}
		if n == 0 {
			return dst, nil
		}
		if len(dst) == cap(dst) {
			if n < 8 && i == len(src) && acc>>(64-n) == 1<<n-1 {
				return dst, nil // only padding left
			}
			return dst, errHuffmanFull
		}
		if n >= 8 { // fast path: a code of up to 8 bits
			if e := huffFast[acc>>56]; e != 0 {
				dst = append(dst, byte(e))
				acc <<= e >> 8
				n -= uint(e >> 8)
				continue
			}
		}
		found := false
		for l := uint(5); l <= n && l <= 30; l++ {
			if c := uint32(acc>>(64-l)) - huffFirst[l]; c < huffCount[l] {
				sym := huffSyms[huffOffset[l]+uint16(c)]
				if sym == 256 {
					return dst, ErrHuffman // EOS inside a string
				}
				dst = append(dst, byte(sym))
				acc <<= l
				n -= l
				found = true
				break
			}
		}
		if !found {
			// Only the end of the input has bits that are no whole code:
			// they must be padding, fewer than 8 ones.
			if n > 7 || acc>>(64-n) != 1<<n-1 {
				return dst, ErrHuffman
			}
			return dst, nil
		}
	}
}

// huffmanLen returns the Huffman-encoded length of s, lowered to ASCII
// lower case if lower.
func huffmanLen(s string, lower bool) int {
	bits := 0
	for i := 0; i < len(s); i++ {
		bits += int(huffLen[fold(s[i], lower)])
	}
	return (bits + 7) / 8
}

// appendHuffman appends the Huffman encoding of s (lowered if lower),
// padded with ones.
func appendHuffman(dst []byte, s string, lower bool) []byte {
	var acc uint64
	var n uint
	for i := 0; i < len(s); i++ {
		c := fold(s[i], lower)
		l := uint(huffLen[c])
		acc = acc<<l | uint64(huffCode[c])
		n += l
		for n >= 8 {
			n -= 8
			dst = append(dst, byte(acc>>n))
		}
	}
	if n > 0 {
		dst = append(dst, byte(acc<<(8-n))|byte(1<<(8-n)-1))
	}
	return dst
}

// fold lowers an ASCII upper-case letter if lower.
func fold(c byte, lower bool) byte {
	if lower && 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
