// Package loopback serves riptide handlers on a loopback port and drives
// them with a client that does not allocate, for tests outside the root
// package that count allocations per request over a real connection
// (testing.AllocsPerRun counts the whole process, client included).
package loopback

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"strconv"
	"testing"

	"github.com/riptide-http/riptide"
)

// Serve starts a riptide server for h on 127.0.0.1 and returns its
// address; the server is closed when the test ends.
func Serve(t testing.TB, h riptide.Handler) string {
	t.Helper()
	addr, stop, err := Start(h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr
}

// Start starts a riptide server for h on 127.0.0.1 and returns its address
// and a function that closes it, for servers that outlive one test (a fuzz
// target's).
func Start(h riptide.Handler) (addr string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &riptide.Server{Handler: h, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	done := make(chan struct{})
	go func() { srv.Serve(ln); close(done) }()
	return ln.Addr().String(), func() { srv.Close(); <-done }, nil
}

// Client sends one prebuilt request again and again on a keep-alive
// connection and reads each response into a fixed buffer. The response
// must have a Content-Length (unless it has no body) and be the same length every time (the Date
// header has a fixed width), which the first round trip learns.
type Client struct {
	t    testing.TB
	nc   net.Conn
	req  []byte
	buf  []byte
	size int
}

// Dial connects to addr and sends req once to learn the response length.
func Dial(t testing.TB, addr, req string) *Client {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	c := &Client{t: t, nc: nc, req: []byte(req), buf: make([]byte, 64<<10)}
	if _, err := nc.Write(c.req); err != nil {
		t.Fatal(err)
	}
	n, end := 0, -1
	for c.size == 0 {
		m, err := nc.Read(c.buf[n:])
		if err != nil {
			t.Fatalf("reading the first response: %v (%q)", err, c.buf[:n])
		}
		n += m
		if end < 0 {
			end = bytes.Index(c.buf[:n], []byte("\r\n\r\n"))
		}
		if end >= 0 {
			c.size = end + 4
			if !noBody(c.req, c.buf[:end]) {
				c.size += contentLength(t, c.buf[:end])
			}
		}
	}
	for n < c.size {
		m, err := nc.Read(c.buf[n:c.size])
		if err != nil {
			t.Fatal(err)
		}
		n += m
	}
	return c
}

// noBody reports whether a response to req with this head has no body
// (RFC 9112 §6.3: HEAD, 1xx, 204, 304).
func noBody(req, head []byte) bool {
	return bytes.HasPrefix(req, []byte("HEAD ")) ||
		bytes.HasPrefix(head, []byte("HTTP/1.1 204")) || bytes.HasPrefix(head, []byte("HTTP/1.1 304"))
}

func contentLength(t testing.TB, head []byte) int {
	for _, line := range bytes.Split(head, []byte("\r\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if ok && bytes.EqualFold(k, []byte("Content-Length")) {
			n, err := strconv.Atoi(string(bytes.TrimSpace(v)))
			if err != nil {
				t.Fatalf("bad Content-Length in %q", head)
			}
			return n
		}
	}
	t.Fatalf("no Content-Length in %q", head)
	return 0
}

// RoundTrip sends the request and reads its response.
func (c *Client) RoundTrip() {
	if _, err := c.nc.Write(c.req); err != nil {
		c.t.Fatal(err)
	}
	for n := 0; n < c.size; {
		m, err := c.nc.Read(c.buf[n:c.size])
		if err != nil {
			c.t.Fatal(err)
		}
		n += m
	}
	if !bytes.HasPrefix(c.buf, []byte("HTTP/1.1 ")) { // responses out of step
		c.t.Fatalf("not a response: %q", c.buf[:min(c.size, 64)])
	}
}

// Response returns the last response read, head and body.
func (c *Client) Response() []byte { return c.buf[:c.size] }
