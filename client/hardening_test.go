package client

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide/h1"
)

// The tests in this file play a malicious or broken server against the
// client (issue 14): each checks one defence.

// answerAndClose returns a handler that writes resp and closes the
// connection.
func answerAndClose(resp string) func(net.Conn, *h1.Request, []byte) bool {
	return func(c net.Conn, req *h1.Request, body []byte) bool {
		c.Write([]byte(resp))
		return false
	}
}

// TestBodyNotSizedFromContentLength: a peer's Content-Length is a claim,
// not a size to allocate. A 3-byte body under an enormous declared length
// must end in io.ErrUnexpectedEOF (as with net/http), not an out-of-memory
// crash or a makeslice panic.
func TestBodyNotSizedFromContentLength(t *testing.T) {
	for _, cl := range []string{"100000000000", "4611686018427387904"} {
		t.Run(cl, func(t *testing.T) {
			s := newRawServer(t, answerAndClose("HTTP/1.1 200 OK\r\nContent-Length: "+cl+"\r\n\r\nabc"))
			c := &Client{MaxResponseBodySize: -1} // unlimited: only the allocation is under test
			var req Request
			var resp Response
			req.SetURL(s.url("/"))
			if err := c.Do(context.Background(), &req, &resp); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("Do: %v, want io.ErrUnexpectedEOF", err)
			}
			if cap(resp.body) > 1<<20 {
				t.Fatalf("body buffer of %d bytes allocated for a 3-byte body", cap(resp.body))
			}
			// RoundTrip streams: the claim reaches ContentLength, the read fails.
			hr, err := (&http.Client{Transport: &Client{}}).Get(s.url("/"))
			if err != nil {
				t.Fatal(err)
			}
			defer hr.Body.Close()
			if _, err := io.ReadAll(hr.Body); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("RoundTrip body: %v, want io.ErrUnexpectedEOF", err)
			}
		})
	}
}

// smuggle is a Host value that would put a second request on the wire if
// written unchecked.
const smuggle = "x\r\nContent-Length: 0\r\n\r\nGET /SMUGGLED HTTP/1.1\r\nHost: x"

// TestHeaderInjectionRefused: every field the client writes is checked
// before anything is sent (RFC 9110 §5.5: no CR, LF or NUL in a value; a
// name and a method are tokens). The server must not even see a connection.
func TestHeaderInjectionRefused(t *testing.T) {
	s := echoServer(t)
	native := []struct {
		name  string
		setup func(*Request)
		c     *Client
		want  error
	}{
		{"AddHeader Host", func(r *Request) { r.AddHeader("Host", smuggle) }, &Client{}, ErrBadHeader},
		{"AddHeader host, lower case", func(r *Request) { r.AddHeader("host", "a\nb") }, &Client{}, ErrBadHeader},
		{"SetHost", func(r *Request) { r.SetHost(smuggle) }, &Client{}, ErrBadHeader},
		{"SetHost NUL", func(r *Request) { r.SetHost("a\x00b") }, &Client{}, ErrBadHeader},
		{"SetHost space", func(r *Request) { r.SetHost("a b") }, &Client{}, ErrBadHeader},
		{"value CRLF", func(r *Request) { r.AddHeader("X-A", "1\r\nX-B: 2") }, &Client{}, ErrBadHeader},
		{"name not a token", func(r *Request) { r.AddHeader("X A", "1") }, &Client{}, ErrBadHeader},
		{"Connection value CRLF", func(r *Request) { r.AddHeader("Connection", "keep-alive\r\nX: 1") }, &Client{}, ErrBadHeader},
		{"method", func(r *Request) { r.SetMethod("GET / HTTP/1.1\r\nX:") }, &Client{}, ErrBadMethod},
		{"Client.UserAgent", func(r *Request) {}, &Client{UserAgent: "ua\r\nX-Injected: 1"}, ErrBadHeader},
	}
	for _, tc := range native {
		t.Run(tc.name, func(t *testing.T) {
			var req Request
			var resp Response
			tc.setup(&req)
			req.SetURL(s.url("/")) // a URL set afterwards must not clear the error
			if err := tc.c.Do(context.Background(), &req, &resp); !errors.Is(err, tc.want) {
				t.Fatalf("Do: %v, want %v", err, tc.want)
			}
			if err := tc.c.DoStream(context.Background(), &req, &resp); !errors.Is(err, tc.want) {
				t.Fatalf("DoStream: %v, want %v", err, tc.want)
			}
		})
	}
	rt := []struct {
		name  string
		setup func(*http.Request)
		want  error
	}{
		{"req.Host", func(r *http.Request) { r.Host = smuggle }, ErrBadHeader},
		{"Header Host", func(r *http.Request) { r.Header["Host"] = []string{smuggle} }, ErrBadHeader},
		{"method", func(r *http.Request) { r.Method = "GET /x HTTP/1.1\r\nHost: y\r\n\r\nGET" }, ErrBadMethod},
		{"header value", func(r *http.Request) { r.Header.Set("X-A", "1\r\nX-B: 2") }, ErrBadHeader},
		{"trailer value", func(r *http.Request) {
			r.Body, r.ContentLength = io.NopCloser(strings.NewReader("body")), -1
			r.Trailer = http.Header{"X-T": {"1\r\n\r\nGET /SMUGGLED HTTP/1.1"}}
		}, ErrBadHeader},
		{"trailer name", func(r *http.Request) {
			r.Body, r.ContentLength = io.NopCloser(strings.NewReader("body")), -1
			r.Trailer = http.Header{"X T": {"1"}}
		}, ErrBadHeader},
	}
	for _, tc := range rt {
		t.Run("RoundTrip "+tc.name, func(t *testing.T) {
			hreq, _ := http.NewRequest("GET", s.url("/"), nil)
			tc.setup(hreq)
			if _, err := (&Client{}).RoundTrip(hreq); !errors.Is(err, tc.want) {
				t.Fatalf("RoundTrip: %v, want %v", err, tc.want)
			}
		})
	}
	if n := s.accepts.Load(); n != 0 {
		t.Fatalf("server accepted %d connections, want 0: something was sent", n)
	}
}

// sensitiveHeaders are the fields net/http drops on a redirect to a host
// that is neither the initial one nor a subdomain of it
// (net/http client.go, shouldCopyHeaderOnRedirect and its caller).
var sensitiveHeaders = []string{"Authorization", "Www-Authenticate", "Cookie", "Cookie2", "Proxy-Authorization", "Proxy-Authenticate"}

// hopServer redirects "/via/h1/h2/.../end" to "http://h1/via/h2/.../end"
// and answers "/end" with the names of the headers it received, one a
// line. Every host name reaches it through the client's Dial.
func hopServer(t *testing.T) (*rawServer, *Client) {
	s := newRawServer(t, func(c net.Conn, req *h1.Request, body []byte) bool {
		path := strings.TrimPrefix(string(req.Path), "/via/")
		if host, rest, ok := strings.Cut(path, "/"); ok && host != "" {
			c.Write([]byte("HTTP/1.1 302 Found\r\nLocation: http://" + host + "/via/" + rest + "\r\nContent-Length: 0\r\n\r\n"))
			return true
		}
		var b strings.Builder
		for _, h := range req.Headers {
			b.WriteString(http.CanonicalHeaderKey(string(h.Name)) + "\n")
		}
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", b.Len(), b.String())
		return true
	})
	var d net.Dialer
	cl := &Client{MaxRedirects: 10, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, s.addr)
	}}
	return s, cl
}

// TestRedirectStripsSensitiveHeaders: credentials and cookies set on the
// first request follow redirects to the same host (any port) and its
// subdomains only; once dropped they stay dropped, as in net/http.
func TestRedirectStripsSensitiveHeaders(t *testing.T) {
	_, cl := hopServer(t)
	for _, tc := range []struct {
		name, start, hops string
		keep              bool
	}{
		{"other host", "a.example", "b.example/", false},
		{"subdomain", "a.example", "sub.a.example/", true},
		{"other port", "a.example", "a.example:8080/", true},
		{"host differs only in case", "a.example", "A.EXAMPLE/", true},
		{"parent of the initial host", "sub.a.example", "a.example/", false},
		{"suffix but not a subdomain", "a.example", "evila.example/", false},
		{"away and back", "a.example", "b.example/a.example/", false},
		{"IPv4 to name", "127.0.0.1", "localhost/", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var req Request
			var resp Response
			if err := req.SetURL("http://" + tc.start + "/via/" + tc.hops + "end"); err != nil {
				t.Fatal(err)
			}
			for _, h := range sensitiveHeaders {
				req.AddHeader(h, "secret")
			}
			req.AddHeader("X-Keep", "1")
			if err := cl.Do(context.Background(), &req, &resp); err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, name := range strings.Split(string(resp.Body()), "\n") {
				got[name] = true
			}
			if !got["X-Keep"] {
				t.Errorf("X-Keep lost: %q", resp.Body())
			}
			for _, h := range sensitiveHeaders {
				if has := got[h]; has != tc.keep {
					t.Errorf("%s reached the final host: %v, want %v", h, has, tc.keep)
				}
			}
		})
	}
}

// endlessChunked answers with a chunked body that never ends: it writes
// until the client goes away.
func endlessChunked(c net.Conn, req *h1.Request, body []byte) bool {
	chunk := []byte("8000\r\n" + strings.Repeat("x", 0x8000) + "\r\n")
	if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")); err != nil {
		return false
	}
	for {
		if _, err := c.Write(chunk); err != nil {
			return false
		}
	}
}

// TestDefaultBodyLimit: the buffered API is bounded by default
// (DefaultMaxResponseBodySize); streaming stays unlimited unless a limit is
// set, and a negative limit turns the default off.
func TestDefaultBodyLimit(t *testing.T) {
	s := newRawServer(t, endlessChunked)
	var req Request
	var resp Response
	req.SetURL(s.url("/"))
	if err := (&Client{}).Do(context.Background(), &req, &resp); !errors.Is(err, ErrBodyTooLarge) {
		t.Fatalf("Do, endless body: %v, want ErrBodyTooLarge", err)
	}
	if n := len(resp.Body()); n > DefaultMaxResponseBodySize {
		t.Fatalf("Do buffered %d bytes, more than the default limit", n)
	}
	// A declared length above the limit fails before the body is read.
	s2 := newRawServer(t, answerAndClose(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\nabc", DefaultMaxResponseBodySize+1)))
	req.SetURL(s2.url("/"))
	if err := (&Client{}).Do(context.Background(), &req, &resp); !errors.Is(err, ErrBodyTooLarge) {
		t.Fatalf("Do, declared length above the default: %v, want ErrBodyTooLarge", err)
	}
	// Streaming with the zero value: no limit.
	req.SetURL(s.url("/"))
	if err := (&Client{}).DoStream(context.Background(), &req, &resp); err != nil {
		t.Fatal(err)
	}
	if n, err := io.CopyN(io.Discard, resp.BodyStream(), DefaultMaxResponseBodySize+1); err != nil {
		t.Fatalf("DoStream read %d bytes: %v, want no limit", n, err)
	}
	resp.Reset()
	// Streaming with a limit set: bounded.
	if err := (&Client{MaxResponseBodySize: 1 << 20}).DoStream(context.Background(), &req, &resp); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, resp.BodyStream()); !errors.Is(err, ErrBodyTooLarge) {
		t.Fatalf("DoStream with a limit: %v, want ErrBodyTooLarge", err)
	}
	resp.Reset()
}

// gzipOfZeros returns n zero bytes, gzip-compressed (a few KiB per MiB).
func gzipOfZeros(t *testing.T, n int64) []byte {
	var zb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&zb, gzip.BestSpeed)
	if _, err := io.CopyN(zw, zeroReader{}, n); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return zb.Bytes()
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestGzipBombBounded: the decompressed size counts against the body
// limit, the default one for Do included, so a small compressed body cannot
// inflate without bound.
func TestGzipBombBounded(t *testing.T) {
	bomb := gzipOfZeros(t, DefaultMaxResponseBodySize+1<<20)
	s := newRawServer(t, func(c net.Conn, req *h1.Request, body []byte) bool {
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s", len(bomb), bomb)
		return true
	})
	var req Request
	var resp Response
	req.SetURL(s.url("/"))
	if err := (&Client{Gzip: true}).Do(context.Background(), &req, &resp); !errors.Is(err, ErrBodyTooLarge) {
		t.Fatalf("Do, default limit: %v, want ErrBodyTooLarge", err)
	}
	if err := (&Client{Gzip: true, MaxResponseBodySize: 1 << 20}).Do(context.Background(), &req, &resp); !errors.Is(err, ErrBodyTooLarge) {
		t.Fatalf("Do, 1 MiB limit: %v, want ErrBodyTooLarge", err)
	}
	hc := &http.Client{Transport: &Client{MaxResponseBodySize: 1 << 20}}
	hr, err := hc.Get(s.url("/"))
	if err != nil {
		t.Fatal(err)
	}
	defer hr.Body.Close()
	if n, err := io.Copy(io.Discard, hr.Body); !errors.Is(err, ErrBodyTooLarge) {
		t.Fatalf("RoundTrip, 1 MiB limit: %d bytes, %v, want ErrBodyTooLarge", n, err)
	}
}

// Test1xxFloodBounded: interim responses are bounded in number and bytes
// (net/http bounds their bytes), before a final response and while
// waiting for "100 Continue".
func Test1xxFloodBounded(t *testing.T) {
	// 56 KB heads, within the per-head limits; 31 of them exceed Max1xxBytes.
	big := "HTTP/1.1 103 Early Hints\r\n" + strings.Repeat("Link: "+strings.Repeat("a", 8000)+"\r\n", 7) + "\r\n"
	for _, tc := range []struct {
		name, flood string
		expect      bool
	}{
		{"count", strings.Repeat("HTTP/1.1 102 Processing\r\n\r\n", 1000), false},
		{"bytes", strings.Repeat(big, Max1xxResponses-1), false},
		{"count, awaiting 100-continue", strings.Repeat("HTTP/1.1 102 Processing\r\n\r\n", 1000), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newRawServer(t, answerAndClose(tc.flood+helloResp))
			var req Request
			var resp Response
			req.SetURL(s.url("/"))
			if tc.expect {
				req.SetMethod("POST")
				req.AddHeader("Expect", "100-continue")
				req.SetBodyString("body")
			}
			if err := (&Client{}).Do(context.Background(), &req, &resp); !errors.Is(err, ErrTooMany1xx) {
				t.Fatalf("Do: %v (status %d), want ErrTooMany1xx", err, resp.StatusCode())
			}
		})
	}
	// A few interim responses are fine.
	s := newRawServer(t, fixed(strings.Repeat("HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n", 3)+helloResp))
	var req Request
	var resp Response
	req.SetURL(s.url("/"))
	if err := (&Client{}).Do(context.Background(), &req, &resp); err != nil || string(resp.Body()) != "Hello, World!" {
		t.Fatalf("three 103s: %v %q", err, resp.Body())
	}
}

// interimProxy is a proxy that answers CONNECT with the interim head
// repeated n times (n < 0: until the client goes away), then final.
func interimProxy(t *testing.T, head string, n int, final string) *url.URL {
	s := newRawServer(t, func(c net.Conn, req *h1.Request, _ []byte) bool {
		burst := []byte(strings.Repeat(head, 64))
		for i := 0; n < 0 || i < n; i += 64 {
			if n >= 0 && n-i < 64 {
				burst = burst[:len(head)*(n-i)]
			}
			if _, err := c.Write(burst); err != nil {
				return false
			}
		}
		c.Write([]byte(final))
		return false
	})
	return &url.URL{Scheme: "http", Host: s.addr}
}

// TestConnect1xxFloodBounded: a proxy's interim responses to CONNECT count
// against Max1xxResponses and Max1xxBytes like an origin's (issue 23 item
// 10: an endless stream of "100 Continue" was read for as long as it came).
func TestConnect1xxFloodBounded(t *testing.T) {
	big := "HTTP/1.1 103 Early Hints\r\n" + strings.Repeat("Link: "+strings.Repeat("a", 8000)+"\r\n", 7) + "\r\n"
	for _, tc := range []struct {
		name, head string
		n          int
		final      string
		want       error
	}{
		{"endless 100 Continue", "HTTP/1.1 100 Continue\r\n\r\n", -1, "", ErrTooMany1xx},
		{"count", "HTTP/1.1 102 Processing\r\n\r\n", Max1xxResponses + 1, "HTTP/1.1 407 Proxy Authentication Required\r\n\r\n", ErrTooMany1xx},
		{"bytes", big, Max1xxResponses - 1, "HTTP/1.1 407 Proxy Authentication Required\r\n\r\n", ErrTooMany1xx},
		{"within the bounds", "HTTP/1.1 100 Continue\r\n\r\n", Max1xxResponses, "HTTP/1.1 407 Proxy Authentication Required\r\n\r\n", &ProxyError{Status: 407}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Client{Proxy: interimProxy(t, tc.head, tc.n, tc.final)}
			// The deadline only ends the old, unbounded loop; a bounded
			// client fails long before it.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var req Request
			var resp Response
			req.SetURL("https://127.0.0.1:1/")
			err := c.Do(ctx, &req, &resp)
			var pe *ProxyError
			if want, ok := tc.want.(*ProxyError); ok {
				if !errors.As(err, &pe) || pe.Status != want.Status {
					t.Fatalf("Do: %v, want a ProxyError %d", err, want.Status)
				}
			} else if !errors.Is(err, tc.want) {
				t.Fatalf("Do: %v, want %v", err, tc.want)
			}
		})
	}
}

// unsolicitedServer answers each request with its own path as the body.
// After answering "/first" it waits for a word on send, then writes a
// second, unsolicited response (body "/first" again) and signals sent.
func unsolicitedServer(t *testing.T, send, sent chan struct{}) *rawServer {
	return newRawServer(t, func(c net.Conn, req *h1.Request, body []byte) bool {
		resp := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(req.Path), req.Path)
		c.Write([]byte(resp))
		if string(req.Path) == "/first" {
			<-send
			c.Write([]byte(resp))
			sent <- struct{}{}
		}
		return true
	})
}

// TestUnsolicitedResponseRetiresConn: bytes that arrive on an idle pooled
// connection make it unusable, however soon it is reused, so that no
// request is ever answered with another's response (net/http: "Unsolicited
// response received on idle HTTP channel"). Every API and pipelining.
func TestUnsolicitedResponseRetiresConn(t *testing.T) {
	apis := []struct {
		name string
		c    *Client
		get  func(t *testing.T, c *Client, url string) string
	}{
		{"Do", &Client{}, doBody},
		{"Do pipelined", &Client{Pipeline: 4}, doBody},
		{"DoStream", &Client{}, func(t *testing.T, c *Client, url string) string {
			var req Request
			var resp Response
			req.SetURL(url)
			if err := c.DoStream(context.Background(), &req, &resp); err != nil {
				t.Fatal(err)
			}
			return readAllString(t, resp.BodyStream())
		}},
		{"RoundTrip", &Client{}, func(t *testing.T, c *Client, url string) string {
			hr, err := (&http.Client{Transport: c}).Get(url)
			if err != nil {
				t.Fatal(err)
			}
			defer hr.Body.Close()
			return readAllString(t, hr.Body)
		}},
	}
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			send, sent := make(chan struct{}), make(chan struct{})
			s := unsolicitedServer(t, send, sent)
			if got := api.get(t, api.c, s.url("/first")); got != "/first" {
				t.Fatalf("first request answered with %q", got)
			}
			send <- struct{}{}
			<-sent
			waitUnsolicitedArrived(t, api.c, s)
			for _, path := range []string{"/second", "/third"} {
				if got := api.get(t, api.c, s.url(path)); got != path {
					t.Fatalf("request %s answered with %q", path, got)
				}
			}
		})
	}
}

func doBody(t *testing.T, c *Client, url string) string {
	var req Request
	var resp Response
	req.SetURL(url)
	if err := c.Do(context.Background(), &req, &resp); err != nil {
		t.Fatal(err)
	}
	return string(resp.Body())
}

// waitUnsolicitedArrived waits until the extra response has reached the
// client's socket (the test is about bytes already there when the
// connection is reused, not about ones still in flight).
func waitUnsolicitedArrived(t *testing.T, c *Client, s *rawServer) {
	var req Request
	req.SetURL(s.url("/"))
	p, err := c.poolFor(&req)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, list := range [][]*conn{p.idle, p.pipes} {
			for _, cn := range list {
				if !cn.live.alive() {
					return true
				}
			}
		}
		return false
	})
}

// TestPipelineSharesPoolWithStreams: with Pipeline set, connections of the
// non-pipelined APIs (DoStream, RoundTrip) and pipelined ones share the
// host's slots; an idle one of either kind must not block the other
// forever. (Found while writing FuzzClient.) The context only guards
// against a hang.
func TestPipelineSharesPoolWithStreams(t *testing.T) {
	for _, max := range []int{0, 1} {
		t.Run(fmt.Sprintf("MaxConnsPerHost=%d", max), func(t *testing.T) {
			s := newRawServer(t, fixed(helloResp))
			c := &Client{Pipeline: 4, MaxConnsPerHost: max}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var req Request
			var resp Response
			req.SetURL(s.url("/"))
			for _, step := range []string{"DoStream", "Do", "RoundTrip", "Do"} {
				var err error
				switch step {
				case "DoStream":
					if err = c.DoStream(ctx, &req, &resp); err == nil {
						readAllString(t, resp.BodyStream())
					}
				case "Do":
					err = c.Do(ctx, &req, &resp)
				case "RoundTrip":
					hreq, _ := http.NewRequestWithContext(ctx, "GET", s.url("/"), nil)
					var hr *http.Response
					if hr, err = c.RoundTrip(hreq); err == nil {
						readAllString(t, hr.Body)
						hr.Body.Close()
					}
				}
				if err != nil {
					t.Fatalf("%s: %v", step, err)
				}
			}
		})
	}
}

// TestBodyStreamWithoutBody: BodyStream of a Response that holds no
// streamed body (never used, a failed DoStream, a 101 whose connection was
// handed over) reads as empty instead of panicking. (Found by FuzzClient.)
func TestBodyStreamWithoutBody(t *testing.T) {
	var zero Response
	if n, err := zero.BodyStream().Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("zero Response: %d, %v", n, err)
	}
	for _, answer := range []string{
		"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\nbytes",
		"HTTP/1.1 2", // cut: DoStream fails
	} {
		s := newRawServer(t, answerAndClose(answer))
		var req Request
		var resp Response
		req.SetURL(s.url("/"))
		c := &Client{MaxRetries: -1}
		c.DoStream(context.Background(), &req, &resp)
		if n, err := resp.BodyStream().Read(make([]byte, 8)); n != 0 || err != io.EOF {
			t.Fatalf("after %q: %d, %v", answer, n, err)
		}
		resp.Reset()
	}
}

// newTLSRawServer is newRawServer behind TLS, with a client configuration
// that trusts it.
func newTLSRawServer(t *testing.T, handle func(c net.Conn, req *h1.Request, body []byte) bool) (*rawServer, *tls.Config) {
	ts := httptest.NewTLSServer(http.NotFoundHandler())
	cert := ts.TLS.Certificates[0]
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	ts.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, DynamicRecordSizingDisabled: true}), addr: ln.Addr().String(), handle: handle, conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(s.close)
	return s, &tls.Config{RootCAs: pool}
}

// TestUnsolicitedResponseInTLSRecord: an unsolicited response sent in the
// same TLS record as a real one can sit decrypted inside the TLS layer,
// where a peek at the socket cannot see it; it must retire the connection
// all the same.
func TestUnsolicitedResponseInTLSRecord(t *testing.T) {
	s, cfg := newTLSRawServer(t, func(c net.Conn, req *h1.Request, body []byte) bool {
		path := string(req.Path)
		if path == "/first" {
			// Larger than the client's read buffer, so that its end is
			// read straight into the caller's slice.
			path += strings.Repeat(".", 10<<10)
		}
		resp := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(path), path)
		if string(req.Path) == "/first" {
			resp += "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n/stale"
		}
		c.Write([]byte(resp)) // one TLS record
		return true
	})
	c := &Client{TLSConfig: cfg}
	get := func(path string) string {
		var req Request
		var resp Response
		req.SetURL("https://" + s.addr + path)
		if err := c.DoStream(context.Background(), &req, &resp); err != nil {
			t.Fatal(err)
		}
		var got []byte
		buf := make([]byte, 64<<10)
		for {
			n, err := resp.BodyStream().Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				return string(got)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := get("/first"); !strings.HasPrefix(got, "/first") {
		t.Fatalf("first request answered with %q", got)
	}
	for _, path := range []string{"/second", "/third"} {
		if got := get(path); got != path {
			t.Fatalf("request %s answered with %q", path, got)
		}
	}
}
