package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide/h1"
)

// fakeH3 is an HTTP3Transport that answers every request itself (200,
// "x-via: h3", body "over h3") or, while down, fails as an unreachable
// server does.
type fakeH3 struct {
	mu    sync.Mutex
	addrs []string
	down  atomic.Bool
}

func (f *fakeH3) RoundTripHTTP3(ctx context.Context, addr string, x *HTTP3Exchange) error {
	f.mu.Lock()
	f.addrs = append(f.addrs, addr)
	f.mu.Unlock()
	if f.down.Load() {
		return fmt.Errorf("%w: dial %s: no answer", ErrHTTP3Unreachable, addr)
	}
	x.SetStatus(200)
	x.AddHeader([]byte("x-via"), []byte("h3"))
	x.AddHeader([]byte("content-length"), []byte("7"))
	x.SetBody(&fakeBody{r: bytes.NewReader([]byte("over h3"))})
	return nil
}

func (f *fakeH3) CloseIdleConnections() {}

func (f *fakeH3) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.addrs...)
}

type fakeBody struct{ r *bytes.Reader }

func (b *fakeBody) Read(p []byte) (int, error) { return b.r.Read(p) }
func (b *fakeBody) Close() error               { return nil }
func (b *fakeBody) Trailers() []h1.Header      { return nil }

// altServer is a TLS server whose responses carry the Alt-Svc value set
// last (none while empty).
func altServer(t *testing.T) (*httptest.Server, *atomic.Value) {
	var alt atomic.Value
	alt.Store("")
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := alt.Load().(string); v != "" {
			w.Header().Set("Alt-Svc", v)
		}
		io.WriteString(w, "over tcp")
	}))
	t.Cleanup(ts.Close)
	return ts, &alt
}

// TestAltSvcCache: an origin moves to HTTP/3 once a response over TLS
// offers h3 in Alt-Svc, for ma seconds; "clear" moves it back; an
// unreachable alternative falls back to TCP and is left alone for
// BrokenTimeout.
func TestAltSvcCache(t *testing.T) {
	ts, alt := altServer(t)
	f := &fakeH3{}
	h3 := &HTTP3{Transport: f, BrokenTimeout: time.Hour}
	c := &Client{TLSConfig: ts.Client().Transport.(*http.Transport).TLSClientConfig, HTTP3: h3}
	var req Request
	var resp Response
	get := func() string {
		t.Helper()
		req.SetURL(ts.URL + "/")
		if err := c.Do(context.Background(), &req, &resp); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode() != 200 {
			t.Fatalf("status %d", resp.StatusCode())
		}
		if resp.ProtoMajor() == 3 && string(resp.Header("X-Via")) != "h3" {
			t.Fatalf("HTTP/3 response without its fields: %v", resp.Headers())
		}
		return string(resp.Body())
	}
	if got := get(); got != "over tcp" {
		t.Fatalf("first request: %q, want over tcp (nothing offered yet)", got)
	}
	alt.Store(`h2=":443", h3=":4433"; ma=3600`)
	if got := get(); got != "over tcp" {
		t.Fatalf("the offering response: %q, want over tcp", got)
	}
	if got := get(); got != "over h3" {
		t.Fatalf("after the offer: %q, want over h3", got)
	}
	if calls := f.calls(); len(calls) != 1 || calls[0] != "127.0.0.1:4433" {
		t.Fatalf("HTTP/3 requests went to %q, want 127.0.0.1:4433 (the origin's host, the offered port)", calls)
	}

	// clear: the next response over TCP forgets the alternative.
	h3.mu.Lock()
	for _, e := range h3.alts {
		e.expires = time.Now().Add(-time.Second) // as ma= past
	}
	h3.mu.Unlock()
	alt.Store("clear")
	if got := get(); got != "over tcp" {
		t.Fatalf("after ma expired: %q, want over tcp", got)
	}
	if got := get(); got != "over tcp" {
		t.Fatalf("after clear: %q, want over tcp", got)
	}
	h3.mu.Lock()
	n := len(h3.alts)
	h3.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d entries after clear, want 0", n)
	}

	// An unreachable alternative: the request falls back to TCP and the
	// alternative is not tried again while broken.
	alt.Store(`h3=":4433"`)
	get()
	f.down.Store(true)
	before := len(f.calls())
	if got := get(); got != "over tcp" {
		t.Fatalf("alternative down: %q, want the TCP fallback", got)
	}
	if got := get(); got != "over tcp" {
		t.Fatalf("alternative broken: %q, want over tcp", got)
	}
	if calls := f.calls(); len(calls) != before+1 {
		t.Fatalf("%d HTTP/3 attempts while broken, want 1", len(calls)-before)
	}
	// Once BrokenTimeout has passed, the alternative is tried again.
	h3.mu.Lock()
	for _, e := range h3.alts {
		e.broken = time.Now().Add(-time.Second)
	}
	h3.mu.Unlock()
	f.down.Store(false)
	if got := get(); got != "over h3" {
		t.Fatalf("broken time over: %q, want over h3", got)
	}

	// RoundTrip follows the same cache.
	hreq, _ := http.NewRequest("GET", ts.URL+"/", nil)
	hresp, err := c.RoundTrip(hreq)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(hresp.Body)
	hresp.Body.Close()
	if string(body) != "over h3" || hresp.ProtoMajor != 3 || hresp.Proto != "HTTP/3.0" || hresp.Header.Get("X-Via") != "h3" || hresp.ContentLength != 7 {
		t.Fatalf("RoundTrip: %s %q %v cl %d", hresp.Proto, body, hresp.Header, hresp.ContentLength)
	}
}

// TestAltSvcAlways: with Always, https requests go over HTTP/3 to their
// own address with no fallback, and http ones fail.
func TestAltSvcAlways(t *testing.T) {
	f := &fakeH3{}
	c := &Client{HTTP3: &HTTP3{Transport: f, Always: true}}
	var req Request
	var resp Response
	req.SetURL("https://example.test:8443/x")
	if err := c.Do(context.Background(), &req, &resp); err != nil || string(resp.Body()) != "over h3" {
		t.Fatalf("Do: %v %q", err, resp.Body())
	}
	f.down.Store(true)
	if err := c.Do(context.Background(), &req, &resp); !errors.Is(err, ErrHTTP3Unreachable) {
		t.Fatalf("unreachable with Always: %v, want ErrHTTP3Unreachable (no fallback)", err)
	}
	req.SetURL("http://example.test/x")
	if err := c.Do(context.Background(), &req, &resp); err != ErrBadURL {
		t.Fatalf("http URL with Always: %v, want ErrBadURL", err)
	}
	if calls := f.calls(); len(calls) != 2 || calls[0] != "example.test:8443" {
		t.Fatalf("calls %q", calls)
	}
}

// TestParseAltSvc: the h3 alternative of an Alt-Svc value.
func TestParseAltSvc(t *testing.T) {
	for _, tc := range []struct {
		v, addr string
		ma      time.Duration
		clear   bool
		ok      bool
	}{
		{`h3=":443"`, "example.com:443", 24 * time.Hour, false, true},
		{`h3="alt.example.com:8443"; ma=60`, "alt.example.com:8443", time.Minute, false, true},
		{`h2=":443"; ma=10, h3-29=":1", h3=":444";ma="120"; persist=1`, "example.com:444", 2 * time.Minute, false, true},
		{`clear`, "", 0, true, false},
		{` clear `, "", 0, true, false},
		{`h2=":443"`, "", 0, false, false},
		{`h3=":0"`, "", 0, false, false},
		{`h3=":99999"`, "", 0, false, false},
		{`h3=443`, "", 0, false, false},
		{`h3=":x"`, "", 0, false, false},
		{``, "", 0, false, false},
	} {
		addr, ma, clear, ok := parseAltSvc(tc.v, "example.com")
		if addr != tc.addr || ma != tc.ma || clear != tc.clear || ok != tc.ok {
			t.Errorf("%q: %q %v %v %v, want %q %v %v %v", tc.v, addr, ma, clear, ok, tc.addr, tc.ma, tc.clear, tc.ok)
		}
	}
	if addr, _, _, _ := parseAltSvc(`h3=":443"`, "::1"); addr != "[::1]:443" {
		t.Errorf("IPv6 origin: %q", addr)
	}
}

// TestAltSvcCacheBound: the cache holds at most MaxEntries origins.
func TestAltSvcCacheBound(t *testing.T) {
	h := &HTTP3{Transport: &fakeH3{}, MaxEntries: 3}
	c := &Client{HTTP3: h}
	for i := range 10 {
		p := c.lookup(fmt.Appendf(nil, "https://h%d:443", i), true, fmt.Appendf(nil, "h%d:443", i))
		h.observe(p, []byte(`h3=":443"`))
	}
	if len(h.alts) != 3 {
		t.Fatalf("%d entries, want 3 (MaxEntries)", len(h.alts))
	}
}

// FuzzParseAltSvc: any Alt-Svc value parses without panicking, and an h3
// alternative it yields is a host and a port from 1 to 65535 with a max
// age that fits 32 bits of seconds.
func FuzzParseAltSvc(f *testing.F) {
	for _, s := range []string{`h3=":443"`, `h3="alt:8443"; ma=60`, `clear`, `h2=":1", h3=":2";ma="3"`, `h3="[::1]:443"`, `h3=":"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		addr, ma, clear, ok := parseAltSvc(v, "origin.example")
		if clear && ok {
			t.Fatalf("%q: both clear and an alternative", v)
		}
		if !ok {
			return
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil || host == "" {
			t.Fatalf("%q: alternative %q: %v", v, addr, err)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			t.Fatalf("%q: port %q", v, port)
		}
		if ma < 0 || ma > (1<<32)*time.Second {
			t.Fatalf("%q: ma %v", v, ma)
		}
	})
}

// TestHTTP3NotAroundProxy: an origin reached through a proxy never goes
// over HTTP/3, which cannot be proxied: with Always its requests fail
// with ErrHTTP3Proxy, and an Alt-Svc offer is not taken (the request goes
// to the proxy).
func TestHTTP3NotAroundProxy(t *testing.T) {
	var proxied atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		http.Error(w, "no tunnel", http.StatusForbidden)
	}))
	defer proxy.Close()
	pu, _ := url.Parse(proxy.URL)
	f := &fakeH3{}
	var req Request
	var resp Response
	c := &Client{Proxy: pu, HTTP3: &HTTP3{Transport: f, Always: true}}
	req.SetURL("https://example.test/")
	if err := c.Do(context.Background(), &req, &resp); err != ErrHTTP3Proxy {
		t.Fatalf("Always through a proxy: %v, want ErrHTTP3Proxy", err)
	}
	h := &HTTP3{Transport: f}
	c = &Client{Proxy: pu, HTTP3: h}
	req.SetURL("https://example.test/")
	p, _ := c.poolFor(&req)
	h.observe(p, []byte(`h3=":443"`))
	if err := c.Do(context.Background(), &req, &resp); err == nil {
		t.Fatal("the proxy refused the tunnel, yet the request succeeded")
	}
	if calls := f.calls(); len(calls) != 0 || proxied.Load() != 1 {
		t.Fatalf("HTTP/3 requests %q, proxy requests %d: want none and 1", calls, proxied.Load())
	}
}
