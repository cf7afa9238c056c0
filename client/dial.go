package client

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"net"
	"net/url"
	"time"

	"github.com/riptide-http/riptide/h1"
)

// dial opens a connection to the pool's origin: TCP (to the proxy if one is
// configured; through a SOCKS5 proxy's tunnel), TLS to an https proxy, a
// CONNECT tunnel for https origins behind an HTTP proxy, and TLS to an
// https origin.
func (p *hostPool) dial(ctx context.Context, deadline time.Time) (*conn, error) {
	cl := p.c
	if p.proxyErr != nil {
		return nil, p.proxyErr
	}
	addr := p.addr
	if p.proxy != nil {
		addr = proxyAddr(p.proxy)
	}
	dctx, cancel := ctx, context.CancelFunc(nil)
	if !deadline.IsZero() {
		dctx, cancel = context.WithDeadline(dctx, deadline)
		defer cancel()
	}
	dialTimeout := cl.DialTimeout
	if dialTimeout == 0 {
		dialTimeout = DefaultDialTimeout
	}
	tctx, tcancel := context.WithTimeout(dctx, dialTimeout)
	dialFn := cl.Dial
	if dialFn == nil {
		var d net.Dialer
		dialFn = d.DialContext
	}
	if p.socks != nil {
		// The SOCKS5 handshake is part of the dial, under DialTimeout.
		var err error
		if dialFn, err = p.socksDial(dialFn); err != nil {
			tcancel()
			return nil, err
		}
	}
	nc, err := dialFn(tctx, "tcp", addr)
	timedOut := tctx.Err() != nil && dctx.Err() == nil
	tcancel()
	if err != nil {
		return nil, p.dialErr(ctx, err, timedOut, ErrDialTimeout)
	}
	if p.proxy != nil {
		if p.proxy.Scheme == "https" {
			cfg := &tls.Config{ServerName: p.proxy.Hostname()}
			if cl.TLSConfig != nil {
				cfg = cl.TLSConfig.Clone()
				cfg.ServerName = p.proxy.Hostname()
				cfg.NextProtos = nil
			}
			if nc, err = p.handshake(dctx, nc, cfg); err != nil {
				return nil, err
			}
		}
		if p.https {
			if err := p.connectTunnel(dctx, nc); err != nil {
				nc.Close()
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, err
			}
		}
	}
	if p.https {
		if nc, err = p.handshake(dctx, nc, p.tlsConf); err != nil {
			return nil, err
		}
	}
	return newConn(nc, p), nil
}

func (p *hostPool) dialErr(ctx context.Context, err error, timedOut bool, timeoutErr error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if timedOut {
		return timeoutErr
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ErrRequestTimeout
	}
	return err
}

// handshake runs a TLS client handshake bounded by TLSHandshakeTimeout.
func (p *hostPool) handshake(ctx context.Context, nc net.Conn, cfg *tls.Config) (net.Conn, error) {
	timeout := p.c.TLSHandshakeTimeout
	if timeout == 0 {
		timeout = DefaultTLSHandshakeTimeout
	}
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(hctx); err != nil {
		nc.Close()
		timedOut := hctx.Err() != nil && ctx.Err() == nil
		return nil, p.dialErr(ctx, err, timedOut, ErrTLSHandshakeTimeout)
	}
	return tc, nil
}

// connectTunnel asks the proxy on nc for a tunnel to the origin (RFC 9110
// §9.3.6) and reads its answer.
func (p *hostPool) connectTunnel(ctx context.Context, nc net.Conn) error {
	if d, ok := ctx.Deadline(); ok {
		nc.SetDeadline(d)
		defer nc.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(aLongTimeAgo) })
	defer stop()
	b := h1.AppendRequestLine(nil, "CONNECT", p.addr)
	b = h1.AppendHeader(b, "Host", p.addr)
	if auth := proxyAuth(p.proxy); auth != "" {
		b = h1.AppendHeader(b, "Proxy-Authorization", auth)
	}
	b = append(b, '\r', '\n')
	if _, err := nc.Write(b); err != nil {
		return err
	}
	var h h1.Response
	var i1xx interims
	buf := make([]byte, 0, 1024)
	for {
		m, perr := h.Parse(buf, &p.c.Limits)
		if perr == h1.ErrNeedMore { // read more; heads already here first
			if len(buf) == cap(buf) {
				buf = grow(buf, len(buf))
			}
			n, err := nc.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if n == 0 && err != nil {
				return err
			}
			continue
		}
		if perr != nil {
			return perr
		}
		if h.Status < 200 {
			if err := i1xx.add(m); err != nil {
				return err
			}
			buf = buf[:copy(buf, buf[m:])]
			continue
		}
		if h.Status != 200 {
			return &ProxyError{Status: h.Status}
		}
		if m != len(buf) {
			return errors.New("client: proxy sent data after CONNECT response")
		}
		return nil
	}
}

func proxyAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// proxyAuth returns the Proxy-Authorization value for the proxy URL's user
// info (Basic), or "".
func proxyAuth(u *url.URL) string {
	if u == nil || u.User == nil {
		return ""
	}
	pw, _ := u.User.Password()
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw))
}
