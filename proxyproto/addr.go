package proxyproto

import "net/netip"

// parseIP parses the textual address b of family fam without allocating
// (netip.ParseAddr takes a string, and converting b to one would
// allocate). Zones are not accepted: they mean nothing across hosts.
func parseIP(b []byte, fam Family) (netip.Addr, bool) {
	if fam == INET {
		a, ok := parseIPv4(b)
		return netip.AddrFrom4(a), ok
	}
	a, ok := parseIPv6(b)
	return netip.AddrFrom16(a), ok
}

// parseIPv4 parses dotted-decimal a.b.c.d, each 0-255 without leading
// zeros.
func parseIPv4(b []byte) (ip [4]byte, ok bool) {
	i := 0
	for k := range 4 {
		if k > 0 {
			if i >= len(b) || b[i] != '.' {
				return ip, false
			}
			i++
		}
		start, n := i, 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' && i-start < 3 {
			n = n*10 + int(b[i]-'0')
			i++
		}
		if i == start || n > 255 || i-start > 1 && b[start] == '0' {
			return ip, false
		}
		ip[k] = byte(n)
	}
	return ip, i == len(b)
}

// parseIPv6 parses RFC 4291 §2.2 text: eight groups of up to four hex
// digits, one "::" standing for a run of zero groups, and optionally a
// dotted IPv4 address as the last 32 bits.
func parseIPv6(b []byte) (ip [16]byte, ok bool) {
	ellipsis := -1 // byte index in ip where "::" stands
	i, k := 0, 0
	if len(b) >= 2 && b[0] == ':' && b[1] == ':' {
		ellipsis, i = 0, 2
		if i == len(b) {
			return ip, true
		}
	}
	for k < 16 {
		start, n := i, 0
		for i < len(b) && i-start < 4 {
			d, isHex := hexVal(b[i])
			if !isHex {
				break
			}
			n = n<<4 | d
			i++
		}
		if i == start {
			return ip, false
		}
		if i < len(b) && b[i] == '.' {
			// Embedded IPv4: only as the last 32 bits.
			if k > 12 {
				return ip, false
			}
			v4, ok := parseIPv4(b[start:])
			if !ok {
				return ip, false
			}
			copy(ip[k:], v4[:])
			k += 4
			i = len(b)
			break
		}
		ip[k], ip[k+1] = byte(n>>8), byte(n)
		k += 2
		if i == len(b) {
			break
		}
		if b[i] != ':' || i+1 == len(b) {
			return ip, false
		}
		i++
		if b[i] == ':' {
			if ellipsis >= 0 {
				return ip, false
			}
			ellipsis = k
			i++
			if i == len(b) {
				break
			}
		}
	}
	if i != len(b) {
		return ip, false
	}
	if k < 16 {
		if ellipsis < 0 {
			return ip, false
		}
		// Move the groups after "::" to the end and zero the gap.
		n := 16 - k
		copy(ip[ellipsis+n:], ip[ellipsis:k])
		clear(ip[ellipsis : ellipsis+n])
	} else if ellipsis >= 0 {
		return ip, false // "::" must stand for at least one group
	}
	return ip, true
}

func hexVal(c byte) (int, bool) {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0'), true
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10, true
	}
	return 0, false
}
