package middleware

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/loopback"
)

// send serves h on loopback and sends the raw request (head and body), on
// a new connection, returning the response and its body.
func send(t *testing.T, h riptide.Handler, req string) (*http.Response, string) {
	t.Helper()
	return sendTo(t, loopback.Serve(t, h), req)
}

func sendTo(t *testing.T, addr, req string) (*http.Response, string) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := io.WriteString(nc, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatalf("%q: %v", req, err)
	}
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// hello answers "hello".
var hello = riptide.HandlerFunc(func(c *riptide.Ctx) { c.WriteString("hello") })
