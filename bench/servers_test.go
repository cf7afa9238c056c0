package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riptide-http/riptide/bench/internal/harness"
)

// TestServers builds every registered server and checks that each answers,
// in the bench profile, exactly the requests every workload sends (the same
// bytes wrk sends, including pipelined batches, Connection: close and many
// connections) and, in the probe profile, every probe route. A peer that
// answers wrongly would otherwise skew a benchmark run silently.
func TestServers(t *testing.T) {
	wd, _ := os.Getwd()
	root, err := harness.FindRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	var avail []harness.Server
	for _, s := range harness.Registry() {
		if err := s.Available(root); err != nil {
			if s.Optional {
				t.Run(s.Name, func(t *testing.T) { t.Skipf("optional server unavailable: %v", err) })
				continue
			}
			t.Fatalf("server %s: %v", s.Name, err)
		}
		avail = append(avail, s)
	}
	binDir := t.TempDir()
	ctx := context.Background()
	if err := harness.Build(ctx, root, binDir, avail); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(harness.Cleanup)

	for _, s := range avail {
		t.Run(s.Name, func(t *testing.T) {
			t.Run("bench", func(t *testing.T) {
				var shared *harness.Proc // one process for all workloads, except the ceiling
				for _, w := range harness.Workloads() {
					if !s.Supports(w) || w.HTTP2 != harness.H2None || w.HTTP3 || w.WS != harness.WSNone {
						continue // HTTP/2, HTTP/3 and WebSocket workloads: the h2, h3 and ws subtests
					}
					t.Run(w.Name, func(t *testing.T) {
						p := shared
						own := s.Kind == harness.KindCeiling || len(w.ServerFlags()) > 0 // a process started for w alone
						if own || p == nil {
							var err error
							p, err = harness.Start(ctx, s, harness.StartOptions{BinDir: binDir, Workload: &w, Log: testLog{t}})
							if err != nil {
								t.Fatal(err)
							}
							if own {
								defer p.Stop()
							} else {
								shared = p
							}
						}
						checkWorkload(t, p.Addr, w)
					})
				}
				if shared != nil {
					shared.Stop()
				}
			})
			t.Run("h2", func(t *testing.T) { checkH2(t, ctx, s, binDir) })
			t.Run("h3", func(t *testing.T) { checkH3(t, ctx, s, binDir) })
			t.Run("ws", func(t *testing.T) { checkWS(t, ctx, s, binDir) })
			t.Run("probe", func(t *testing.T) {
				if !s.Probe {
					if _, err := harness.Start(ctx, s, harness.StartOptions{BinDir: binDir, Profile: "probe"}); err == nil {
						t.Fatalf("%s started with -profile probe, which it does not implement", s.Name)
					}
					return
				}
				p, err := harness.Start(ctx, s, harness.StartOptions{BinDir: binDir, Profile: "probe", Log: testLog{t}})
				if err != nil {
					t.Fatal(err)
				}
				defer p.Stop()
				checkProbe(t, p.Addr)
			})
		})
	}
}

// testLog forwards server output to the test log.
type testLog struct{ t *testing.T }

func (l testLog) Write(b []byte) (int, error) {
	l.t.Logf("server: %s", bytes.TrimRight(b, "\n"))
	return len(b), nil
}

// checkWorkload sends w's request batch twice on one connection (or once
// per connection for Connection: close) and, for the c1000 workload, over
// many connections at once.
func checkWorkload(t *testing.T, addr string, w harness.Workload) {
	t.Helper()
	conns := 1
	if w.Conns > 0 {
		conns = w.Conns
	}
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := exchange(addr, w); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n < 3 {
			t.Error(err)
		}
		n++
	}
	if n > 0 {
		t.Errorf("%d of %d connections failed", n, conns)
	}
}

// exchange runs one connection's worth of w's traffic and checks every
// response.
func exchange(addr string, w harness.Workload) error {
	var c net.Conn
	var err error
	if w.TLS { // HTTP/1.1 over TLS
		// As the load generators: the idletls client offers ALPN
		// http/1.1 only, wrk (the tls workload) no protocol at all.
		cfg := &tls.Config{InsecureSkipVerify: true}
		if w.Idle > 0 {
			cfg.NextProtos = []string{"http/1.1"}
		}
		d := &net.Dialer{Timeout: 5 * time.Second}
		var tc *tls.Conn
		tc, err = tls.DialWithDialer(d, "tcp", addr, cfg)
		if err == nil && tc.ConnectionState().NegotiatedProtocol == "h2" {
			tc.Close()
			return fmt.Errorf("ALPN chose h2 when only http/1.1 was offered")
		}
		c = tc
	} else {
		c, err = net.DialTimeout("tcp", addr, 5*time.Second)
	}
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(c)
	batches := 2
	if w.ExpectClose {
		batches = 1
	}
	method := w.Method
	if method == "" {
		method = "GET"
	}
	req := &http.Request{Method: method}
	for b := 0; b < batches; b++ {
		if _, err := c.Write(w.RawRequests(addr)); err != nil {
			return fmt.Errorf("batch %d: write: %w", b, err)
		}
		for i := 0; i < max(w.Pipeline, 1); i++ {
			resp, err := http.ReadResponse(br, req)
			if err != nil {
				return fmt.Errorf("batch %d response %d: %w", b, i, err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return fmt.Errorf("batch %d response %d: body: %w", b, i, err)
			}
			if resp.StatusCode != 200 {
				return fmt.Errorf("batch %d response %d: status %d, want 200", b, i, resp.StatusCode)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, w.ExpectType) {
				return fmt.Errorf("Content-Type %q, want prefix %q", ct, w.ExpectType)
			}
			if !bytes.Equal(body, w.ExpectBody) {
				return fmt.Errorf("body %.40q (%d bytes), want %.40q (%d bytes)", body, len(body), w.ExpectBody, len(w.ExpectBody))
			}
		}
	}
	if w.ExpectClose {
		if n, err := br.Read(make([]byte, 1)); err != io.EOF {
			return fmt.Errorf("after Connection: close: read %d bytes, err %v; want EOF", n, err)
		}
	}
	return nil
}

// checkProbe checks every probe-profile route.
func checkProbe(t *testing.T, addr string) {
	t.Helper()
	cases := []struct {
		name, method, raw string
		check             func(status int, h http.Header, body string) error
	}{
		{"GET /", "GET", "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", func(st int, h http.Header, body string) error {
			return want(st == 200 && body == "Hello, World!", "200 Hello, World!", st, body)
		}},
		{"HEAD /", "HEAD", "HEAD / HTTP/1.1\r\nHost: %s\r\n\r\n", func(st int, h http.Header, body string) error {
			return want(st == 200 && body == "", "200 with no body", st, body)
		}},
		{"OPTIONS /", "OPTIONS", "OPTIONS / HTTP/1.1\r\nHost: %s\r\n\r\n", func(st int, h http.Header, body string) error {
			return want(st == 200, "200", st, body)
		}},
		{"POST / echoes the body", "POST", "POST / HTTP/1.1\r\nHost: %s\r\nContent-Length: 11\r\n\r\nprobe-body!", func(st int, h http.Header, body string) error {
			return want(st == 200 && body == "probe-body!", "200 probe-body!", st, body)
		}},
		{"POST /echo returns the headers", "POST", "POST /echo HTTP/1.1\r\nHost: %s\r\nX-Probe-One: alpha\r\nX-Probe-Two: beta gamma\r\nContent-Length: 0\r\n\r\n", func(st int, h http.Header, body string) error {
			lines := strings.Split(body, "\n")
			ok := st == 200 && contains(lines, "X-Probe-One: alpha") && contains(lines, "X-Probe-Two: beta gamma") &&
				contains(lines, "Host: "+addr)
			return want(ok, "200 with X-Probe-One: alpha, X-Probe-Two: beta gamma and Host lines", st, body)
		}},
		{"GET /cookie returns the cookies", "GET", "GET /cookie HTTP/1.1\r\nHost: %s\r\nCookie: a=1; session=xyz\r\n\r\n", func(st int, h http.Header, body string) error {
			return want(st == 200 && body == "a=1\nsession=xyz\n", "200 a=1\\nsession=xyz\\n", st, body)
		}},
	}
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(c)
	for _, tc := range cases { // all on one keep-alive connection
		if _, err := fmt.Fprintf(c, tc.raw, addr); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		resp, err := http.ReadResponse(br, &http.Request{Method: tc.method})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: body: %v", tc.name, err)
		}
		if err := tc.check(resp.StatusCode, resp.Header, string(body)); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func want(ok bool, what string, status int, body string) error {
	if ok {
		return nil
	}
	return fmt.Errorf("got %d %q, want %s", status, body, what)
}

func contains(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}
