package client_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/client"
)

// h2Peer is an HTTP/2 server for the interop tests: its base URL and a
// client set up to reach it (trusting its certificate over TLS, or
// listing it in H2CHosts for h2c).
type h2Peer struct {
	name string
	base string
	c    *client.Client
}

// interopHandler is the net/http face of the behaviour every peer serves:
// /echo answers the request body with its length in a header, /trailers
// sends a trailer, /duplex echoes the body piece by piece as it arrives,
// /reject answers 417 without reading the body, /early sends 103 Early
// Hints before its answer, anything else answers "hello".
func interopHandler(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/echo":
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Len", fmt.Sprint(len(b)))
		w.Header().Set("X-Proto", r.Proto)
		w.Header().Set("X-Trailer-In", r.Trailer.Get("X-Sum"))
		w.Write(b)
	case "/trailers":
		w.Header().Set("Trailer", "X-Checksum")
		w.Write([]byte("body"))
		w.Header().Set("X-Checksum", "abc")
	case "/duplex":
		// Full duplex: each piece of the body is echoed (and flushed) as
		// it arrives, the response begun before the body.
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		buf := make([]byte, 4096)
		for {
			n, err := r.Body.Read(buf)
			if n > 0 {
				w.Write(buf[:n])
				w.(http.Flusher).Flush()
			}
			if err != nil {
				return
			}
		}
	case "/reject":
		// A final response without reading the body (after Expect:
		// 100-continue, no 100 is sent).
		w.WriteHeader(http.StatusExpectationFailed)
	case "/early":
		// 103 Early Hints, then the response.
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		io.WriteString(w, "hello")
	default:
		w.Header().Set("X-Proto", r.Proto)
		io.WriteString(w, "hello")
	}
}

// testCertPool returns the certificate of httptest's TLS servers and a pool
// trusting it.
func testCert(t testing.TB) (tls.Certificate, *x509.CertPool) {
	ts := httptest.NewUnstartedServer(http.NotFoundHandler())
	ts.StartTLS()
	defer ts.Close()
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	return ts.TLS.Certificates[0], pool
}

// riptidePeer starts riptide's server, serving interopHandler through the
// compat door, over TLS (ALPN h2) or h2c.
func riptidePeer(t testing.TB, useTLS bool) h2Peer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &riptide.Server{Handler: riptide.FromHTTP(http.HandlerFunc(interopHandler)),
		HTTP2: &riptide.HTTP2Config{H2C: true}}
	p := h2Peer{name: "riptide", c: &client.Client{}}
	if useTLS {
		cert, pool := testCert(t)
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
		go srv.ServeTLS(ln, "", "")
		p.base = "https://" + ln.Addr().String()
		p.c.TLSConfig = &tls.Config{RootCAs: pool}
	} else {
		go srv.Serve(ln)
		p.base = "http://" + ln.Addr().String()
		p.c.H2CHosts = []string{ln.Addr().String()}
	}
	t.Cleanup(func() { p.c.CloseIdleConnections(); srv.Close() })
	return p
}

// netHTTPPeer starts net/http's HTTP/2 server (x/net/http2), over TLS or
// h2c.
func netHTTPPeer(t testing.TB, useTLS bool) h2Peer {
	p := h2Peer{name: "net/http", c: &client.Client{}}
	var ts *httptest.Server
	if useTLS {
		ts = httptest.NewUnstartedServer(http.HandlerFunc(interopHandler))
		ts.EnableHTTP2 = true
		ts.StartTLS()
		pool := x509.NewCertPool()
		pool.AddCert(ts.Certificate())
		p.c.TLSConfig = &tls.Config{RootCAs: pool}
	} else {
		ts = httptest.NewUnstartedServer(http.HandlerFunc(interopHandler))
		ts.Config.Protocols = new(http.Protocols)
		ts.Config.Protocols.SetHTTP1(true)
		ts.Config.Protocols.SetUnencryptedHTTP2(true)
		ts.Start()
		p.c.H2CHosts = []string{ts.Listener.Addr().String()}
	}
	p.base = ts.URL
	t.Cleanup(func() { p.c.CloseIdleConnections(); ts.Close() })
	return p
}

func h2Peers(t *testing.T) []h2Peer {
	var ps []h2Peer
	for _, useTLS := range []bool{true, false} {
		mode := "h2c"
		if useTLS {
			mode = "tls"
		}
		for _, p := range []h2Peer{riptidePeer(t, useTLS), netHTTPPeer(t, useTLS)} {
			p.name += "/" + mode
			ps = append(ps, p)
		}
	}
	return ps
}

// h1Peers are riptide's and net/http's servers reached over HTTP/1.1
// (plain http, h2c not asked for).
func h1Peers(t *testing.T) []h2Peer {
	var ps []h2Peer
	for _, p := range []h2Peer{riptidePeer(t, false), netHTTPPeer(t, false)} {
		p.name = "h1/" + p.name
		p.c.H2CHosts = nil
		ps = append(ps, p)
	}
	return ps
}

// TestH2Interop runs GET, a 1 MB POST, trailers both ways and 100
// concurrent streams against riptide's server and net/http's, over TLS and
// h2c, through the native API and the RoundTripper.
func TestH2Interop(t *testing.T) {
	for _, p := range h2Peers(t) {
		t.Run(p.name, func(t *testing.T) {
			ctx := context.Background()
			var req client.Request
			var resp client.Response
			// GET.
			req.SetURL(p.base + "/")
			if err := p.c.Do(ctx, &req, &resp); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode() != 200 || string(resp.Body()) != "hello" || string(resp.Header("x-proto")) != "HTTP/2.0" {
				t.Fatalf("GET: %d %q proto %q", resp.StatusCode(), resp.Body(), resp.Header("x-proto"))
			}
			// 1 MB POST, echoed.
			big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
			req.SetURL(p.base + "/echo")
			req.SetMethod("POST")
			req.SetBody(big)
			if err := p.c.Do(ctx, &req, &resp); err != nil {
				t.Fatal(err)
			}
			if string(resp.Header("x-len")) != "1048576" || !bytes.Equal(resp.Body(), big) {
				t.Fatalf("POST: x-len %q, body %d bytes equal %v", resp.Header("x-len"), len(resp.Body()), bytes.Equal(resp.Body(), big))
			}
			// The same body streamed, unknown length.
			req.SetBodyStream(bytes.NewReader(big), -1)
			if err := p.c.Do(ctx, &req, &resp); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(resp.Body(), big) {
				t.Fatalf("streamed POST: body %d bytes", len(resp.Body()))
			}
			// Response trailers.
			h2Trailers(t, p.c, p.base)
			// RoundTrip: http.Client over the client, trailers both ways.
			hc := &http.Client{Transport: p.c}
			hreq, _ := http.NewRequest("POST", p.base+"/echo", io.MultiReader(strings.NewReader("abc")))
			hreq.Trailer = http.Header{"X-Sum": {"7"}}
			hresp, err := hc.Do(hreq)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(hresp.Body)
			hresp.Body.Close()
			if hresp.ProtoMajor != 2 || string(b) != "abc" || hresp.Header.Get("X-Trailer-In") != "7" {
				t.Fatalf("RoundTrip: proto %d body %q trailer in %q", hresp.ProtoMajor, b, hresp.Header.Get("X-Trailer-In"))
			}
			hresp, err = hc.Get(p.base + "/trailers")
			if err != nil {
				t.Fatal(err)
			}
			b, _ = io.ReadAll(hresp.Body)
			hresp.Body.Close()
			if string(b) != "body" || hresp.Trailer.Get("X-Checksum") != "abc" {
				t.Fatalf("RoundTrip trailers: body %q trailer %v", b, hresp.Trailer)
			}
			// 100 concurrent streams, on one new connection.
			var dials atomic.Int32
			p.c.CloseIdleConnections()
			p.c.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
				dials.Add(1)
				return (&net.Dialer{}).DialContext(ctx, network, addr)
			}
			h2Concurrent(t, p.c, p.base, &dials)
		})
	}
}

// TestH2MoreConnsAtStreamLimit: with the server's (net/http's)
// SETTINGS_MAX_CONCURRENT_STREAMS at 2, 12 concurrent requests, all held
// in the handler at once, are spread over at least 6 connections (each
// opened when the others are full), and all succeed.
func TestH2MoreConnsAtStreamLimit(t *testing.T) {
	release := make(chan struct{})
	var inHandler atomic.Int32
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/warm" {
			inHandler.Add(1)
			<-release
		}
		io.WriteString(w, "ok")
	}))
	ts.Config.Protocols = new(http.Protocols)
	ts.Config.Protocols.SetUnencryptedHTTP2(true)
	ts.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: 2}
	ts.Start()
	defer ts.Close()
	ln := ts.Listener
	var dials atomic.Int32
	c := &client.Client{H2CHosts: []string{ln.Addr().String()},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}}
	defer c.CloseIdleConnections()
	// The first request learns the server's settings.
	var req client.Request
	var resp client.Response
	req.SetURL("http://" + ln.Addr().String() + "/warm")
	if err := c.Do(context.Background(), &req, &resp); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var req client.Request
			var resp client.Response
			req.SetURL("http://" + ln.Addr().String() + "/")
			if err := c.Do(context.Background(), &req, &resp); err != nil || string(resp.Body()) != "ok" {
				errs <- fmt.Errorf("%v %q", err, resp.Body())
			}
		}()
	}
	for inHandler.Load() < 12 {
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := dials.Load(); n < 6 {
		t.Errorf("12 concurrent requests at 2 streams per connection took %d connections, want at least 6", n)
	}
}
