package middleware

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"sync/atomic"

	"github.com/riptide-http/riptide"
)

// RequestIDHeader is the header RequestID reads and sets.
const RequestIDHeader = "X-Request-Id"

// maxRequestID bounds an incoming ID that is passed on.
const maxRequestID = 64

var (
	// idPrefix is random per process, so IDs differ across restarts and
	// instances; the counter makes them unique within the process.
	idPrefix  = newIDPrefix()
	idCounter atomic.Uint64
)

// idPrefixLen is the length of idPrefix: 16 hex digits and '-'.
const idPrefixLen = 17

func newIDPrefix() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:]) + "-"
}

// hex16 writes n into dst as 16 lower-case hex digits, zero-padded, so
// that every ID has the same length: eight digits at a time, in a word.
func hex16(dst *[16]byte, n uint64) {
	binary.BigEndian.PutUint64(dst[:8], hex8(uint32(n>>32)))
	binary.BigEndian.PutUint64(dst[8:], hex8(uint32(n)))
}

// hex8 returns the eight hex digits of v in a word, the last digit in the
// lowest byte: it spreads the nibbles of v one a byte, then adds '0' to
// each, and 'a'-'0'-10 more to those above 9.
func hex8(v uint32) uint64 {
	const ones = 0x0101010101010101
	x := uint64(v)
	x = (x | x<<16) & 0x0000ffff0000ffff
	x = (x | x<<8) & 0x00ff00ff00ff00ff
	x = (x | x<<4) & 0x0f0f0f0f0f0f0f0f
	letters := (x + 6*ones) >> 4 & ones // 1 in each byte above 9
	return x + '0'*ones + letters*('a'-'0'-10)
}

// RequestID gives every request an ID in the X-Request-Id response
// header: the one the client (or a proxy) sent in X-Request-Id, if it is 1
// to 64 visible ASCII characters, else a new one that is unique in the
// process ("<16 random hex digits>-<16 hex digits of a counter>"). GetRequestID reads it.
func RequestID() func(riptide.Handler) riptide.Handler {
	return func(next riptide.Handler) riptide.Handler {
		return riptide.HandlerFunc(func(c *riptide.Ctx) {
			if id := c.Header(RequestIDHeader); validID(id) {
				c.SetHeaderBytes(RequestIDHeader, id)
			} else {
				var buf [idPrefixLen + 16]byte
				copy(buf[:], idPrefix)
				hex16((*[16]byte)(buf[idPrefixLen:]), idCounter.Add(1))
				c.SetHeaderBytes(RequestIDHeader, buf[:]) // copied
			}
			next.ServeCtx(c)
		})
	}
}

func validID(id []byte) bool {
	if len(id) == 0 || len(id) > maxRequestID {
		return false
	}
	for _, c := range id {
		if c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

// GetRequestID returns the request's ID set by RequestID (from the
// response headers; valid until the handler returns), or nil.
func GetRequestID(c *riptide.Ctx) []byte { return responseHeader(c, RequestIDHeader) }
