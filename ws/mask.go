package ws

import "encoding/binary"

// Mask XORs b in place with the masking key, starting pos bytes into the
// key's 4-byte cycle, and returns the position after b (pos for the next
// chunk of the same payload). Masking and unmasking are the same operation.
// It works eight bytes at a time.
func Mask(key [4]byte, pos int, b []byte) int {
	pos &= 3
	// Bytes until b is done or the key cycle restarts.
	for pos != 0 && len(b) > 0 {
		b[0] ^= key[pos]
		b = b[1:]
		pos = (pos + 1) & 3
	}
	if len(b) >= 8 {
		k32 := uint64(binary.LittleEndian.Uint32(key[:]))
		k := k32 | k32<<32
		for len(b) >= 32 {
			binary.LittleEndian.PutUint64(b, binary.LittleEndian.Uint64(b)^k)
			binary.LittleEndian.PutUint64(b[8:], binary.LittleEndian.Uint64(b[8:])^k)
			binary.LittleEndian.PutUint64(b[16:], binary.LittleEndian.Uint64(b[16:])^k)
			binary.LittleEndian.PutUint64(b[24:], binary.LittleEndian.Uint64(b[24:])^k)
			b = b[32:]
		}
		for len(b) >= 8 {
			binary.LittleEndian.PutUint64(b, binary.LittleEndian.Uint64(b)^k)
			b = b[8:]
		}
	}
	for i := range b {
		b[i] ^= key[pos]
		pos = (pos + 1) & 3
	}
	return pos
}

// maskBytewise is the reference Mask the tests compare against.
func maskBytewise(key [4]byte, pos int, b []byte) int {
	for i := range b {
		b[i] ^= key[(pos+i)&3]
	}
	return (pos + len(b)) & 3
}

// KeyUint32 packs a 32-bit random value into a masking key.
func KeyUint32(v uint32) [4]byte {
	var k [4]byte
	binary.LittleEndian.PutUint32(k[:], v)
	return k
}
