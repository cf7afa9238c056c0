package proxyproto

import (
	"iter"
	"net/netip"
)

// Command is what the header asks of the receiver.
type Command uint8

// Commands. Version 1 headers are PROXY, except "PROXY UNKNOWN", which is
// parsed as Local.
const (
	// Local: the balancer's own connection (a health check); use the
	// connection's real addresses.
	Local Command = 0
	// Proxy: a relayed connection; the header carries the client's
	// addresses.
	Proxy Command = 1
)

// Family is the address family of a header's addresses.
type Family uint8

// Address families (the high nibble of the version 2 family byte).
const (
	Unspec Family = 0
	INET   Family = 1
	INET6  Family = 2
	Unix   Family = 3
)

// Transport is the transport protocol of the relayed connection.
type Transport uint8

// Transports (the low nibble of the version 2 family byte).
const (
	TransportUnspec Transport = 0
	Stream          Transport = 1
	Datagram        Transport = 2
)

// TLV types defined by the specification (version 2 only).
const (
	TLVALPN      = 0x01
	TLVAuthority = 0x02
	TLVCRC32C    = 0x03
	TLVNoop      = 0x04
	TLVUniqueID  = 0x05
	TLVSSL       = 0x20
	TLVNetNS     = 0x30
)

// DefaultMaxLen is the header size limit Parse applies when given 0: the
// version 2 header of a TLS-terminating balancer with a few TLVs is a few
// hundred bytes.
const DefaultMaxLen = 4096

// maxV1Len is the longest version 1 line the specification allows,
// CRLF included.
const maxV1Len = 107

// Header is a parsed PROXY header. Its byte slices point into the buffer
// given to Parse and are valid as long as it is.
type Header struct {
	// Version is 1 or 2.
	Version int
	// Command is Proxy for a relayed connection, Local otherwise.
	Command Command
	// Family and Transport describe the addresses; Unspec for a version 1
	// UNKNOWN header and for a version 2 LOCAL or UNSPEC one.
	Family    Family
	Transport Transport
	// Source is the client's address and Destination the address it
	// connected to (the balancer's), for families INET and INET6.
	Source, Destination netip.AddrPort
	// SourceUnix and DestinationUnix are the socket paths for family Unix,
	// with trailing NUL bytes removed.
	SourceUnix, DestinationUnix []byte
	// RawTLVs is the version 2 TLV section, already checked to be well
	// formed; read it with TLV or TLVs.
	RawTLVs []byte
}

// Proxied reports whether the header carries the client's IP address: the
// PROXY command with family INET or INET6. When it does not, the
// connection's own addresses should be used.
func (h *Header) Proxied() bool {
	return h.Command == Proxy && (h.Family == INET || h.Family == INET6)
}

// TLV returns the value of the first TLV of type typ, or nil.
func (h *Header) TLV(typ byte) []byte {
	for b := h.RawTLVs; len(b) >= 3; {
		n := tlvLen(b)
		if b[0] == typ {
			return b[3:n]
		}
		b = b[n:]
	}
	return nil
}

// TLVs iterates over the TLVs in order, yielding each type and value.
func (h *Header) TLVs() iter.Seq2[byte, []byte] {
	return func(yield func(byte, []byte) bool) {
		for b := h.RawTLVs; len(b) >= 3; {
			n := tlvLen(b)
			if !yield(b[0], b[3:n]) {
				return
			}
			b = b[n:]
		}
	}
}

// Parse parses the PROXY header at the start of b into h and returns its
// length in bytes. It returns ErrNeedMore when b is a proper prefix of a
// header (up to maxLen bytes), and another error when b cannot start one.
// maxLen bounds a version 2 header; 0 means DefaultMaxLen. h is reset
// first; on error its contents are unspecified.
func (h *Header) Parse(b []byte, maxLen int) (int, error) {
	*h = Header{}
	if maxLen <= 0 {
		maxLen = DefaultMaxLen
	}
	switch {
	case len(b) == 0:
		return 0, ErrNeedMore
	case b[0] == 'P':
		return h.parseV1(b)
	case b[0] == '\r':
		return h.parseV2(b, maxLen)
	}
	return 0, ErrNotProxy
}

// hasPrefix reports whether b starts with sig, or is a prefix of it
// (needMore).
func hasPrefix(b []byte, sig string) (ok, needMore bool) {
	if len(b) < len(sig) {
		return false, string(b) == sig[:len(b)]
	}
	return string(b[:len(sig)]) == sig, false
}

// tlvLen is the length of the TLV at the start of b (at least 3 bytes,
// checked by Parse to fit).
func tlvLen(b []byte) int { return 3 + (int(b[1])<<8 | int(b[2])) }
