package riptide

// PROXY protocol on the server (package proxyproto parses it). The listener
// wrapper checks the peer against the trusted networks at accept time, with
// no I/O; the connection's goroutine then reads the header first thing,
// under ReadHeaderTimeout and before TLS or HTTP/2 detection, and from then
// on the wrapped net.Conn reports the client's addresses. Every part of the
// engine, both doors and HTTP/2 see the client through RemoteAddr.

import (
	"crypto/tls"
	"net"
	"net/netip"

	"github.com/riptide-http/riptide/internal/netx"
	"github.com/riptide-http/riptide/proxyproto"
)

// ProxyConfig enables the PROXY protocol (versions 1 and 2, detected) on a
// [Server], for running behind a layer 4 load balancer (HAProxy
// send-proxy/send-proxy-v2, nginx proxy_protocol, AWS NLB, Envoy).
//
// Every connection from a trusted network must begin with a PROXY header;
// one without a valid header, or whose header does not arrive within
// ReadHeaderTimeout, is closed without an answer. A connection from any
// other network is closed at accept. Connections on non-IP listeners (Unix
// sockets) are trusted. The header precedes TLS: ServeTLS and
// ListenAndServeTLS read it before the handshake; a TLS listener of your
// own must be made over Server.ProxyListener.
//
// After a PROXY command header, Ctx.RemoteAddr and LocalAddr, the compat
// door's Request.RemoteAddr and every net.Conn the server hands out
// (ConnState after StateNew, Hijack) report the client's and the balancer's
// addresses; after a LOCAL header (a health check) the connection's own.
type ProxyConfig struct {
	// TrustedNetworks are the balancers' source networks, e.g.
	// 10.0.0.0/8 or 127.0.0.1/32. IPv4-mapped IPv6 peers are matched as
	// IPv4. Empty trusts no one: every TCP connection is closed.
	TrustedNetworks []netip.Prefix
	// MaxHeaderBytes bounds a version 2 header with its TLVs. Zero means
	// proxyproto.DefaultMaxLen.
	MaxHeaderBytes int
}

// trusts reports whether connections from addr may send a PROXY header.
func (p *ProxyConfig) trusts(addr net.Addr) bool {
	ta, ok := addr.(*net.TCPAddr)
	if !ok {
		return true // Unix sockets: only local processes can connect
	}
	ip := ta.AddrPort().Addr().Unmap()
	for _, n := range p.TrustedNetworks {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// proxyListener closes connections from untrusted peers and wraps the
// others in a proxyConn whose header the connection's goroutine reads.
type proxyListener struct {
	net.Listener
	srv *Server
}

// ProxyListener returns ln wrapped for the PROXY protocol (ln itself when
// ProxyProtocol is nil), for a TLS listener of your own: serve
// tls.NewListener(srv.ProxyListener(ln), cfg) with Serve. Serve and
// ServeTLS wrap their listeners themselves.
func (s *Server) ProxyListener(ln net.Listener) net.Listener { return s.proxyListen(ln) }

// proxyListen wraps ln when the PROXY protocol is on.
func (s *Server) proxyListen(ln net.Listener) net.Listener {
	if s.ProxyProtocol == nil {
		return ln
	}
	if _, ok := ln.(*proxyListener); ok {
		return ln
	}
	return &proxyListener{Listener: ln, srv: s}
}

// Accept returns the next connection from a trusted peer.
func (l *proxyListener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if proxyConnOf(nc) != nil {
			return nc, nil // wrapped below (ProxyListener under TLS)
		}
		if l.srv.ProxyProtocol.trusts(nc.RemoteAddr()) {
			return &proxyConn{Conn: nc}, nil
		}
		l.srv.count(statProxyRejected)
		nc.Close()
	}
}

// proxyConn is an accepted connection that starts with a PROXY header.
// After readHeader, reads return the bytes that followed the header first,
// and the address methods report the header's addresses.
type proxyConn struct {
	net.Conn
	hdr           proxyproto.Header
	buf           []byte // the header, then rest: unread bytes that followed it
	rest          []byte
	remote, local net.Addr // from the header; nil means the socket's own
	space         [232]byte
}

// readHeader reads and parses the header, reading no more than the socket
// has ready. The caller has armed the read deadline.
func (p *proxyConn) readHeader(maxLen int) error {
	if maxLen <= 0 {
		maxLen = proxyproto.DefaultMaxLen
	}
	p.buf = p.space[:0]
	for {
		if len(p.buf) == cap(p.buf) {
			// The parser rejects a header longer than maxLen as soon as
			// its length is known, so this bound is never the one hit.
			if cap(p.buf) >= maxLen {
				return proxyproto.ErrTooLarge
			}
			nb := make([]byte, len(p.buf), min(2*cap(p.buf), maxLen))
			copy(nb, p.buf)
			p.buf = nb
		}
		n, err := p.Conn.Read(p.buf[len(p.buf):cap(p.buf)])
		p.buf = p.buf[:len(p.buf)+n]
		hn, perr := p.hdr.Parse(p.buf, maxLen)
		switch {
		case perr == nil:
			p.rest = p.buf[hn:]
			p.setAddrs()
			return nil
		case perr != proxyproto.ErrNeedMore:
			return perr
		case err != nil:
			return err
		}
	}
}

func (p *proxyConn) setAddrs() {
	if !p.hdr.Proxied() {
		return
	}
	p.remote = net.TCPAddrFromAddrPort(p.hdr.Source)
	p.local = net.TCPAddrFromAddrPort(p.hdr.Destination)
}

// Read returns the bytes that followed the header, then reads the socket.
func (p *proxyConn) Read(b []byte) (int, error) {
	if len(p.rest) > 0 {
		n := copy(b, p.rest)
		p.rest = p.rest[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}

// RemoteAddr returns the client's address from the header, or the
// socket's peer.
func (p *proxyConn) RemoteAddr() net.Addr {
	if p.remote != nil {
		return p.remote
	}
	return p.Conn.RemoteAddr()
}

// LocalAddr returns the address the client connected to, from the header,
// or the socket's own.
func (p *proxyConn) LocalAddr() net.Addr {
	if p.local != nil {
		return p.local
	}
	return p.Conn.LocalAddr()
}

// readProxyHeader reads the connection's PROXY header when the PROXY
// protocol is on. It reports false when the connection must be closed.
// Called first on the connection's goroutine, under the header deadline.
func (c *conn) readProxyHeader() bool {
	p := proxyConnOf(c.nc)
	if p == nil {
		return true
	}
	if err := p.readHeader(c.srv.ProxyProtocol.MaxHeaderBytes); err != nil {
		c.srv.count(statProxyRejected)
		if netx.DeadlineExceeded(err) {
			c.srv.statTimeout(timeoutHeader)
		}
		c.srv.logger().Debug("riptide: closing connection: PROXY header", "peer", p.Conn.RemoteAddr().String(), "err", err)
		return false
	}
	return true
}

// proxyConnOf returns the proxyConn under nc (itself, or under TLS), or
// nil.
func proxyConnOf(nc net.Conn) *proxyConn {
	for {
		switch t := nc.(type) {
		case *proxyConn:
			return t
		case *tls.Conn:
			nc = t.NetConn()
		default:
			return nil
		}
	}
}

// tcpConnOf returns the TCP socket under nc, seeing through the PROXY
// protocol wrapper (whose unread bytes the callers do not need): for
// half-closing, and for sendfile.
func tcpConnOf(nc net.Conn) (*net.TCPConn, bool) {
	if p, ok := nc.(*proxyConn); ok {
		nc = p.Conn
	}
	tc, ok := nc.(*net.TCPConn)
	return tc, ok
}

// ProxyHeader returns the connection's PROXY protocol header (its TLVs,
// for example), or nil when the PROXY protocol is off. Its slices are valid
// until the handler returns.
func (x *Ctx) ProxyHeader() *proxyproto.Header {
	if p := proxyConnOf(x.conn.ex.transport()); p != nil {
		return &p.hdr
	}
	return nil
}
