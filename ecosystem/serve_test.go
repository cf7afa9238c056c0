package ecosystem

import (
	"errors"
	"net"
	"net/http"
	"testing"
	"time"
)

// A variant is one server that can serve an http.Handler. Every ecosystem
// test runs once per variant, as a subtest named after it: the net/http
// variant proves the test itself is right, the riptide variant is what the
// test is for.
type variant struct {
	name string
	// serve serves h on a fresh 127.0.0.1 listener until the test ends and
	// returns the base URL ("http://127.0.0.1:port").
	serve func(t *testing.T, h http.Handler) string
}

// variants lists the servers under test; riptide_test.go adds riptide's.
var variants = []variant{{name: "nethttp", serve: serveNetHTTP}}

// eachServer runs f once per variant.
func eachServer(t *testing.T, f func(t *testing.T, serve func(*testing.T, http.Handler) string)) {
	t.Helper()
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) { f(t, v.serve) })
	}
}

// listen opens a loopback listener that the test closes when it ends.
func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

func serveNetHTTP(t *testing.T, h http.Handler) string {
	t.Helper()
	ln := listen(t)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("net/http Serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// client returns an HTTP client whose idle connections are closed when the
// test ends, with a bound on every request.
func client(t *testing.T) *http.Client {
	t.Helper()
	tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 20 * time.Second}
}
