package h2test

// What internal/h2's test harness (the engine alone) and the root
// package's (a riptide.Server) share about the servers under test: the
// limits they are started with, the answer to GET /, the two transports
// (h2c prior knowledge and TLS with ALPN h2), the test certificate, and
// the clients that check a server still serves.

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/riptide-http/riptide/internal/testcert"
)

// Limits every test server is started with; the attack tests check them.
const (
	MaxStreams     = 100      // SETTINGS_MAX_CONCURRENT_STREAMS
	MaxHeaderBytes = 16 << 10 // request header list size limit
)

// HelloBody is what GET / answers on every test server.
const HelloBody = "Hello, World!"

// Mode names a transport: "tls", or "h2c" (prior knowledge).
func Mode(useTLS bool) string {
	if useTLS {
		return "tls"
	}
	return "h2c"
}

// ForEachMode runs f as the subtests name/h2c and name/tls.
func ForEachMode(t *testing.T, name string, f func(t *testing.T, useTLS bool)) {
	for _, useTLS := range []bool{false, true} {
		t.Run(name+"/"+Mode(useTLS), func(t *testing.T) { f(t, useTLS) })
	}
}

// Cert returns the test certificate (internal/testcert), made once per
// test binary.
func Cert(t testing.TB) tls.Certificate {
	t.Helper()
	cert, err := testcert.Cert()
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// ClientTLS trusts the test certificate and offers the ALPN protocols
// protos.
func ClientTLS(t testing.TB, protos ...string) *tls.Config {
	return &tls.Config{RootCAs: testcert.Pool(Cert(t)), NextProtos: protos, ServerName: "127.0.0.1"}
}

// DialMode opens a raw connection to addr (Dial): TLS with ALPN h2
// (checked), or TCP.
func DialMode(t testing.TB, addr string, useTLS bool, readBuf int) net.Conn {
	t.Helper()
	var tlsConf *tls.Config
	if useTLS {
		tlsConf = ClientTLS(t, "h2")
	}
	return Dial(t, addr, tlsConf, readBuf)
}

// Client returns a Go client that speaks HTTP/2 over TLS (ALPN h2) or h2c
// prior knowledge, never HTTP/1.1; its idle connections are closed when
// the test ends.
func Client(t testing.TB, useTLS bool) *http.Client {
	tr := &http.Transport{ForceAttemptHTTP2: true}
	var p http.Protocols
	if useTLS {
		p.SetHTTP2(true)
		tr.TLSClientConfig = ClientTLS(t)
	} else {
		p.SetUnencryptedHTTP2(true)
	}
	tr.Protocols = &p
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// AssertServes checks that addr answers a fresh HTTP/2 connection: GET /
// is 200 HelloBody over HTTP/2.
func AssertServes(t testing.TB, addr string, useTLS bool) {
	t.Helper()
	scheme := "http://"
	if useTLS {
		scheme = "https://"
	}
	resp, err := Client(t, useTLS).Get(scheme + addr + "/")
	if err != nil {
		t.Fatalf("server no longer serves a fresh connection: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || string(body) != HelloBody || resp.ProtoMajor != 2 {
		t.Fatalf("fresh connection: got %s %d %q, want HTTP/2.0 200 %q", resp.Proto, resp.StatusCode, body, HelloBody)
	}
}
