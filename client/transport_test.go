package client

import (
	"bytes"
	"io"
	"net"
	"net/http"
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
