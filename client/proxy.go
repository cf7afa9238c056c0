package client

import (
	"context"
	"errors"
	"net"
	"net/url"

	"golang.org/x/net/http/httpproxy"
	"golang.org/x/net/proxy"
)

// ProxyFromEnvironment is a Client.ProxyFunc that chooses the proxy from
// the environment as net/http's ProxyFromEnvironment does: HTTPS_PROXY for
// https origins, HTTP_PROXY for http ones (or their lower-case forms; a
// value without a scheme means http://), none for the hosts NO_PROXY lists
// ("*" for all, domains, ".suffix", IP addresses and CIDR ranges, with or
// without port) nor for localhost and loopback addresses. The proxy URL
// may be http, https, socks5 or socks5h. The environment is read for each
// new origin (a Client asks once per origin).
func ProxyFromEnvironment(origin *url.URL) (*url.URL, error) {
	return httpproxy.FromEnvironment().ProxyFunc()(origin)
}

// errProxyScheme reports a proxy URL the client cannot use.
var errProxyScheme = errors.New("client: unsupported proxy scheme; want http, https, socks5 or socks5h")

// setProxy records the proxy of the pool's origin: ProxyFunc's choice, or
// Proxy. An error (ProxyFunc's, or an unsupported scheme) is kept and
// returned by every dial.
func (p *hostPool) setProxy() {
	c := p.c
	u := c.Proxy
	if c.ProxyFunc != nil {
		scheme := "http"
		if p.https {
			scheme = "https"
		}
		var err error
		if u, err = c.ProxyFunc(&url.URL{Scheme: scheme, Host: p.authority}); err != nil {
			p.proxyErr = err
			return
		}
	}
	if u == nil {
		return
	}
	switch u.Scheme {
	case "http", "https":
		p.proxy, p.proxyAuth = u, proxyAuth(u)
	case "socks5", "socks5h":
		p.socks = u
	default:
		p.proxyErr = errProxyScheme
	}
}

// socksDial returns dial made to reach the pool's origin through its SOCKS5
// proxy (RFC 1928; user info in the URL is sent as RFC 1929 credentials):
// dial opens the connection to the proxy, which then connects to the
// address asked for, by name (the proxy resolves it).
func (p *hostPool) socksDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) (func(ctx context.Context, network, addr string) (net.Conn, error), error) {
	var auth *proxy.Auth
	if u := p.socks.User; u != nil {
		pw, _ := u.Password()
		auth = &proxy.Auth{User: u.Username(), Password: pw}
	}
	d, err := proxy.SOCKS5("tcp", proxyAddr(p.socks), auth, contextDialer(dial))
	if err != nil {
		return nil, err
	}
	cd, ok := d.(proxy.ContextDialer)
	if !ok {
		return nil, errProxyScheme
	}
	return cd.DialContext, nil
}

// contextDialer is a dial function as a proxy.Dialer and
// proxy.ContextDialer.
type contextDialer func(ctx context.Context, network, addr string) (net.Conn, error)

func (f contextDialer) Dial(network, addr string) (net.Conn, error) {
	return f(context.Background(), network, addr)
}

func (f contextDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return f(ctx, network, addr)
}
