package proxyproto

import (
	"encoding/binary"
	"hash/crc32"
	"net/netip"
	"strconv"
)

// AppendV1 appends a version 1 header for a TCP connection from src to dst
// ("PROXY TCP4 ..." or "PROXY TCP6 ..."); when src or dst is not valid, or
// they are of different families, it appends "PROXY UNKNOWN". Two IPv4-mapped
// IPv6 addresses are written as IPv4.
func AppendV1(b []byte, src, dst netip.AddrPort) []byte {
	s, d := src.Addr(), dst.Addr()
	if s.Is4In6() && d.Is4In6() {
		s, d = s.Unmap(), d.Unmap()
	}
	if !s.IsValid() || !d.IsValid() || s.Is4() != d.Is4() {
		return append(b, "PROXY UNKNOWN\r\n"...)
	}
	if s.Is4() {
		b = append(b, "PROXY TCP4 "...)
	} else {
		b = append(b, "PROXY TCP6 "...)
	}
	b = s.WithZone("").AppendTo(b)
	b = append(b, ' ')
	b = d.WithZone("").AppendTo(b)
	b = append(b, ' ')
	b = strconv.AppendUint(b, uint64(src.Port()), 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, uint64(dst.Port()), 10)
	return append(b, "\r\n"...)
}

// AppendV2 appends a version 2 header for h: its Command, and for the
// PROXY command the addresses of h.Family (INET, INET6 or Unix; Unspec
// sends none) with transport h.Transport, followed by h.RawTLVs as they
// are. With withCRC it adds a CRC32C TLV covering the header.
func AppendV2(b []byte, h *Header, withCRC bool) []byte {
	start := len(b)
	b = append(b, v2Sig...)
	fam, tr := h.Family, h.Transport
	if h.Command != Proxy {
		fam, tr = Unspec, TransportUnspec
	}
	b = append(b, 0x20|byte(h.Command&1), byte(fam)<<4|byte(tr)&0xf, 0, 0)
	switch fam {
	case INET:
		s, d := h.Source.Addr().As4(), h.Destination.Addr().As4()
		b = append(b, s[:]...)
		b = append(b, d[:]...)
		b = binary.BigEndian.AppendUint16(b, h.Source.Port())
		b = binary.BigEndian.AppendUint16(b, h.Destination.Port())
	case INET6:
		s, d := h.Source.Addr().As16(), h.Destination.Addr().As16()
		b = append(b, s[:]...)
		b = append(b, d[:]...)
		b = binary.BigEndian.AppendUint16(b, h.Source.Port())
		b = binary.BigEndian.AppendUint16(b, h.Destination.Port())
	case Unix:
		b = appendUnixPath(b, h.SourceUnix)
		b = appendUnixPath(b, h.DestinationUnix)
	}
	b = append(b, h.RawTLVs...)
	crcAt := 0
	if withCRC {
		b = append(b, TLVCRC32C, 0, 4)
		crcAt = len(b)
		b = append(b, 0, 0, 0, 0)
	}
	binary.BigEndian.PutUint16(b[start+14:], uint16(len(b)-start-v2FixedLen))
	if withCRC {
		binary.BigEndian.PutUint32(b[crcAt:], crc32.Checksum(b[start:], castagnoli))
	}
	return b
}

// appendUnixPath appends p as a 108-byte NUL-padded field (truncated).
func appendUnixPath(b, p []byte) []byte {
	var f [108]byte
	copy(f[:], p)
	return append(b, f[:]...)
}

// AppendTLV appends one TLV to b, for building Header.RawTLVs. A value
// longer than 65535 bytes is truncated.
func AppendTLV(b []byte, typ byte, value []byte) []byte {
	value = value[:min(len(value), 0xffff)]
	b = append(b, typ)
	b = binary.BigEndian.AppendUint16(b, uint16(len(value)))
	return append(b, value...)
}
