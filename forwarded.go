package riptide

// Client addresses from trusted reverse proxies: X-Forwarded-For and
// Forwarded (RFC 7239), for servers behind a layer 7 proxy (nginx,
// HAProxy in http mode, a cloud HTTP load balancer). Off unless
// Server.Forwarded is set: the headers are whatever the client sent unless
// a proxy the operator trusts wrote them.

import (
	"bytes"
	"iter"
	"net"
	"net/http"
	"net/netip"
	"strconv"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/ascii"
)

// ForwardedConfig makes Ctx.RemoteAddr and the compat door's
// Request.RemoteAddr report the client address that trusted proxies
// recorded in the request's Forwarded or X-Forwarded-For header.
//
// Only a request whose connection comes from a trusted network (after the
// PROXY protocol, if on) is looked at. The header's addresses are read
// from the right (the nearest proxy's entry) and trusted ones are skipped:
// the first untrusted address is the client, so a client cannot pass
// itself off as someone else by sending the header itself. When every
// entry is trusted, the leftmost is used. Only the one header named by
// Header is read, never the other: a proxy maintains one of them and
// passes the other through as the client wrote it. An entry that is not
// an IP address (RFC 7239 "unknown" or an obfuscated name) leaves the
// connection's address. A port in the entry is kept; otherwise the port
// is 0.
//
// Reading the address allocates, which the plain RemoteAddr does not.
type ForwardedConfig struct {
	// TrustedNetworks are the proxies' networks, e.g. 10.0.0.0/8.
	TrustedNetworks []netip.Prefix
	// Header is the header the trusted proxies maintain:
	// HeaderXForwardedFor (the zero value; nginx's
	// $proxy_add_x_forwarded_for, HAProxy's option forwardfor, most cloud
	// balancers) or HeaderForwarded (RFC 7239). Set it to what the proxy
	// in front appends to; the other header is ignored, whatever a client
	// puts in it.
	Header ForwardedHeader
}

// ForwardedHeader names the header ForwardedConfig reads.
type ForwardedHeader uint8

const (
	// HeaderXForwardedFor reads X-Forwarded-For, a comma-separated list
	// of addresses. The default.
	HeaderXForwardedFor ForwardedHeader = iota
	// HeaderForwarded reads the for= parameters of RFC 7239 Forwarded.
	HeaderForwarded
)

func (f *ForwardedConfig) trusts(a netip.Addr) bool {
	a = a.Unmap()
	for _, n := range f.TrustedNetworks {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

// forwardedAddr returns the client address per Server.Forwarded, or nil to
// use the connection's.
func (x *Ctx) forwardedAddr() net.Addr {
	peer, ok := x.conn.nc.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return nil
	}
	f := x.conn.srv.Forwarded
	name, fw := f.field()
	hs := x.req.Headers
	return f.client(peer.AddrPort().Addr(), func(yield func([]byte) bool) {
		for i := len(hs) - 1; i >= 0; i-- {
			if h1.EqualFold(hs[i].Name, name) && !yield(hs[i].Value) {
				return
			}
		}
	}, fw)
}

// forwardedRemoteAddr is forwardedAddr for an *http.Request built from an
// HTTP/2 stream (compat handlers over HTTP/2, h2CompatHandler): the new
// Request.RemoteAddr, or "".
func (f *ForwardedConfig) forwardedRemoteAddr(r *http.Request) string {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return ""
	}
	name, fw := f.field()
	vals := r.Header.Values(name)
	a := f.client(peer.Addr(), func(yield func([]byte) bool) {
		for i := len(vals) - 1; i >= 0; i-- {
			if !yield([]byte(vals[i])) {
				return
			}
		}
	}, fw)
	if a == nil {
		return ""
	}
	return a.String()
}

// field names the header to read, as configured: never the request's
// choice (a client can add a Forwarded header that a proxy maintaining
// X-Forwarded-For passes through untouched).
func (f *ForwardedConfig) field() (name string, forwarded bool) {
	if f.Header == HeaderForwarded {
		return "Forwarded", true
	}
	return "X-Forwarded-For", false
}

// client picks the client address from the field's lines, given last
// first, for a connection from peer; nil means the peer's own.
func (f *ForwardedConfig) client(peer netip.Addr, lines iter.Seq[[]byte], forwarded bool) net.Addr {
	if !f.trusts(peer) {
		return nil
	}
	var client netip.AddrPort
	found := false
	for v := range lines {
		for len(v) > 0 { // elements right to left
			var elem []byte
			if j := bytes.LastIndexByte(v, ','); j >= 0 {
				elem, v = v[j+1:], v[:j]
			} else {
				elem, v = v, nil
			}
			ap, ok := forwardedElem(elem, forwarded)
			if !ok {
				return nil
			}
			client, found = ap, true
			if !f.trusts(ap.Addr()) {
				return net.TCPAddrFromAddrPort(client)
			}
		}
	}
	if !found {
		return nil
	}
	return net.TCPAddrFromAddrPort(client)
}

// forwardedElem parses one list element: an X-Forwarded-For address, or
// the for= parameter of a Forwarded element.
func forwardedElem(e []byte, forwarded bool) (netip.AddrPort, bool) {
	e = bytes.TrimSpace(e)
	if forwarded {
		var val []byte
		for len(e) > 0 {
			var pair []byte
			pair, e, _ = bytes.Cut(e, []byte{';'})
			k, v, _ := bytes.Cut(bytes.TrimSpace(pair), []byte{'='})
			if ascii.EqualFold(k, "for") {
				val = v
			}
		}
		if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
			val = val[1 : len(val)-1]
		}
		e = val
	}
	return parseHostPort(e)
}

// parseHostPort parses "ip", "ip:port", "[ipv6]" or "[ipv6]:port".
func parseHostPort(b []byte) (netip.AddrPort, bool) {
	host, port := b, []byte(nil)
	if len(b) > 0 && b[0] == '[' {
		end := bytes.IndexByte(b, ']')
		if end < 0 {
			return netip.AddrPort{}, false
		}
		host, port = b[1:end], b[end+1:]
		if len(port) > 0 && port[0] != ':' {
			return netip.AddrPort{}, false
		}
	} else if i := bytes.IndexByte(b, ':'); i >= 0 && bytes.Count(b, []byte{':'}) == 1 {
		host, port = b[:i], b[i:]
	}
	a, err := netip.ParseAddr(string(host))
	if err != nil || a.Zone() != "" {
		return netip.AddrPort{}, false
	}
	var p uint64
	if len(port) > 1 {
		if p, err = strconv.ParseUint(string(port[1:]), 10, 16); err != nil {
			return netip.AddrPort{}, false
		}
	}
	return netip.AddrPortFrom(a.Unmap(), uint16(p)), true
}
