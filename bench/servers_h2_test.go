package bench

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide/bench/internal/harness"
)

// checkH2 checks s on every HTTP/2 workload: started as the harness starts
// it (-h2c or -tls), it must answer / over HTTP/2 to Go's HTTP/2 client
// (http.Transport restricted by Protocols to HTTP/2 only, prior knowledge
// for h2c, ALPN h2 for TLS: x/net's http2.Transport is deprecated in favour
// of it) with ProtoMajor 2 and the workload's body, still answer HTTP/1.1 on the
// same port (h2c shares it; TLS falls back to http/1.1 by ALPN), and, when
// h2load is installed, answer a short h2load run with no failure and the
// expected protocol. A server without HTTP/2 must be skipped by the harness
// and refuse the flag.
func checkH2(t *testing.T, ctx context.Context, s harness.Server, binDir string) {
	for _, w := range harness.Workloads() {
		if w.HTTP2 == harness.H2None {
			continue
		}
		t.Run(w.Name, func(t *testing.T) {
			if !s.HTTP2 {
				if s.Supports(w) {
					t.Fatalf("%s has no HTTP/2 but Supports(%s) is true", s.Name, w.Name)
				}
				if s.Kind == harness.KindGo && w.HTTP2 == harness.H2TLS && s.Supports(tlsIdle(t)) {
					// -tls is also HTTP/1.1 over TLS (the idletls workload),
					// which such a server may serve: it must not offer h2.
					checkNoH2ALPN(t, ctx, s, binDir)
				} else if s.Kind == harness.KindGo {
					// Bypass the harness's own check: the binary itself must
					// refuse the flag rather than serve HTTP/1.1 silently.
					// Bounded: a binary that accepts it would serve forever.
					rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
					defer cancel()
					out, err := exec.CommandContext(rctx, s.BinPath(binDir), append([]string{"-addr", "127.0.0.1:0"}, w.ServerFlags()...)...).CombinedOutput()
					if err == nil || rctx.Err() != nil {
						t.Fatalf("%s accepted %v: %s", s.Name, w.ServerFlags(), out)
					}
				}
				return
			}
			if why := s.Unsupported(w); why != "" {
				t.Skip(why) // riptide-tlsloop: the TLS workloads only (harness TestTLSOnly)
			}
			p, err := harness.Start(ctx, s, harness.StartOptions{BinDir: binDir, Workload: &w, Log: testLog{t}})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Stop()

			var p1, p2 http.Protocols
			p1.SetHTTP1(true)
			scheme := "https"
			if w.HTTP2 == harness.H2C {
				scheme = "http"
				p2.SetUnencryptedHTTP2(true) // prior knowledge, never HTTP/1.1
			} else {
				p2.SetHTTP2(true) // ALPN h2 only
			}
			// Self-signed certificate. Separate configs: a Transport adds its
			// ALPN protocols to the TLSClientConfig it is given.
			h2 := &http.Transport{Protocols: &p2, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
			h1 := &http.Transport{Protocols: &p1, TLSClientConfig: &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}}}
			defer h2.CloseIdleConnections()
			defer h1.CloseIdleConnections()
			url := scheme + "://" + p.Addr + w.Path
			for i := 0; i < 3; i++ { // several streams on one connection
				checkResponse(t, h2, url, w, 2)
			}
			if s.Kind != harness.KindNghttpd { // nghttpd speaks HTTP/2 only
				checkResponse(t, h1, url, w, 1)
			}

			if h2load, err := exec.LookPath("h2load"); err == nil {
				checkH2load(t, ctx, h2load, url, w)
			} else {
				t.Log("h2load not installed: skipping the h2load check")
			}
		})
	}
}

// checkResponse sends GET url with rt and checks the protocol major
// version, status, Content-Type and body.
func checkResponse(t *testing.T, rt http.RoundTripper, url string, w harness.Workload, major int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatalf("HTTP/%d GET %s: %v", major, url, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("HTTP/%d GET %s: body: %v", major, url, err)
	}
	if resp.ProtoMajor != major {
		t.Errorf("GET %s: answered %s, want HTTP/%d", url, resp.Proto, major)
	}
	if resp.StatusCode != 200 {
		t.Errorf("GET %s (%s): status %d, want 200", url, resp.Proto, resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, w.ExpectType) {
		t.Errorf("GET %s (%s): Content-Type %q, want prefix %q", url, resp.Proto, ct, w.ExpectType)
	}
	if !bytes.Equal(body, w.ExpectBody) {
		t.Errorf("GET %s (%s): body %.40q, want %.40q", url, resp.Proto, body, w.ExpectBody)
	}
}

// checkH2load runs a short, request-bounded h2load against url, as the
// harness drives the workload (one thread, several streams per
// connection), and requires every request to succeed over the expected
// protocol.
func checkH2load(t *testing.T, ctx context.Context, h2load, url string, w harness.Workload) {
	t.Helper()
	const n = 200
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, h2load, "-t1", "-c2", fmt.Sprintf("-m%d", harness.H2Streams),
		fmt.Sprintf("-n%d", n), url).CombinedOutput()
	if err != nil {
		t.Fatalf("h2load: %v\n%s", err, out)
	}
	proto := "h2c"
	if w.HTTP2 == harness.H2TLS {
		proto = "h2"
	}
	if !regexp.MustCompile(`(?m)^Application protocol: ` + proto + `$`).Match(out) {
		t.Errorf("h2load did not negotiate %s:\n%s", proto, out)
	}
	if !bytes.Contains(out, []byte(fmt.Sprintf("%d succeeded, 0 failed, 0 errored, 0 timeout", n))) ||
		!bytes.Contains(out, []byte(fmt.Sprintf("status codes: %d 2xx,", n))) {
		t.Errorf("h2load: not all %d requests succeeded with 2xx:\n%s", n, out)
	}
}

// tlsIdle is the idletls workload (HTTP/1.1 over TLS).
func tlsIdle(t *testing.T) harness.Workload {
	for _, w := range harness.Workloads() {
		if w.Name == "idletls" {
			return w
		}
	}
	t.Fatal("no idletls workload")
	return harness.Workload{}
}

// checkNoH2ALPN starts s with -tls (as idletls does) and checks that a TLS
// client offering h2 and http/1.1 gets http/1.1: a server without HTTP/2
// must not select h2 by ALPN.
func checkNoH2ALPN(t *testing.T, ctx context.Context, s harness.Server, binDir string) {
	w := tlsIdle(t)
	p, err := harness.Start(ctx, s, harness.StartOptions{BinDir: binDir, Workload: &w, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2", "http/1.1"}}}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := d.DialContext(dctx, "tcp", p.Addr)
	if err != nil {
		t.Fatalf("TLS handshake with %s: %v", s.Name, err)
	}
	defer c.Close()
	if proto := c.(*tls.Conn).ConnectionState().NegotiatedProtocol; proto == "h2" {
		t.Fatalf("%s has no HTTP/2 but selected h2 by ALPN", s.Name)
	}
}
