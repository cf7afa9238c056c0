package client

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/riptide-http/riptide/h1"
)

func TestRoundTripReusesConnAfterBodyEOF(t *testing.T) {
	s := newRawServer(t, fixed(helloResp))
	hc := &http.Client{Transport: &Client{}}
	for i := 0; i < 5; i++ {
		resp, err := hc.Get(s.url("/"))
		if err != nil {
			t.Fatal(err)
		}
		if got := readAllString(t, resp.Body); got != "Hello, World!" {
			t.Fatalf("body %q", got)
		}
		resp.Body.Close()
	}
	if n := s.accepts.Load(); n != 1 {
		t.Fatalf("accepts = %d, want 1", n)
	}
}

func TestRoundTripEarlyCloseDropsConn(t *testing.T) {
	big := "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n" + strings.Repeat("z", 1000000)
	s := newRawServer(t, fixed(big))
	c := &Client{}
	hc := &http.Client{Transport: c}
	for i := 0; i < 2; i++ {
		resp, err := hc.Get(s.url("/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Read(make([]byte, 10))
		resp.Body.Close()
		if _, err := resp.Body.Read(make([]byte, 1)); err == nil {
			t.Fatal("Read after Close succeeded")
		}
	}
	if n := s.accepts.Load(); n != 2 {
		t.Fatalf("accepts = %d, want 2: an unread body closes its connection", n)
	}
}

func TestRoundTripRequestClose(t *testing.T) {
	var sawClose []bool
	s := newRawServer(t, func(c net.Conn, req *h1.Request, body []byte) bool {
		sawClose = append(sawClose, req.Close)
		c.Write([]byte(helloResp))
		return true // the client must close anyway
	})
	hc := &http.Client{Transport: &Client{}}
	for i := 0; i < 2; i++ {
		req, _ := http.NewRequest("GET", s.url("/"), nil)
		req.Close = true
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		readAllString(t, resp.Body)
		resp.Body.Close()
	}
	if n := s.accepts.Load(); n != 2 || !sawClose[0] || !sawClose[1] {
		t.Fatalf("accepts = %d, Connection: close seen %v", n, sawClose)
	}
}

func TestRoundTripTrailers(t *testing.T) {
	s := newRawServer(t, fixed("HTTP/1.1 200 OK\r\nTrailer: X-Sum\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-Sum: 42\r\n\r\n"))
	resp, err := (&http.Client{Transport: &Client{}}).Get(s.url("/"))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := resp.Trailer["X-Sum"]; !ok || v != nil {
		t.Fatalf("declared trailer before the body: %q", resp.Trailer)
	}
	if got := readAllString(t, resp.Body); got != "abc" {
		t.Fatalf("body %q", got)
	}
	if got := resp.Trailer.Get("X-Sum"); got != "42" {
		t.Fatalf("trailer %q", got)
	}
	resp.Body.Close()
}

func TestRoundTripPostAndExpectContinue(t *testing.T) {
	s := echoServer(t)
	hc := &http.Client{Transport: &Client{}}
	for _, expect := range []bool{false, true} {
		for _, sized := range []bool{false, true} {
			var body io.Reader = strings.NewReader("hello body")
			if !sized {
				body = io.MultiReader(body) // unknown length: chunked
			}
			req, _ := http.NewRequest("POST", s.url("/post"), body)
			if expect {
				req.Header.Set("Expect", "100-continue")
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got := readAllString(t, resp.Body)
			resp.Body.Close()
			if !strings.HasSuffix(got, "\n\nhello body") || strings.Contains(got, "chunked=true") == sized ||
				strings.Contains(got, "Expect: 100-continue") != expect {
				t.Fatalf("expect=%v sized=%v: server saw %q", expect, sized, got)
			}
		}
	}
}

// closeTracker records whether the transport closed the request body.
type closeTracker struct {
	io.Reader
	closed bool
}

func (c *closeTracker) Close() error { c.closed = true; return nil }

func TestRoundTripClosesRequestBody(t *testing.T) {
	s := echoServer(t)
	body := &closeTracker{Reader: strings.NewReader("x")}
	req, _ := http.NewRequest("POST", s.url("/"), body)
	resp, err := (&Client{}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !body.closed {
		t.Fatal("request body not closed after a successful round trip")
	}
	body = &closeTracker{Reader: strings.NewReader("x")}
	req, _ = http.NewRequest("POST", "http://127.0.0.1:1/", body)
	if _, err := (&Client{}).RoundTrip(req); err == nil || !body.closed {
		t.Fatalf("failed round trip: err %v, body closed %v", err, body.closed)
	}
}

func TestRoundTripRetryReplaysBody(t *testing.T) {
	s := retryServer(t)
	hc := &http.Client{Transport: &Client{}}
	for i := 0; i < 3; i++ {
		req, _ := http.NewRequest("PUT", s.url("/"), bytes.NewReader([]byte("replayable")))
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("PUT %d: %v", i, err)
		}
		readAllString(t, resp.Body)
		resp.Body.Close()
	}
}

// trailerBody is a request body that fills in its trailer when it reaches
// io.EOF, the way net/http callers compute a checksum trailer.
type trailerBody struct {
	r       io.Reader
	trailer http.Header
	sum     int
}

func (b *trailerBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	for _, c := range p[:n] {
		b.sum += int(c)
	}
	if err == io.EOF {
		b.trailer.Set("X-Sum", strconv.Itoa(b.sum))
	}
	return n, err
}

// TestRoundTripRequestTrailers: req.Trailer is sent after a chunked body,
// with the values set when the body ended, and a net/http server sees
// them in Request.Trailer.
func TestRoundTripRequestTrailers(t *testing.T) {
	type seen struct {
		te      []string
		body    string
		trailer http.Header
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.TransferEncoding, string(b), r.Trailer.Clone()}
	}))
	defer srv.Close()
	hc := &http.Client{Transport: &Client{}}

	body := &trailerBody{r: strings.NewReader("abc"), trailer: http.Header{"X-Sum": nil, "x-other": nil}}
	req, _ := http.NewRequest("POST", srv.URL, body)
	req.Trailer = body.trailer
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	s := <-got
	if len(s.te) != 1 || s.te[0] != "chunked" || s.body != "abc" {
		t.Fatalf("server saw Transfer-Encoding %q, body %q; want chunked, \"abc\"", s.te, s.body)
	}
	if v := s.trailer.Get("X-Sum"); v != strconv.Itoa('a'+'b'+'c') {
		t.Fatalf("trailer X-Sum = %q, want %d (trailers: %v)", v, 'a'+'b'+'c', s.trailer)
	}
	if _, ok := s.trailer["X-Other"]; !ok {
		t.Fatalf("trailer X-Other not announced: %v", s.trailer)
	}

	// A known length means no chunked framing, so no trailers (net/http too).
	req, _ = http.NewRequest("POST", srv.URL, strings.NewReader("abc"))
	req.Trailer = http.Header{"X-Sum": {"1"}}
	resp, err = hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if s := <-got; len(s.te) != 0 || len(s.trailer) != 0 {
		t.Fatalf("known length: Transfer-Encoding %q, trailers %v; want neither", s.te, s.trailer)
	}

	// Framing fields cannot be trailers; invalid values are not sent.
	for _, tr := range []http.Header{{"Content-Length": nil}, {"Bad Name": nil}} {
		req, _ = http.NewRequest("POST", srv.URL, io.NopCloser(strings.NewReader("abc")))
		req.Trailer = tr
		if _, err := hc.Do(req); !errors.Is(err, ErrBadHeader) {
			t.Fatalf("trailer %v: err %v, want ErrBadHeader", tr, err)
		}
	}
	body = &trailerBody{r: strings.NewReader("abc"), trailer: http.Header{"X-Sum": nil}}
	req, _ = http.NewRequest("POST", srv.URL, body)
	req.Trailer = http.Header{"X-Evil": {"a\r\nInjected: 1"}}
	if _, err := hc.Do(req); !errors.Is(err, ErrBadHeader) {
		t.Fatalf("trailer value with CRLF: err %v, want ErrBadHeader", err)
	}
}

// upgradeServer switches to an echo protocol on "Upgrade: echo": it
// hijacks the connection, answers 101 with a greeting in the same write,
// then echoes lines back. Without the Upgrade header it answers 101 with no
// protocol named, which no client may treat as a switch.
func upgradeServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		if r.Header.Get("Upgrade") != "echo" {
			conn.Write([]byte("HTTP/1.1 101 Switching Protocols\r\n\r\n"))
			return
		}
		conn.Write([]byte("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\nhello\n"))
		for {
			line, err := brw.ReadString('\n')
			if err != nil {
				return
			}
			conn.Write([]byte(line))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestRoundTripUpgrade: a 101 response's Body is the connection, an
// io.ReadWriteCloser, as with net/http's Transport; both are run.
func TestRoundTripUpgrade(t *testing.T) {
	srv := upgradeServer(t)
	ours := &Client{}
	for _, tc := range []struct {
		name string
		rt   http.RoundTripper
	}{{"riptide", ours}, {"net/http", &http.Transport{}}} {
		t.Run(tc.name, func(t *testing.T) {
			hc := &http.Client{Transport: tc.rt}
			req, _ := http.NewRequest("GET", srv.URL, nil)
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", "echo")
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 101 || resp.Header.Get("Upgrade") != "echo" {
				t.Fatalf("status %d, Upgrade %q", resp.StatusCode, resp.Header.Get("Upgrade"))
			}
			rwc, ok := resp.Body.(io.ReadWriteCloser)
			if !ok {
				t.Fatalf("Body is %T, not an io.ReadWriteCloser", resp.Body)
			}
			br := bufio.NewReader(rwc)
			if line, err := br.ReadString('\n'); err != nil || line != "hello\n" {
				t.Fatalf("greeting %q, %v", line, err)
			}
			for _, msg := range []string{"one\n", "two\n"} {
				if _, err := rwc.Write([]byte(msg)); err != nil {
					t.Fatal(err)
				}
				if line, err := br.ReadString('\n'); err != nil || line != msg {
					t.Fatalf("echo %q, %v; want %q", line, err, msg)
				}
			}
			if err := rwc.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
	var probe Request
	probe.SetURL(srv.URL)
	p, _ := ours.poolFor(&probe)
	if total, _ := p.stats(); total != 0 {
		t.Fatalf("riptide pool still counts %d connections after Close", total)
	}

	// A 101 that names no protocol is not a switch: riptide closes the
	// connection and the body is empty.
	resp, err := (&http.Client{Transport: ours}).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := resp.Body.(io.Writer); ok {
		t.Fatal("a 101 without Upgrade was handed over as a connection")
	}
	resp.Body.Close()
}

// TestDoStreamUpgraded: the native API hands over the connection with
// Response.Upgraded after a 101.
func TestDoStreamUpgraded(t *testing.T) {
	srv := upgradeServer(t)
	c := &Client{}
	var req Request
	var resp Response
	req.SetURL(srv.URL)
	req.AddHeader("Connection", "Upgrade")
	req.AddHeader("Upgrade", "echo")
	if err := c.DoStream(context.Background(), &req, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode() != 101 {
		t.Fatalf("status %d", resp.StatusCode())
	}
	rwc := resp.Upgraded()
	if rwc == nil {
		t.Fatal("Upgraded() = nil after a 101 with Upgrade")
	}
	if resp.Upgraded() != nil {
		t.Fatal("second Upgraded() call returned the connection again")
	}
	br := bufio.NewReader(rwc)
	if line, _ := br.ReadString('\n'); line != "hello\n" {
		t.Fatalf("greeting %q", line)
	}
	rwc.Write([]byte("ping\n"))
	if line, _ := br.ReadString('\n'); line != "ping\n" {
		t.Fatalf("echo %q", line)
	}
	rwc.Close()
	resp.Reset()
	if total, _ := req.pool.stats(); total != 0 {
		t.Fatalf("pool counts %d connections after Close", total)
	}
}

// User-Agent as net/http's Transport writes it: the default when absent,
// the first value when set, none at all when set to "" (as
// httputil.ReverseProxy does to suppress it). Issue 14 item 11.
func TestRoundTripUserAgent(t *testing.T) {
	seen := make(chan []string, 1)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Values("User-Agent")
	}))
	defer s.Close()
	hc := &http.Client{Transport: &Client{}}
	for _, tc := range []struct {
		name string
		set  []string // nil: field absent
		want []string
	}{
		{"absent", nil, []string{defaultUserAgent}},
		{"empty", []string{""}, nil},
		{"set", []string{"probe/1"}, []string{"probe/1"}},
		{"first of two", []string{"a/1", "b/2"}, []string{"a/1"}},
	} {
		req, _ := http.NewRequest("GET", s.URL, nil)
		if tc.set != nil {
			req.Header["User-Agent"] = tc.set
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := <-seen; len(got) != len(tc.want) || strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: server saw User-Agent %q, want %q", tc.name, got, tc.want)
		}
	}
}
