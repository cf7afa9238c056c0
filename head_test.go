package riptide_test

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/testcert"
)

// headAnswer is a response as a head-rule test reads it off the wire:
// body holds every body byte that came, also for HEAD.
type headAnswer struct {
	status int
	header http.Header
	body   []byte
}

// headPads is the number of extra request fields that makes a request
// refused with 431 (MaxHeaderCount below).
const (
	headMaxFields = 8
	headPads      = 20
)

// headRequest sends method / (with headPads extra fields when many) over
// one protocol of addr (HTTP/1.1 and h2c) or h3 (HTTP/3 in memory).
type headRequest func(t *testing.T, method string, many bool) headAnswer

// TestResponseHeadRules: one set of response-head rules over HTTP/1.1, h2c
// and HTTP/3 (in memory), native and compat doors: every final head
// carries Date and the Server's Name, and Alt-Svc while an HTTP/3
// listener runs over TLS only (HTTP/1.1 and HTTP/2 over TLS: not on
// cleartext, which no browser takes an alternative from, nor over HTTP/3
// itself); a body of known length says
// its Content-Length, also in the answer to HEAD; no answer to HEAD
// carries body bytes, the server's canned ones (431 here) included.
func TestResponseHeadRules(t *testing.T) {
	t.Parallel()
	const altSvc = `h3=":443"; ma=3600`
	canned431 := "Request Header Fields Too Large\n"
	for _, door := range []string{"native", "compat"} {
		var h riptide.Handler = riptide.HandlerFunc(func(x *riptide.Ctx) { x.WriteString("hello") })
		if door == "compat" {
			h = riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "hello") }))
		}
		srv := &riptide.Server{
			Handler:        h,
			Name:           "riptide-test",
			MaxHeaderCount: headMaxFields,
			HTTP2:          &riptide.HTTP2Config{H2C: true},
			Logger:         slog.New(slog.DiscardHandler),
		}
		cert, err := testcert.Cert()
		if err != nil {
			t.Fatal(err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
		addr := riptide.ServeTest(t, srv, riptide.TestServeOptions{}).Addr
		tlsAddr := riptide.ServeTest(t, srv, riptide.TestServeOptions{TLS: true}).Addr
		h3c := h3PipeClient(t, srv) // an HTTP/3 listener: Alt-Svc on the TLS ones
		protos := []struct {
			name   string
			send   headRequest
			altSvc bool
		}{
			{"HTTP/1.1", h1HeadRequest(dialHead(addr)), false},
			{"h2c", h2cHeadRequest(dialHead(addr)), false},
			{"HTTP/1.1+TLS", h1HeadRequest(dialHeadTLS(tlsAddr, cert, "http/1.1")), true},
			{"h2", h2cHeadRequest(dialHeadTLS(tlsAddr, cert, "h2")), true},
			{"HTTP/3", h3HeadRequest(h3c), false},
		}
		for _, p := range protos {
			for _, tc := range []struct {
				method string
				many   bool
				status int
				body   string // the GET's; HEAD gets none
			}{
				{"GET", false, 200, "hello"},
				{"HEAD", false, 200, "hello"},
				{"GET", true, 431, canned431},
				{"HEAD", true, 431, canned431},
			} {
				name := fmt.Sprintf("%s/%s/%s/%d", door, p.name, tc.method, tc.status)
				t.Run(name, func(t *testing.T) {
					a := p.send(t, tc.method, tc.many)
					if a.status != tc.status {
						t.Fatalf("status %d, want %d", a.status, tc.status)
					}
					wantBody := tc.body
					if tc.method == "HEAD" {
						wantBody = ""
					}
					if string(a.body) != wantBody {
						t.Errorf("body %q, want %q", a.body, wantBody)
					}
					if cl := a.header.Values("Content-Length"); len(cl) != 1 || cl[0] != strconv.Itoa(len(tc.body)) {
						t.Errorf("Content-Length %q, want [%d]", cl, len(tc.body))
					}
					if d := a.header.Values("Date"); len(d) != 1 {
						t.Errorf("Date %q, want one", d)
					} else if _, err := http.ParseTime(d[0]); err != nil {
						t.Errorf("Date %q: %v", d[0], err)
					}
					if s := a.header.Values("Server"); len(s) != 1 || s[0] != "riptide-test" {
						t.Errorf("Server %q, want [riptide-test]", s)
					}
					as := a.header.Values("Alt-Svc")
					switch {
					case p.altSvc && (len(as) != 1 || as[0] != altSvc):
						t.Errorf("Alt-Svc %q, want [%s]", as, altSvc)
					case !p.altSvc && len(as) != 0:
						t.Errorf("Alt-Svc %q over %s, want none", as, p.name)
					}
					if te := a.header.Values("Transfer-Encoding"); len(te) != 0 {
						t.Errorf("Transfer-Encoding %q on a body of known length", te)
					}
				})
			}
		}
	}
}

// padFields returns the extra request fields of a request with many.
func padFields(many bool) [][2]string {
	if !many {
		return nil
	}
	fs := make([][2]string, headPads)
	for i := range fs {
		fs[i] = [2]string{"X-Pad-" + strconv.Itoa(i), "p"}
	}
	return fs
}

// h1HeadRequest sends the request on a new connection; one the server
// keeps open is sent a second request, GET /, so that body bytes of the
// first show as what precedes the second's status line.
func h1HeadRequest(dial headDialer) headRequest {
	return func(t *testing.T, method string, many bool) headAnswer {
		t.Helper()
		nc := dial(t)
		var b strings.Builder
		b.WriteString(method + " / HTTP/1.1\r\nHost: example.com\r\n")
		for _, f := range padFields(many) {
			b.WriteString(f[0] + ": " + f[1] + "\r\n")
		}
		b.WriteString("\r\n")
		if !many {
			b.WriteString("GET / HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n")
		}
		if _, err := io.WriteString(nc, b.String()); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(nc)
		req, _ := http.NewRequest(method, "http://example.com/", nil)
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		rest, _ := io.ReadAll(br)
		if i := bytes.Index(rest, []byte("HTTP/1.1 ")); i >= 0 && !many {
			rest = rest[:i]
		}
		return headAnswer{status: resp.StatusCode, header: resp.Header, body: append(body, rest...)}
	}
}

// h2cHeadRequest sends the request as stream 1 of a new h2c connection
// (prior knowledge) and reads the stream's frames to its end.
func h2cHeadRequest(dial headDialer) headRequest {
	return func(t *testing.T, method string, many bool) headAnswer {
		t.Helper()
		nc := dial(t)
		if _, err := io.WriteString(nc, http2.ClientPreface); err != nil {
			t.Fatal(err)
		}
		fr := http2.NewFramer(nc, nc)
		fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
		if err := fr.WriteSettings(); err != nil {
			t.Fatal(err)
		}
		var blk bytes.Buffer
		enc := hpack.NewEncoder(&blk)
		for _, f := range append([][2]string{{":method", method}, {":scheme", "http"}, {":authority", "example.com"}, {":path", "/"}}, padFields(many)...) {
			enc.WriteField(hpack.HeaderField{Name: strings.ToLower(f[0]), Value: f[1]})
		}
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: blk.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
		a := headAnswer{header: http.Header{}}
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				t.Fatalf("reading the response: %v", err)
			}
			if f.Header().StreamID != 1 {
				if g, ok := f.(*http2.GoAwayFrame); ok {
					t.Fatalf("GOAWAY %v", g.ErrCode)
				}
				continue
			}
			switch f := f.(type) {
			case *http2.MetaHeadersFrame:
				for _, hf := range f.Fields {
					if hf.Name == ":status" {
						a.status, _ = strconv.Atoi(hf.Value)
					} else {
						a.header.Add(hf.Name, hf.Value)
					}
				}
				if f.StreamEnded() {
					return a
				}
			case *http2.DataFrame:
				a.body = append(a.body, f.Data()...)
				if f.StreamEnded() {
					return a
				}
			case *http2.RSTStreamFrame:
				t.Fatalf("stream reset: %v (status %d, body %q)", f.ErrCode, a.status, a.body)
			}
		}
	}
}

// h3HeadRequest sends the request on a stream of c, an h3PipeClient, whose
// body holds every DATA byte, also for HEAD.
func h3HeadRequest(c *http.Client) headRequest {
	return func(t *testing.T, method string, many bool) headAnswer {
		t.Helper()
		req, _ := http.NewRequest(method, "https://example.com/", nil)
		for _, f := range padFields(many) {
			req.Header.Set(f[0], f[1])
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		return headAnswer{status: resp.StatusCode, header: resp.Header, body: body}
	}
}

// headDialer opens a connection for one head request, closed when the
// test ends.
type headDialer func(t *testing.T) net.Conn

// dialHead dials addr over TCP.
func dialHead(addr string) headDialer {
	return func(t *testing.T) net.Conn {
		t.Helper()
		nc, err := net.Dial("tcp", addr)
		return openedHead(t, nc, err)
	}
}

// dialHeadTLS dials addr over TLS offering proto (ALPN): the head requests
// then speak HTTP/1.1 or HTTP/2 over TLS.
func dialHeadTLS(addr string, cert tls.Certificate, proto string) headDialer {
	cfg := &tls.Config{RootCAs: testcert.Pool(cert), ServerName: "127.0.0.1", NextProtos: []string{proto}}
	return func(t *testing.T) net.Conn {
		t.Helper()
		nc, err := tls.Dial("tcp", addr, cfg)
		return openedHead(t, nc, err)
	}
}

// openedHead fails the test on a dial error, else bounds the connection's
// life to the test and 10 s.
func openedHead(t *testing.T, nc net.Conn, err error) net.Conn {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	return nc
}

// compatGET serves h (a compat handler) over HTTP/1.1, h2c and HTTP/3 in
// memory, sends GET / over each, and checks each answer: status 200 and
// body, then check.
func compatGET(t *testing.T, h http.HandlerFunc, body string, check func(t *testing.T, proto string, a headAnswer)) {
	srv := &riptide.Server{
		Handler: riptide.FromHTTP(h),
		HTTP2:   &riptide.HTTP2Config{H2C: true},
		Logger:  slog.New(slog.DiscardHandler),
	}
	addr := riptide.ServeTest(t, srv, riptide.TestServeOptions{}).Addr
	for name, send := range map[string]headRequest{
		"HTTP/1.1": h1HeadRequest(dialHead(addr)),
		"h2c":      h2cHeadRequest(dialHead(addr)),
		"HTTP/3":   h3HeadRequest(h3PipeClient(t, srv)),
	} {
		t.Run(name, func(t *testing.T) {
			a := send(t, "GET", false)
			if a.status != 200 || string(a.body) != body {
				t.Fatalf("status %d, body %q; want 200, %q", a.status, a.body, body)
			}
			check(t, name, a)
		})
	}
}

// TestCompatContentLengthNotDigits: a Content-Length a compat handler sets
// that is not 1*DIGIT ("+5": strconv.ParseInt takes it as 5) declares no
// length on any protocol: the value is dropped and the engine frames the
// body it got, as net/http's HTTP/2 server and quic-go do.
func TestCompatContentLengthNotDigits(t *testing.T) {
	t.Parallel()
	const body = "hello world!"
	compatGET(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", "+5")
		io.WriteString(w, body)
	}, body, func(t *testing.T, _ string, a headAnswer) {
		if cl := a.header.Values("Content-Length"); len(cl) != 1 || cl[0] != strconv.Itoa(len(body)) {
			t.Errorf("Content-Length %q, want [%d]", cl, len(body))
		}
	})
}

// TestCompatTransferEncodingOnStreams: a Transfer-Encoding a compat
// handler sets is never sent; over HTTP/2 and HTTP/3 it is dropped with
// no other effect, so the Content-Type is still sniffed (net/http's
// HTTP/2 server), while over HTTP/1.1 it stops sniffing, as in net/http's
// HTTP/1.1 server.
func TestCompatTransferEncodingOnStreams(t *testing.T) {
	t.Parallel()
	const body = "<html><body>hi</body></html>"
	compatGET(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Transfer-Encoding", "chunked")
		io.WriteString(w, body)
	}, body, func(t *testing.T, proto string, a headAnswer) {
		want := []string{"text/html; charset=utf-8"}
		if proto == "HTTP/1.1" {
			want = nil
		}
		if ct := a.header.Values("Content-Type"); !slices.Equal(ct, want) {
			t.Errorf("Content-Type %q, want %q", ct, want)
		}
		if te := a.header.Values("Transfer-Encoding"); len(te) != 0 {
			t.Errorf("Transfer-Encoding %q sent", te)
		}
	})
}
