package riptide

import (
	"net"
	"sync"
	"testing"
	"time"
)

// testServeOptions are the ways a test server differs from the plain one.
// The fields are exported for the external tests (export_test.go).
type testServeOptions struct {
	// Listener, when not nil, is served instead of a fresh 127.0.0.1
	// listener (an in-memory pipe listener); Addr is its address.
	Listener net.Listener
	// Wrap, when not nil, is applied to the fresh listener before it is
	// served (tls.NewListener, a counting listener).
	Wrap func(net.Listener) net.Listener
	// TLS serves with ServeTLS and srv.TLSConfig (ALPN as the server sets
	// it up) instead of Serve.
	TLS bool
}

// testServer is a Server serving on a 127.0.0.1 listener for one test.
type testServer struct {
	// Addr is the listener's address.
	Addr string
	srv  *Server
	done chan error
	once sync.Once
}

// serveTest is the one way the root tests start a server: srv serves on a
// fresh 127.0.0.1 listener (or o.Listener) until Stop, which runs at the
// latest when the test ends. srv is used as it is (set its Handler and
// Logger first).
func serveTest(t testing.TB, srv *Server, o testServeOptions) *testServer {
	t.Helper()
	ln := o.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	ts := &testServer{Addr: ln.Addr().String(), srv: srv, done: make(chan error, 1)}
	if o.Wrap != nil {
		ln = o.Wrap(ln)
	}
	go func() {
		if o.TLS {
			ts.done <- srv.ServeTLS(ln, "", "")
		} else {
			ts.done <- srv.Serve(ln)
		}
	}()
	t.Cleanup(func() { ts.Stop(t) })
	return ts
}

// Stop closes the server, once, and fails the test unless Serve returned
// ErrServerClosed.
func (ts *testServer) Stop(t testing.TB) {
	ts.once.Do(func() {
		ts.srv.Close()
		select {
		case err := <-ts.done:
			if err != ErrServerClosed {
				t.Errorf("Serve returned %v, want ErrServerClosed", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("Serve did not return 30s after Close")
		}
	})
}
