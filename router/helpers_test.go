package router

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/loopback"
)

// serve starts a riptide server for h; see loopback.Serve.
func serve(t testing.TB, h riptide.Handler) string { return loopback.Serve(t, h) }

// rawClient sends hand-written requests on one keep-alive connection.
type rawClient struct {
	t  testing.TB
	nc net.Conn
	br *bufio.Reader
}

func dial(t testing.TB, addr string) *rawClient {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawClient{t: t, nc: nc, br: bufio.NewReader(nc)}
}

// do sends "method target" with host and returns the response with its
// body read into body.
func (rc *rawClient) do(method, target, host string) (resp *http.Response, body string) {
	rc.t.Helper()
	if _, err := io.WriteString(rc.nc, method+" "+target+" HTTP/1.1\r\nHost: "+host+"\r\n\r\n"); err != nil {
		rc.t.Fatal(err)
	}
	resp, err := http.ReadResponse(rc.br, &http.Request{Method: method})
	if err != nil {
		rc.t.Fatalf("%s %s: %v", method, target, err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		rc.t.Fatalf("%s %s: body: %v", method, target, err)
	}
	return resp, string(b)
}
