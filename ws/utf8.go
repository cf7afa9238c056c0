package ws

import "unicode/utf8"

// UTF8 checks that a text message is valid UTF-8 as its bytes arrive, split
// anywhere (across frames or reads). It fails at the first byte that cannot
// start or continue a valid sequence, not only at the end of the message.
// The zero value is ready; it allocates nothing.
type UTF8 struct {
	pend [4]byte // an incomplete sequence carried to the next Write
	n    uint8
}

// Write checks p, the next bytes of the text, and reports whether they are
// valid so far.
func (v *UTF8) Write(p []byte) bool {
	if v.n > 0 {
		need := int(seqLen(v.pend[0]))
		for int(v.n) < need && len(p) > 0 {
			v.pend[v.n] = p[0]
			v.n++
			p = p[1:]
		}
		if !validPrefix(v.pend[:v.n]) {
			return false
		}
		if int(v.n) < need {
			return true
		}
		v.n = 0
	}
	// Split off an incomplete sequence at the end of p.
	tail := len(p)
	for i := len(p) - 1; i >= 0 && i >= len(p)-3; i-- {
		c := p[i]
		if c < 0x80 {
			break
		}
		if c >= 0xC0 {
			if len(p)-i < int(seqLen(c)) || seqLen(c) == 0 {
				tail = i
			}
			break
		}
	}
	if !utf8.Valid(p[:tail]) {
		return false
	}
	t := p[tail:]
	if len(t) == 0 {
		return true
	}
	if !validPrefix(t) {
		return false
	}
	v.n = uint8(copy(v.pend[:], t))
	return true
}

// Done reports whether the text ended on a sequence boundary; call it at the
// end of the message. It resets v for the next message.
func (v *UTF8) Done() bool {
	ok := v.n == 0
	v.n = 0
	return ok
}

// Reset forgets any incomplete sequence.
func (v *UTF8) Reset() { v.n = 0 }

// seqLen is the length of the sequence lead byte c starts, 0 if c cannot
// start one.
func seqLen(c byte) uint8 {
	switch {
	case c < 0x80:
		return 1
	case c < 0xC2:
		return 0
	case c < 0xE0:
		return 2
	case c < 0xF0:
		return 3
	case c < 0xF5:
		return 4
	}
	return 0
}

// validPrefix reports whether b (at most one sequence, maybe incomplete) can
// still become a valid UTF-8 sequence.
func validPrefix(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	n := int(seqLen(b[0]))
	if n == 0 || len(b) > n {
		return false
	}
	if len(b) >= 2 {
		lo, hi := byte(0x80), byte(0xBF)
		switch b[0] {
		case 0xE0:
			lo = 0xA0
		case 0xED:
			hi = 0x9F
		case 0xF0:
			lo = 0x90
		case 0xF4:
			hi = 0x8F
		}
		if b[1] < lo || b[1] > hi {
			return false
		}
	}
	for _, c := range b[min(len(b), 2):] {
		if c < 0x80 || c > 0xBF {
			return false
		}
	}
	return true
}
