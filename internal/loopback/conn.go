package loopback

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// Conn is a keep-alive connection for hand-written requests, read back
// with net/http's response parser (this side may allocate).
type Conn struct {
	t  testing.TB
	nc net.Conn
	br *bufio.Reader
}

// DialConn connects to addr; the connection is closed when the test ends.
func DialConn(t testing.TB, addr string) *Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &Conn{t: t, nc: nc, br: bufio.NewReader(nc)}
}

// Do sends "method target" with Host host and no body, and returns the
// response with its body read.
func (c *Conn) Do(method, target, host string) (*http.Response, string) {
	c.t.Helper()
	return c.Send(method + " " + target + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n")
}

// Send writes req, a whole request, and returns the response with its body
// read.
func (c *Conn) Send(req string) (*http.Response, string) {
	c.t.Helper()
	if _, err := io.WriteString(c.nc, req); err != nil {
		c.t.Fatal(err)
	}
	method, _, _ := strings.Cut(req, " ") // HEAD responses have no body
	resp, err := http.ReadResponse(c.br, &http.Request{Method: method})
	if err != nil {
		c.t.Fatalf("%.40q: %v", req, err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%.40q: body: %v", req, err)
	}
	return resp, string(b)
}
