package proxyproto

import "errors"

// ErrNeedMore reports that the bytes so far are a valid beginning of a
// header: read more and parse again.
var ErrNeedMore = errors.New("proxyproto: need more data")

// Errors for input that is not a valid PROXY header. The connection should
// be closed.
var (
	// ErrNotProxy: the input starts with neither signature.
	ErrNotProxy = errors.New("proxyproto: no PROXY protocol signature")
	// ErrBadV1: a version 1 line that does not follow the grammar.
	ErrBadV1 = errors.New("proxyproto: malformed version 1 header")
	// ErrBadVersion: a version 2 header with a version other than 2.
	ErrBadVersion = errors.New("proxyproto: unsupported version 2 version")
	// ErrBadCommand: a version 2 command other than LOCAL or PROXY.
	ErrBadCommand = errors.New("proxyproto: unsupported version 2 command")
	// ErrBadFamily: an unknown address family or transport, or an address
	// block shorter than its family needs.
	ErrBadFamily = errors.New("proxyproto: bad address family")
	// ErrBadTLV: a TLV that runs past the header, or a CRC32C TLV that
	// does not match the header.
	ErrBadTLV = errors.New("proxyproto: malformed TLV")
	// ErrTooLarge: a header longer than the limit passed to Parse (for
	// version 1, longer than the 107 bytes the specification allows).
	ErrTooLarge = errors.New("proxyproto: header too large")
)
