package websocket

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/testcert"
)

// serveH2 starts srv on loopback with RFC 8441 enabled, over TLS (h2 by
// ALPN) when secure, else over cleartext HTTP/2 with prior knowledge, and
// returns its URL and the client's TLS configuration.
func serveH2(t *testing.T, srv *riptide.Server, secure bool) (string, *tls.Config) {
	t.Helper()
	if srv.HTTP2 == nil {
		srv.HTTP2 = &riptide.HTTP2Config{EnableConnectProtocol: true}
	}
	if !secure {
		srv.HTTP2.H2C = true
		return serveServer(t, srv), &tls.Config{}
	}
	return serveWSS(t, srv)
}

// serveWSS starts srv over TLS on loopback (ServeTLS: on the event loop's
// TLS engine unless srv says otherwise), closed when the test ends, and
// returns its wss:// URL and the client's TLS configuration.
func serveWSS(t testing.TB, srv *riptide.Server) (string, *tls.Config) {
	t.Helper()
	cert, err := testcert.Cert()
	if err != nil {
		t.Fatal(err)
	}
	srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { srv.ServeTLS(ln, "", ""); close(done) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return "wss://" + ln.Addr().String() + "/", &tls.Config{RootCAs: testcert.Pool(cert), ServerName: "127.0.0.1"}
}

// TestEchoHTTP2: WebSocket over HTTP/2 (RFC 8441) with the switch on:
// Upgrade (native, both engines) and Accept (compat door) serve an
// extended CONNECT, answered 200, on a TLS and on an h2c connection, and
// the same exercise as over HTTP/1.1 passes (messages of every kind up to
// 500 KB, fragmented, compressed with takeover, ping, close handshake).
// The server's stats count each extended CONNECT.
func TestEchoHTTP2(t *testing.T) {
	for _, secure := range []bool{true, false} {
		for _, e := range []riptide.Engine{riptide.EngineGoroutine, riptide.EngineAuto} {
			for _, door := range []string{"native", "compat"} {
				name := door + "/" + e.String() + map[bool]string{true: "/tls", false: "/h2c"}[secure]
				t.Run(name, func(t *testing.T) {
					h := nativeEcho(echoOpts)
					if door == "compat" {
						h = riptide.FromHTTP(compatEcho(echoOpts))
					}
					srv := &riptide.Server{Handler: h, Engine: e}
					url, tc := serveH2(t, srv, secure)
					exerciseDial(t, url, true, tc, true)
					exerciseDial(t, url, false, tc, true)
					var st riptide.Stats
					srv.Stats(&st)
					if st.H2ExtendedConnects != 2 || st.H2Streams != 2 {
						t.Errorf("stats: %d extended CONNECTs in %d HTTP/2 streams, want 2 in 2", st.H2ExtendedConnects, st.H2Streams)
					}
				})
			}
		}
	}
}

// TestHTTP2SwitchOff: without EnableConnectProtocol the server does not
// send SETTINGS_ENABLE_CONNECT_PROTOCOL, so an RFC 8441 client does not
// try (x/net reports the server does not support extended CONNECT), and
// no handler runs.
func TestHTTP2SwitchOff(t *testing.T) {
	ran := make(chan struct{}, 1)
	srv := &riptide.Server{HTTP2: &riptide.HTTP2Config{}, Handler: riptide.HandlerFunc(func(x *riptide.Ctx) {
		ran <- struct{}{}
		Upgrade(x, nil)
	})}
	url, tc := serveH2(t, srv, true)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := Dial(ctx, url, &Options{HTTP2: true, TLSClientConfig: tc})
	if err == nil || !strings.Contains(err.Error(), "extended connect not supported") {
		t.Fatalf("Dial over HTTP/2 to a server without the setting: %v, %v; want x/net's extended connect not supported", c, err)
	}
	select {
	case <-ran:
		t.Error("a handler ran")
	default:
	}
	var st riptide.Stats
	srv.Stats(&st)
	if st.H2ExtendedConnects != 0 {
		t.Errorf("%d extended CONNECTs counted", st.H2ExtendedConnects)
	}
}

// TestHTTP2HandshakeRefusals: over HTTP/2 an extended CONNECT without
// Sec-WebSocket-Version 13 gets 426 and the version, a cross-origin one
// 403, a GET upgrade 501, and a route that does not serve WebSocket
// answers its own non-2xx status, which the client reports as a refused
// handshake (RFC 8441 §5: only 2xx opens the tunnel).
func TestHTTP2HandshakeRefusals(t *testing.T) {
	srv := &riptide.Server{Handler: riptide.HandlerFunc(func(x *riptide.Ctx) {
		if string(x.Path()) == "/ws" {
			Upgrade(x, nil)
			return
		}
		x.Error(http.StatusNotFound, "no WebSocket here")
	})}
	url, tc := serveH2(t, srv, true)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc2 := range []struct {
		name   string
		path   string
		header http.Header
		want   int
	}{
		{"version 8", "ws", http.Header{"Sec-Websocket-Version": {"8"}}, http.StatusUpgradeRequired},
		{"cross-origin", "ws", http.Header{"Origin": {"https://evil.example"}}, http.StatusForbidden},
		{"another route", "other", nil, http.StatusNotFound},
	} {
		t.Run(tc2.name, func(t *testing.T) {
			_, resp, err := Dial(ctx, url+tc2.path, &Options{HTTP2: true, TLSClientConfig: tc, Header: tc2.header})
			var he *HandshakeError
			if !errors.As(err, &he) || resp == nil || resp.StatusCode != tc2.want || resp.ProtoMajor != 2 {
				t.Fatalf("Dial: %v, %+v; want a HandshakeError and HTTP/2 %d", err, resp, tc2.want)
			}
			if tc2.want == http.StatusUpgradeRequired && resp.Header.Get("Sec-WebSocket-Version") != "13" {
				t.Errorf("426 without Sec-WebSocket-Version: 13: %v", resp.Header)
			}
		})
	}
	// A GET with the HTTP/1.1 upgrade fields over HTTP/2 is no WebSocket
	// request there: 501.
	tr := &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest("GET", "https"+strings.TrimPrefix(url, "wss")+"ws", nil)
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 || resp.StatusCode != http.StatusNotImplemented {
		t.Errorf("GET upgrade over HTTP/2: HTTP/%d %d, want HTTP/2 501", resp.ProtoMajor, resp.StatusCode)
	}
}

// TestHTTP2Backpressure: a client that stops reading stops the server's
// writes at the stream's flow-control window (x/net's client grants 4 MiB
// per stream): the server's WriteMessage blocks there, nothing queues in
// the server, and the write deadline ends the wait with an error.
func TestHTTP2Backpressure(t *testing.T) {
	type result struct {
		written int
		err     error
	}
	res := make(chan result, 1)
	msg := make([]byte, 16<<10)
	srv := &riptide.Server{Handler: riptide.HandlerFunc(func(x *riptide.Ctx) {
		c, err := Upgrade(x, nil)
		if err != nil {
			return
		}
		defer c.NetConn().Close()
		written := 0
		for written < 64<<20 {
			c.SetWriteDeadline(time.Now().Add(time.Second))
			if err = c.WriteMessage(BinaryMessage, msg); err != nil {
				break
			}
			written += len(msg)
		}
		res <- result{written, err}
	})}
	url, tc := serveH2(t, srv, true)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := Dial(ctx, url, &Options{HTTP2: true, TLSClientConfig: tc})
	if err != nil {
		t.Fatal(err)
	}
	defer c.NetConn().Close()
	r := <-res
	const window = 4 << 20 // x/net's per-stream receive window
	if r.err == nil || r.written > window || r.written < window-len(msg)-(1<<10) {
		t.Errorf("server wrote %d bytes to a client that does not read, then %v; want about the %d-byte window, then a deadline error", r.written, r.err, window)
	}
}

// TestHTTP2PeerEnds: the client ending its side of the stream
// (END_STREAM) without a close frame, or resetting it (RST_STREAM), ends
// the server's reads with an error (io.ErrUnexpectedEOF: no close frame
// came), and the server's Conn closes.
func TestHTTP2PeerEnds(t *testing.T) {
	for _, how := range []string{"END_STREAM", "RST_STREAM"} {
		t.Run(how, func(t *testing.T) {
			got := make(chan error, 1)
			srv := &riptide.Server{Handler: riptide.HandlerFunc(func(x *riptide.Ctx) {
				c, err := Upgrade(x, nil)
				if err != nil {
					return
				}
				_, _, err = c.ReadMessage()
				c.Close()
				got <- err
			})}
			url, tc := serveH2(t, srv, true)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, _, err := Dial(ctx, url, &Options{HTTP2: true, TLSClientConfig: tc, CloseTimeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			sc := c.NetConn().(*h2ClientStream)
			if how == "END_STREAM" {
				sc.pw.Close()
			} else {
				sc.body.Close() // x/net resets a stream whose response body is closed unread
			}
			select {
			case err := <-got:
				if err == nil {
					t.Error("the server's read ended without an error")
				}
				t.Logf("server read: %v", err)
			case <-ctx.Done():
				t.Fatal("the server's read did not end")
			}
			c.NetConn().Close()
		})
	}
}
