package router

import (
	"testing"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/loopback"
)

// serve starts a riptide server for h; see loopback.Serve.
func serve(t testing.TB, h riptide.Handler) string { return loopback.Serve(t, h) }

// dial opens a keep-alive connection for hand-written requests.
func dial(t testing.TB, addr string) *loopback.Conn { return loopback.DialConn(t, addr) }
