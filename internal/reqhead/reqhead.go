// Package reqhead names the contract between each protocol's request
// fill and the server above it: the request head lies contiguous in one
// buffer, its method first, and every view of the h1.Request the fill
// pointed at it (method, target, path, query, host, each field's name and
// value) is a slice of those bytes.
//
// HTTP/1.1 keeps it by parsing the head in place (Parsed), HTTP/2 by
// copying the decoded fields after the method and target
// (h2.Stream.FillRequest returns a Head), HTTP/3 likewise (the server's
// fillH3Request). The compat door relies on it: it copies the one region
// and makes every string of the *http.Request a substring of the copy,
// found by its offset; it calls Check first, so that a fill that broke the
// contract is refused, never turned into strings of the wrong bytes.
package reqhead

import (
	"unsafe"

	"github.com/riptide-http/riptide/h1"
)

// Head is a request head as a protocol's fill leaves it: its bytes,
// method first. The zero Head holds no request.
type Head struct {
	b []byte
}

// Of returns the Head whose bytes are b: a request head a fill laid out
// itself, method first (HTTP/2, HTTP/3).
func Of(b []byte) Head { return Head{b} }

// Parsed returns the Head of b, the bytes h1.Request.Parse consumed for
// one request: b without the empty lines before the request line, which
// RFC 9112 §2.2 lets a client send and the parser skips.
func Parsed(b []byte) Head {
	for len(b) >= 2 && b[0] == '\r' && b[1] == '\n' {
		b = b[2:]
	}
	return Head{b}
}

// Bytes returns the head's bytes, method first. They belong to the
// connection's read buffer: valid while its request is served.
func (h Head) Bytes() []byte { return h.b }

// Check reports whether req keeps the contract with h: req's method is
// the start of h, and its target, path, query, host and every field's
// name and value are empty or lie inside h. It makes a few comparisons per
// field and allocates nothing.
func (h Head) Check(req *h1.Request) bool {
	if len(req.Method) == 0 || len(req.Method) > len(h.b) || unsafe.SliceData(req.Method) != unsafe.SliceData(h.b) {
		return false
	}
	lo, n := uintptr(unsafe.Pointer(unsafe.SliceData(h.b))), uintptr(len(h.b))
	if !inside(lo, n, req.Target) || !inside(lo, n, req.Path) || !inside(lo, n, req.Query) || !inside(lo, n, req.Host) {
		return false
	}
	for i := range req.Headers {
		if f := &req.Headers[i]; !inside(lo, n, f.Name) || !inside(lo, n, f.Value) {
			return false
		}
	}
	return true
}

// inside reports whether v is empty or lies within the n bytes at lo.
// Addresses are only compared, never turned back into pointers.
func inside(lo, n uintptr, v []byte) bool {
	if len(v) == 0 {
		return true
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(v)))
	return p >= lo && p-lo <= n && uintptr(len(v)) <= n-(p-lo)
}
