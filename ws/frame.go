package ws

import "encoding/binary"

// Opcode is a frame's opcode (RFC 6455 section 5.2).
type Opcode uint8

// The opcodes RFC 6455 defines.
const (
	OpContinuation Opcode = 0x0
	OpText         Opcode = 0x1
	OpBinary       Opcode = 0x2
	OpClose        Opcode = 0x8
	OpPing         Opcode = 0x9
	OpPong         Opcode = 0xA
)

// IsControl reports whether o is a control opcode (close, ping, pong and the
// reserved 0xB-0xF).
func (o Opcode) IsControl() bool { return o&0x8 != 0 }

// known reports whether o is an opcode RFC 6455 defines.
func (o Opcode) known() bool {
	switch o {
	case OpContinuation, OpText, OpBinary, OpClose, OpPing, OpPong:
		return true
	}
	return false
}

// Reserved bits of a frame's first byte, as kept in Header.RSV.
const (
	RSV1 = 0x4 // permessage-deflate: the message is compressed
	RSV2 = 0x2
	RSV3 = 0x1
)

// MaxHeaderLen is the longest frame header: 2 bytes, an 8-byte length and a
// 4-byte masking key.
const MaxHeaderLen = 14

// MaxControlPayload is the largest payload of a control frame.
const MaxControlPayload = 125

// Header is a frame header.
type Header struct {
	Fin    bool
	RSV    uint8 // RSV1|RSV2|RSV3 bits
	Op     Opcode
	Masked bool
	Key    [4]byte // the masking key when Masked
	Length int64   // payload length
}

// Len is the number of bytes h takes on the wire.
func (h *Header) Len() int {
	n := 2
	switch {
	case h.Length > 0xFFFF:
		n += 8
	case h.Length > 125:
		n += 2
	}
	if h.Masked {
		n += 4
	}
	return n
}

// ParseHeader parses the frame header at the start of b. It returns the
// header and its length; n == 0 with a nil error means b holds only part of a
// header (at most MaxHeaderLen bytes are ever needed). The only error is a
// 64-bit length with its top bit set; every other rule is Reader.Frame's.
func ParseHeader(b []byte) (h Header, n int, err error) {
	if len(b) < 2 {
		return h, 0, nil
	}
	b0, b1 := b[0], b[1]
	h.Fin = b0&0x80 != 0
	h.RSV = (b0 >> 4) & 0x7
	h.Op = Opcode(b0 & 0xF)
	h.Masked = b1&0x80 != 0
	n = 2
	switch l := b1 & 0x7F; l {
	case 126:
		if len(b) < 4 {
			return h, 0, nil
		}
		h.Length = int64(binary.BigEndian.Uint16(b[2:]))
		n = 4
	case 127:
		if len(b) < 10 {
			return h, 0, nil
		}
		v := binary.BigEndian.Uint64(b[2:])
		if v>>63 != 0 {
			return h, 0, errLength
		}
		h.Length = int64(v)
		n = 10
	default:
		h.Length = int64(l)
	}
	if h.Masked {
		if len(b) < n+4 {
			return h, 0, nil
		}
		copy(h.Key[:], b[n:n+4])
		n += 4
	}
	return h, n, nil
}

// PutHeader writes h at the start of b, which must hold h.Len() bytes, and
// returns the number of bytes written.
func PutHeader(b []byte, h *Header) int {
	b0 := byte(h.Op&0xF) | (h.RSV&0x7)<<4
	if h.Fin {
		b0 |= 0x80
	}
	var m byte
	if h.Masked {
		m = 0x80
	}
	b[0] = b0
	n := 2
	switch {
	case h.Length > 0xFFFF:
		b[1] = m | 127
		binary.BigEndian.PutUint64(b[2:], uint64(h.Length))
		n = 10
	case h.Length > 125:
		b[1] = m | 126
		binary.BigEndian.PutUint16(b[2:], uint16(h.Length))
		n = 4
	default:
		b[1] = m | byte(h.Length)
	}
	if h.Masked {
		copy(b[n:], h.Key[:])
		n += 4
	}
	return n
}

// AppendHeader appends h to b.
func AppendHeader(b []byte, h Header) []byte {
	var tmp [MaxHeaderLen]byte
	n := PutHeader(tmp[:], &h)
	return append(b, tmp[:n]...)
}
