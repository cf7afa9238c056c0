package proxyproto

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"net/netip"
)

// v2Sig is the 12-byte version 2 signature; the fixed part of a version 2
// header is 16 bytes.
const (
	v2Sig      = "\r\n\r\n\x00\r\nQUIT\n"
	v2FixedLen = 16
)

// Address block lengths per family.
const (
	v2LenINET  = 12
	v2LenINET6 = 36
	v2LenUnix  = 216
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// zero4 stands for the checksum field while it is verified (a package
// variable: a local one escapes through crc32.Update).
var zero4 [4]byte

// parseV2 parses a binary header: signature, version and command, family
// and transport, length, addresses, TLVs.
func (h *Header) parseV2(b []byte, maxLen int) (int, error) {
	ok, more := hasPrefix(b, v2Sig)
	if more {
		return 0, ErrNeedMore
	}
	if !ok {
		return 0, ErrNotProxy
	}
	if len(b) < v2FixedLen {
		return 0, ErrNeedMore
	}
	if b[12]>>4 != 2 {
		return 0, ErrBadVersion
	}
	n := v2FixedLen + int(binary.BigEndian.Uint16(b[14:16]))
	if n > maxLen {
		return 0, ErrTooLarge
	}
	h.Version = 2
	switch b[12] & 0xf {
	case 0:
		h.Command = Local
	case 1:
		h.Command = Proxy
	default:
		return 0, ErrBadCommand
	}
	h.Family, h.Transport = Family(b[13]>>4), Transport(b[13]&0xf)
	if h.Family > Unix || h.Transport > Datagram {
		return 0, ErrBadFamily
	}
	if len(b) < n {
		return 0, ErrNeedMore
	}
	body := b[v2FixedLen:n]
	alen := 0
	switch h.Family {
	case INET:
		alen = v2LenINET
	case INET6:
		alen = v2LenINET6
	case Unix:
		alen = v2LenUnix
	}
	if len(body) < alen {
		return 0, ErrBadFamily
	}
	if h.Command == Proxy {
		h.setAddrs(body[:alen])
	} else {
		// LOCAL: the receiver must ignore the address block.
		h.Family, h.Transport = Unspec, TransportUnspec
	}
	h.RawTLVs = body[alen:]
	if err := checkTLVs(b[:n], v2FixedLen+alen); err != nil {
		h.RawTLVs = nil
		return 0, err
	}
	return n, nil
}

// setAddrs decodes the address block of h.Family.
func (h *Header) setAddrs(a []byte) {
	switch h.Family {
	case INET:
		h.Source = netip.AddrPortFrom(netip.AddrFrom4([4]byte(a[0:4])), binary.BigEndian.Uint16(a[8:10]))
		h.Destination = netip.AddrPortFrom(netip.AddrFrom4([4]byte(a[4:8])), binary.BigEndian.Uint16(a[10:12]))
	case INET6:
		h.Source = netip.AddrPortFrom(netip.AddrFrom16([16]byte(a[0:16])), binary.BigEndian.Uint16(a[32:34]))
		h.Destination = netip.AddrPortFrom(netip.AddrFrom16([16]byte(a[16:32])), binary.BigEndian.Uint16(a[34:36]))
	case Unix:
		h.SourceUnix = trimNUL(a[:108])
		h.DestinationUnix = trimNUL(a[108:216])
	}
}

func trimNUL(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// checkTLVs checks that the TLVs in hdr[off:] fill it exactly and that a
// CRC32C TLV, if present, matches: the checksum of the whole header with
// the checksum field taken as zero.
func checkTLVs(hdr []byte, off int) error {
	for i := off; i < len(hdr); {
		if len(hdr)-i < 3 {
			return ErrBadTLV
		}
		typ, vlen := hdr[i], int(binary.BigEndian.Uint16(hdr[i+1:i+3]))
		v := i + 3
		if vlen > len(hdr)-v {
			return ErrBadTLV
		}
		if typ == TLVCRC32C {
			if vlen != 4 || !crcMatches(hdr, v) {
				return ErrBadTLV
			}
		}
		i = v + vlen
	}
	return nil
}

func crcMatches(hdr []byte, at int) bool {
	sum := crc32.Update(0, castagnoli, hdr[:at])
	sum = crc32.Update(sum, castagnoli, zero4[:])
	sum = crc32.Update(sum, castagnoli, hdr[at+4:])
	return sum == binary.BigEndian.Uint32(hdr[at:at+4])
}
