package proxyproto

import (
	"bytes"
	"net/netip"
)

const v1Sig = "PROXY "

// parseV1 parses "PROXY TCP4|TCP6 src dst sport dport\r\n" or
// "PROXY UNKNOWN[ anything]\r\n".
func (h *Header) parseV1(b []byte) (int, error) {
	ok, more := hasPrefix(b, v1Sig)
	if more {
		return 0, ErrNeedMore
	}
	if !ok {
		return 0, ErrNotProxy
	}
	line := b[:min(len(b), maxV1Len)]
	end := bytes.IndexByte(line, '\n')
	if end < 0 {
		if len(b) >= maxV1Len {
			return 0, ErrTooLarge
		}
		if bytes.IndexByte(line, '\r') >= 0 && line[len(line)-1] != '\r' {
			return 0, ErrBadV1 // a CR not followed by LF
		}
		return 0, ErrNeedMore
	}
	if end == 0 || line[end-1] != '\r' {
		return 0, ErrBadV1
	}
	h.Version = 1
	if err := h.parseV1Fields(line[len(v1Sig) : end-1]); err != nil {
		return 0, err
	}
	return end + 1, nil
}

// parseV1Fields parses the line after "PROXY " without its CRLF.
func (h *Header) parseV1Fields(f []byte) error {
	proto, rest, _ := bytes.Cut(f, []byte{' '})
	switch string(proto) {
	case "UNKNOWN":
		// The rest of the line is to be ignored (the specification).
		h.Command = Local
		return nil
	case "TCP4":
		h.Family = INET
	case "TCP6":
		h.Family = INET6
	default:
		return ErrBadV1
	}
	h.Command, h.Transport = Proxy, Stream
	var fields [4][]byte
	for i := range fields {
		var ok bool
		if i < 3 {
			fields[i], rest, ok = bytes.Cut(rest, []byte{' '})
		} else {
			fields[i], ok = rest, bytes.IndexByte(rest, ' ') < 0
		}
		if !ok || len(fields[i]) == 0 {
			return ErrBadV1
		}
	}
	src, ok1 := parseIP(fields[0], h.Family)
	dst, ok2 := parseIP(fields[1], h.Family)
	sport, ok3 := parsePort(fields[2])
	dport, ok4 := parsePort(fields[3])
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return ErrBadV1
	}
	h.Source = netip.AddrPortFrom(src, sport)
	h.Destination = netip.AddrPortFrom(dst, dport)
	return nil
}

// parsePort parses a decimal port, 0 to 65535, without a sign or leading
// zeros.
func parsePort(b []byte) (uint16, bool) {
	if len(b) == 0 || len(b) > 5 || len(b) > 1 && b[0] == '0' {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return uint16(n), n <= 0xffff
}
