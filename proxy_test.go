package riptide_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/proxyproto"
)

var (
	proxyClient   = netip.MustParseAddrPort("203.0.113.7:4242")
	proxyFrontend = netip.MustParseAddrPort("198.51.100.1:443")
	loopback      = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
)

// proxyWhoami answers the addresses the handler sees, the protocol and the
// authority TLV, in either door.
func proxyWhoami(door string) riptide.Handler {
	if door == "compat" {
		return riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
			fmt.Fprintf(w, "%s %v %s", r.RemoteAddr, local, r.Proto)
		}))
	}
	return riptide.HandlerFunc(func(x *riptide.Ctx) {
		proto := "HTTP/1.1"
		if x.IsHTTP2() {
			proto = "HTTP/2.0"
		}
		fmt.Fprintf(x, "%s %s %s", x.RemoteAddr(), x.LocalAddr(), proto)
		if h := x.ProxyHeader(); h != nil && h.TLV(proxyproto.TLVAuthority) != nil {
			fmt.Fprintf(x, " %s", h.TLV(proxyproto.TLVAuthority))
		}
	})
}

// startProxied serves h with the PROXY protocol on, trusting loopback, in
// cleartext (with h2c) or over TLS.
func startProxied(t *testing.T, h riptide.Handler, useTLS bool, configure func(*riptide.Server)) string {
	t.Helper()
	srv := &riptide.Server{Handler: h, Logger: slog.New(slog.DiscardHandler),
		ProxyProtocol: &riptide.ProxyConfig{TrustedNetworks: loopback},
		HTTP2:         &riptide.HTTP2Config{H2C: true}}
	if configure != nil {
		configure(srv)
	}
	if useTLS {
		srv.TLSConfig = h2TestServerTLS(t)
	}
	return riptide.ServeTest(t, srv, riptide.TestServeOptions{TLS: useTLS}).Addr
}

// proxiedClient is a Go client whose connections start with header, written
// in pieces of at most split bytes (0: whole).
func proxiedClient(t *testing.T, header []byte, split int, useTLS, h2 bool) *http.Client {
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		for b := header; len(b) > 0; {
			n := len(b)
			if split > 0 {
				n = min(n, split)
			}
			if _, err := nc.Write(b[:n]); err != nil {
				nc.Close()
				return nil, err
			}
			b = b[n:]
			if len(b) > 0 {
				time.Sleep(2 * time.Millisecond) // let the server read a part alone
			}
		}
		return nc, nil
	}}
	var p http.Protocols
	switch {
	case useTLS:
		tr.TLSClientConfig = h2TestClientTLS(t)
		p.SetHTTP1(!h2)
		p.SetHTTP2(h2)
	case h2:
		p.SetUnencryptedHTTP2(true)
	default:
		p.SetHTTP1(true)
	}
	tr.Protocols = &p
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// TestProxyProtocolDoorsAndProtocols: behind a PROXY v1 or v2 header, both
// doors see the client's and the frontend's addresses over HTTP/1.1, h2c,
// and TLS with HTTP/1.1 and h2, also with the header split across reads.
func TestProxyProtocolDoorsAndProtocols(t *testing.T) {
	t.Parallel()
	v1 := proxyproto.AppendV1(nil, proxyClient, proxyFrontend)
	v2 := proxyproto.AppendV2(nil, &proxyproto.Header{Command: proxyproto.Proxy, Family: proxyproto.INET,
		Transport: proxyproto.Stream, Source: proxyClient, Destination: proxyFrontend}, true)
	for _, door := range []string{"native", "compat"} {
		for _, tr := range []struct {
			name    string
			tls, h2 bool
		}{{"http1", false, false}, {"h2c", false, true}, {"tls-http1", true, false}, {"tls-h2", true, true}} {
			addr := startProxied(t, proxyWhoami(door), tr.tls, nil)
			scheme := map[bool]string{false: "http", true: "https"}[tr.tls]
			wantProto := map[bool]string{false: "HTTP/1.1", true: "HTTP/2.0"}[tr.h2]
			for _, hdr := range []struct {
				name  string
				b     []byte
				split int
			}{{"v1", v1, 0}, {"v2", v2, 0}, {"v1 split", v1, 7}, {"v2 split", v2, 5}} {
				t.Run(door+"/"+tr.name+"/"+hdr.name, func(t *testing.T) {
					c := proxiedClient(t, hdr.b, hdr.split, tr.tls, tr.h2)
					for range 2 { // a second request on the same connection
						body := mustGetBody(t, c, scheme+"://"+addr+"/")
						want := fmt.Sprintf("%s %s %s", proxyClient, proxyFrontend, wantProto)
						if body != want {
							t.Fatalf("got %q, want %q", body, want)
						}
					}
				})
			}
		}
	}
}

func mustGetBody(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	resp, b, err := getBody(c, url)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %q %v", resp, b, err)
	}
	return b
}

// TestProxyProtocolLocalAndTLVs: a LOCAL header (a balancer's health check)
// keeps the socket's addresses; TLVs reach the handler.
func TestProxyProtocolLocalAndTLVs(t *testing.T) {
	t.Parallel()
	addr := startProxied(t, proxyWhoami("native"), false, nil)
	local := proxyproto.AppendV2(nil, &proxyproto.Header{Command: proxyproto.Local}, false)
	body := mustGetBody(t, proxiedClient(t, local, 0, false, false), "http://"+addr+"/")
	if !strings.HasPrefix(body, "127.0.0.1:") || !strings.Contains(body, " "+addr+" ") {
		t.Errorf("LOCAL: got %q, want the socket's addresses", body)
	}
	withTLV := proxyproto.AppendV2(nil, &proxyproto.Header{Command: proxyproto.Proxy, Family: proxyproto.INET,
		Source: proxyClient, Destination: proxyFrontend,
		RawTLVs: proxyproto.AppendTLV(nil, proxyproto.TLVAuthority, []byte("example.com"))}, false)
	body = mustGetBody(t, proxiedClient(t, withTLV, 0, false, false), "http://"+addr+"/")
	if !strings.HasSuffix(body, " example.com") || !strings.HasPrefix(body, proxyClient.String()) {
		t.Errorf("TLV: got %q", body)
	}
}

// TestProxyProtocolRejects: connections from an untrusted network, without
// a header, with a malformed or oversized one, or whose header does not
// arrive in ReadHeaderTimeout are closed without a byte of answer.
func TestProxyProtocolRejects(t *testing.T) {
	t.Parallel()
	req := "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
	good := string(proxyproto.AppendV1(nil, proxyClient, proxyFrontend))
	trusted := startProxied(t, proxyWhoami("native"), false, func(s *riptide.Server) {
		s.ReadHeaderTimeout = 200 * time.Millisecond
		s.ProxyProtocol.MaxHeaderBytes = 64
	})
	untrusted := startProxied(t, proxyWhoami("native"), false, func(s *riptide.Server) {
		s.ProxyProtocol.TrustedNetworks = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	})
	big := proxyproto.AppendV2(nil, &proxyproto.Header{Command: proxyproto.Proxy, Family: proxyproto.INET,
		Source: proxyClient, Destination: proxyFrontend, RawTLVs: proxyproto.AppendTLV(nil, proxyproto.TLVNoop, make([]byte, 100))}, false)
	for _, tt := range []struct {
		name, addr, send string
	}{
		{"untrusted source network", untrusted, good + req},
		{"no header", trusted, req},
		{"malformed v1", trusted, "PROXY TCP4 203.0.113.7 nothing\r\n" + req},
		{"malformed v2", trusted, "\r\n\r\n\x00\r\nQUIT\n\x31\x11\x00\x0c" + strings.Repeat("\x00", 12) + req},
		{"v2 over MaxHeaderBytes", trusted, string(big) + req},
		{"header timeout (truncated header)", trusted, good[:12]},
	} {
		t.Run(tt.name, func(t *testing.T) {
			nc, err := net.Dial("tcp", tt.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(10 * time.Second))
			nc.Write([]byte(tt.send))
			b, err := io.ReadAll(nc)
			if len(b) != 0 {
				t.Errorf("got %q, want the connection closed without an answer", b)
			}
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Errorf("connection not closed: %v", err)
			}
		})
	}
	// The trusted server still serves a good connection after all that.
	if body := mustGetBody(t, proxiedClient(t, []byte(good), 0, false, false), "http://"+trusted+"/"); !strings.HasPrefix(body, proxyClient.String()) {
		t.Errorf("got %q", body)
	}
}

// TestProxyProtocolTLSHandshakeAfterHeader: the TLS handshake reads the
// bytes that came in the same segment as the header.
func TestProxyProtocolTLSHandshakeAfterHeader(t *testing.T) {
	t.Parallel()
	addr := startProxied(t, proxyWhoami("native"), true, nil)
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	hdr := proxyproto.AppendV1(nil, proxyClient, proxyFrontend)
	tc := tls.Client(&prefixWriter{Conn: nc, prefix: hdr}, h2TestClientTLS(t, "http/1.1"))
	if _, err := io.WriteString(tc, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(tc)
	if !strings.Contains(string(b), proxyClient.String()) {
		t.Errorf("got %q", b)
	}
}

// prefixWriter sends prefix together with the first write (the ClientHello).
type prefixWriter struct {
	net.Conn
	prefix []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	if p.prefix != nil {
		_, err := p.Conn.Write(append(p.prefix, b...))
		p.prefix = nil
		return len(b), err
	}
	return p.Conn.Write(b)
}

// TestProxyListenerUnderOwnTLS: a TLS listener made over ProxyListener and
// handed to Serve reads the header before the handshake.
func TestProxyListenerUnderOwnTLS(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &riptide.Server{Handler: proxyWhoami("native"), Logger: slog.New(slog.DiscardHandler),
		ProxyProtocol: &riptide.ProxyConfig{TrustedNetworks: loopback}}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(tls.NewListener(srv.ProxyListener(ln), h2TestServerTLS(t))) }()
	t.Cleanup(func() { srv.Close(); <-done })
	c := proxiedClient(t, proxyproto.AppendV1(nil, proxyClient, proxyFrontend), 0, true, true)
	if body := mustGetBody(t, c, "https://"+ln.Addr().String()+"/"); !strings.HasPrefix(body, proxyClient.String()) {
		t.Errorf("got %q", body)
	}
}

// TestProxyProtocolSendfile: a compat handler copying a file (the socket's
// ReadFrom, sendfile) behind a PROXY header sends it whole.
func TestProxyProtocolSendfile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "f")
	data := bytes.Repeat([]byte("0123456789abcdef"), 8<<10)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	addr := startProxied(t, riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, path)
	})), false, nil)
	c := proxiedClient(t, proxyproto.AppendV1(nil, proxyClient, proxyFrontend), 0, false, false)
	if body := mustGetBody(t, c, "http://"+addr+"/"); body != string(data) {
		t.Errorf("got %d bytes, want %d", len(body), len(data))
	}
}
