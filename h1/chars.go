package h1

import (
	"encoding/binary"
	"unicode/utf8"

	"github.com/riptide-http/riptide/internal/ascii"
)

// Character classes from RFC 9110 §5.6.2 (tchar) and §5.5 (field-vchar),
// as 256-entry tables so the hot loops do one load per byte.
var (
	tokenTable [256]bool
	// valueTable allows field-vchar, obs-text, SP and HTAB.
	valueTable [256]bool
	// targetTable allows the visible ASCII characters a request-target may
	// contain (RFC 3986 is stricter; percent-encoding is checked elsewhere),
	// and the bytes 0x80-0xff where they form valid UTF-8 (checked with
	// the percent-encoding): a raw UTF-8 path ("/h/é") is served as
	// net/http and quic-go serve it, on HTTP/1.1, HTTP/2 and HTTP/3 alike
	// (they all check targets here). Such a byte can end no token and
	// frame nothing; an invalid or overlong sequence ("\xc0\xaf", a '/'
	// to a lenient decoder), CTLs, DEL, SP and the delimiters below stay
	// refused.
	targetTable [256]bool
	// plainTarget is 1 for the bytes of targetTable but '%' and those of
	// UTF-8 sequences, so that the sum over eight bytes is 8 only when
	// none needs a closer look.
	plainTarget [256]uint8
)

func init() {
	for c := 'a'; c <= 'z'; c++ {
		tokenTable[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		tokenTable[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		tokenTable[c] = true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		tokenTable[c] = true
	}
	for c := 0x21; c <= 0xff; c++ {
		valueTable[c] = c != 0x7f
	}
	valueTable[' '] = true
	valueTable['\t'] = true
	for c := 0x21; c <= 0xff; c++ {
		targetTable[c] = c != 0x7f
	}
	// RFC 3986 §2: these are never valid in a URI, even though some lenient
	// parsers pass them through.
	for _, c := range "\"<>\\^`{|}" {
		targetTable[c] = false
	}
	// RFC 9112 §3.2: a request-target has no fragment; a client must strip
	// it, and a '#' reaching a server is either a bug or a probe.
	targetTable['#'] = false
	for c := range targetTable {
		if targetTable[c] && c != '%' && c < utf8.RuneSelf {
			plainTarget[c] = 1
		}
	}
}

// IsToken reports whether b is a non-empty RFC 9110 token (method, field name).
func IsToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !tokenTable[c] {
			return false
		}
	}
	return true
}

// ValidHeaderValue reports whether v may be sent as a field value: no CR, LF,
// NUL or other control bytes except HTAB. Writers use it to refuse header
// injection.
//
// It runs for every header a handler sets, so it tests eight bytes at a
// time as validValue does (for a string too), the last word overlapping
// the one before it, and consults the table only for a word hasCtl flags.
func ValidHeaderValue[T ~string | ~[]byte](v T) bool {
	if len(v) < 8 {
		for i := 0; i < len(v); i++ {
			if !valueTable[v[i]] {
				return false
			}
		}
		return true
	}
	for i := 0; ; i += 8 {
		if i > len(v)-8 {
			i = len(v) - 8
		}
		if hasCtl(le64(v[i : i+8])) {
			for j := i; j < i+8; j++ {
				if !valueTable[v[j]] {
					return false
				}
			}
		}
		if i == len(v)-8 {
			return true
		}
	}
}

// le64 is binary.LittleEndian.Uint64 for a string too: the compiler
// combines the byte loads into one.
func le64[T ~string | ~[]byte](b T) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// ValidHeaderName reports whether n is a token and so may be sent as a field
// name.
func ValidHeaderName[T ~string | ~[]byte](n T) bool {
	if len(n) == 0 {
		return false
	}
	for i := 0; i < len(n); i++ {
		if !tokenTable[n[i]] {
			return false
		}
	}
	return true
}

// lower folds an ASCII letter to lower case.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// EqualFold reports whether b equals s under ASCII case folding, without
// allocating.
func EqualFold[T ~string | ~[]byte](b []byte, s T) bool { return ascii.EqualFold(b, s) }

// trimOWS removes optional whitespace (SP, HTAB) from both ends.
func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// validValue reports whether every byte of v may appear in a received field
// value (valueTable). It is the hot loop of header parsing, so it tests eight
// bytes at a time and consults the table only for a word that holds a byte
// below 0x20 or DEL (in practice, a word with a tab).
func validValue(v []byte) bool {
	for len(v) >= 8 {
		if hasCtl(binary.LittleEndian.Uint64(v)) {
			for _, c := range v[:8] {
				if !valueTable[c] {
					return false
				}
			}
		}
		v = v[8:]
	}
	for _, c := range v {
		if !valueTable[c] {
			return false
		}
	}
	return true
}

const (
	ones = 0x0101010101010101
	high = 0x8080808080808080
)

// hasCtl reports whether some byte of w is below 0x20 or equal to 0x7f. It
// may report true for a word without one (a borrow can flag a byte above a
// real match), never false for a word with one.
func hasCtl(w uint64) bool {
	below := (w - 0x20*ones) &^ w & high
	x := w ^ (0x7f * ones)
	del := (x - ones) &^ x & high
	return below|del != 0
}
