package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

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
