package middleware

import (
	"crypto/rand"
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

// hexUint writes n into dst as len(dst) hex digits, zero-padded, so that
// every ID has the same length.
func hexUint(dst []byte, n uint64) {
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = "0123456789abcdef"[n&15]
		n >>= 4
	}
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
				n := copy(buf[:], idPrefix)
				hexUint(buf[n:], idCounter.Add(1))
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
