package middleware

import (
	"net/http"
	"testing"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/loopback"
)

// send serves h on loopback and sends the raw request (head and body) on a
// new connection, returning the response and its body.
func send(t *testing.T, h riptide.Handler, req string) (*http.Response, string) {
	t.Helper()
	return sendTo(t, loopback.Serve(t, h), req)
}

func sendTo(t *testing.T, addr, req string) (*http.Response, string) {
	t.Helper()
	return loopback.DialConn(t, addr).Send(req)
}

// hello answers "hello".
var hello = riptide.HandlerFunc(func(c *riptide.Ctx) { c.WriteString("hello") })
