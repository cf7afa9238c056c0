package middleware

import (
	"bytes"
	"net"
	"net/netip"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/h1"
)

// RealIP finds the client's address behind reverse proxies the server
// trusts. The native API has no per-request values to rewrite the peer
// address into, so RealIP is asked per request (ClientIP) rather than
// installed as middleware; AccessLog takes one to log the client.
type RealIP struct {
	// Trusted are the proxies whose X-Forwarded-For is believed, e.g.
	// netip.MustParsePrefix("10.0.0.0/8").
	Trusted []netip.Prefix
}

// ClientIP returns the peer's address, or, when the peer is a trusted
// proxy, the last address of X-Forwarded-For (all of its fields, in order)
// that is not itself a trusted proxy: the first hop no trusted party
// vouches for. An address a client could forge is never returned from a
// connection that is not a trusted proxy.
func (r *RealIP) ClientIP(c *riptide.Ctx) netip.Addr {
	addr := peerAddr(c)
	if !r.trusted(addr) {
		return addr
	}
	hs := c.Request().Headers
	for i := len(hs) - 1; i >= 0; i-- {
		if !h1.EqualFold(hs[i].Name, "X-Forwarded-For") {
			continue
		}
		v := hs[i].Value
		for len(v) > 0 {
			field := v
			if j := bytes.LastIndexByte(v, ','); j >= 0 {
				field, v = v[j+1:], v[:j]
			} else {
				v = nil
			}
			a, err := netip.ParseAddr(string(bytes.TrimSpace(field)))
			if err != nil {
				return addr // malformed: trust nothing further left
			}
			addr = a.Unmap()
			if !r.trusted(addr) {
				return addr
			}
		}
	}
	return addr
}

func (r *RealIP) trusted(a netip.Addr) bool {
	for _, p := range r.Trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func peerAddr(c *riptide.Ctx) netip.Addr {
	if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		a, _ := netip.AddrFromSlice(ta.IP)
		return a.Unmap()
	}
	ap, err := netip.ParseAddrPort(c.RemoteAddr().String())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}
