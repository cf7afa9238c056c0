package riptide_test

// This file is the shared harness of the HTTP/2 tests (h2spec, attacks, real
// clients): the servers under test ("targets"), the routes every target
// serves, a throwaway TLS certificate, and clients that speak h2 and h2c.
//
// A target is a function that serves the test routes on a listener, either
// in cleartext (HTTP/1.1 plus h2c prior knowledge) or over TLS (ALPN h2 and
// http/1.1), with the limits below. Adding a server to every HTTP/2 test is
// one entry in h2Targets.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/testcert"
)

// Limits every target is started with; the attack tests check them.
const (
	h2TestMaxStreams     = 100      // SETTINGS_MAX_CONCURRENT_STREAMS
	h2TestMaxHeaderBytes = 16 << 10 // request header list size limit
)

// h2Target is one HTTP/2 server implementation under test.
type h2Target struct {
	name string
	// serve serves the test routes of app on a fresh loopback port until
	// the test ends, and returns its address. With tlsConf nil it serves
	// HTTP/1.1 and h2c prior knowledge in cleartext; otherwise TLS with ALPN
	// h2 and http/1.1.
	serve func(t testing.TB, tlsConf *tls.Config, app *h2App) (addr string)
}

// h2Targets lists every server the HTTP/2 tests run against.
var h2Targets = []h2Target{
	{name: "net-http", serve: serveNetHTTP},
	{name: "riptide-native", serve: serveRiptide(false)},
	{name: "riptide-compat", serve: serveRiptide(true)},
	{name: "riptide-inline", serve: serveRiptideInline},
}

// h2App is the state behind the test routes, shared by every target's
// handlers so that tests can observe what reached a handler.
type h2App struct {
	inflight    atomic.Int64 // handlers of /slow running now
	maxInflight atomic.Int64 // most handlers of /slow ever running at once
	slowCalls   atomic.Int64 // /slow handlers started
	bombCalls   atomic.Int64 // requests that reached /bomb
	bombMaxHdr  atomic.Int64 // largest header list (name+value bytes) seen by /bomb
	// gate paces /gated: each value is the total of body bytes the client
	// has sent; the handler reads all but the last of them (h2flood_test.go).
	gate        chan int64
	hold        chan struct{} // each /hold handler takes one before it answers
	holdEntered atomic.Int64  // /hold handlers started
}

// The routes, identical on every target:
//
//	GET /       200 "Hello, World!" (text/plain), after the request stream ends
//	POST /      200, echoes the request body
//	GET /slow   holds the handler for h2SlowHold (ignoring cancellation), then 200 "ok"
//	GET /bomb   records the size of the header list it received, then 200
//	POST /gated reads the body as h2App.gate says (gatedRead), then 200 "ok"
//	GET /hold   waits for a token from h2App.hold, then 200 "ok"
const (
	h2HelloBody = "Hello, World!"
	h2SlowHold  = 5 * time.Millisecond
)

func (a *h2App) slowEnter() {
	a.slowCalls.Add(1)
	n := a.inflight.Add(1)
	for {
		m := a.maxInflight.Load()
		if n <= m || a.maxInflight.CompareAndSwap(m, n) {
			return
		}
	}
}

func (a *h2App) slowLeave() { a.inflight.Add(-1) }

func (a *h2App) bombSeen(headerBytes int) {
	a.bombCalls.Add(1)
	for {
		m := a.bombMaxHdr.Load()
		if int64(headerBytes) <= m || a.bombMaxHdr.CompareAndSwap(m, int64(headerBytes)) {
			return
		}
	}
}

// stdHandler is the test routes as an http.Handler (net/http and compat targets).
func (a *h2App) stdHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			_, _ = io.Copy(w, r.Body)
			return
		}
		// Wait for the end of the request stream even on GET, so that
		// a response never races frames the client still sends on the
		// stream (h2spec 6.9.1 sends WINDOW_UPDATEs after HEADERS).
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, h2HelloBody)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		a.slowEnter()
		time.Sleep(h2SlowHold)
		a.slowLeave()
		_, _ = io.WriteString(w, "ok")
	})
	mux.HandleFunc("/bomb", func(w http.ResponseWriter, r *http.Request) {
		n := 0
		for k, vs := range r.Header {
			for _, v := range vs {
				n += len(k) + len(v)
			}
		}
		a.bombSeen(n)
	})
	mux.HandleFunc("/gated", func(w http.ResponseWriter, r *http.Request) {
		if a.gatedRead(r.Body) != nil {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	mux.HandleFunc("/hold", func(w http.ResponseWriter, r *http.Request) {
		if a.holdOn() {
			_, _ = io.WriteString(w, "ok")
		}
	})
	return mux
}

// nativeHandler is the test routes on riptide's native API.
func (a *h2App) nativeHandler() riptide.Handler {
	return riptide.HandlerFunc(func(c *riptide.Ctx) {
		switch string(c.Path()) {
		case "/":
			if string(c.Method()) == http.MethodPost {
				_, _ = io.Copy(c, c.Body())
				return
			}
			_, _ = io.Copy(io.Discard, c.Body()) // see stdHandler
			c.SetHeader("Content-Type", "text/plain; charset=utf-8")
			_, _ = c.WriteString(h2HelloBody)
		case "/slow":
			a.slowEnter()
			time.Sleep(h2SlowHold)
			a.slowLeave()
			_, _ = c.WriteString("ok")
		case "/bomb":
			n := 0
			for _, f := range c.Request().Headers {
				n += len(f.Name) + len(f.Value)
			}
			a.bombSeen(n)
		case "/gated":
			if a.gatedRead(c.Body()) != nil {
				c.SetStatus(http.StatusInternalServerError)
				return
			}
			_, _ = c.WriteString("ok")
		case "/hold":
			if a.holdOn() {
				_, _ = c.WriteString("ok")
			}
		default:
			c.SetStatus(404)
		}
	})
}

// serveRiptide returns the riptide target, native or compat (the same
// routes through FromHTTP), with HTTP/2 over TLS, h2c and Upgrade: h2c on.
func serveRiptide(compat bool) func(testing.TB, *tls.Config, *h2App) string {
	return func(t testing.TB, tlsConf *tls.Config, app *h2App) string {
		h := app.nativeHandler()
		if compat {
			h = riptide.FromHTTP(app.stdHandler())
		}
		return serveRiptideHandler(t, tlsConf, h)
	}
}

// serveRiptideInline is the native target with HTTP2Config.InlineHandlers:
// requests without a body run on the connection's goroutine.
func serveRiptideInline(t testing.TB, tlsConf *tls.Config, app *h2App) string {
	return serveRiptideConfig(t, tlsConf, app.nativeHandler(), true)
}

// serveRiptideHandler serves h on a riptide.Server configured like every
// target (limits above; HTTP/2 over TLS, h2c and Upgrade: h2c on) until
// the test ends, and returns its address.
func serveRiptideHandler(t testing.TB, tlsConf *tls.Config, h riptide.Handler) string {
	return serveRiptideConfig(t, tlsConf, h, false)
}

// serveRiptideConfig is serveRiptideHandler, with InlineHandlers as inline
// says.
func serveRiptideConfig(t testing.TB, tlsConf *tls.Config, h riptide.Handler, inline bool) string {
	srv := &riptide.Server{
		Handler:        h,
		MaxHeaderBytes: h2TestMaxHeaderBytes,
		HTTP2:          &riptide.HTTP2Config{H2C: true, H2CUpgrade: true, MaxConcurrentStreams: h2TestMaxStreams, InlineHandlers: inline},
		Logger:         slog.New(slog.DiscardHandler),
		TLSConfig:      tlsConf,
	}
	return riptide.ServeTest(t, srv, riptide.TestServeOptions{TLS: tlsConf != nil}).Addr
}

// serveNetHTTP is the baseline target: net/http's own HTTP/2 server (not a
// riptide.Server, so not riptide.ServeTest's).
func serveNetHTTP(t testing.TB, tlsConf *tls.Config, app *h2App) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler:        app.stdHandler(),
		MaxHeaderBytes: h2TestMaxHeaderBytes,
		HTTP2:          &http.HTTP2Config{MaxConcurrentStreams: h2TestMaxStreams},
		ErrorLog:       log.New(io.Discard, "", 0),
	}
	var p http.Protocols
	p.SetHTTP1(true)
	done := make(chan struct{})
	if tlsConf != nil {
		p.SetHTTP2(true)
		srv.Protocols = &p
		srv.TLSConfig = tlsConf
		go func() { defer close(done); _ = srv.ServeTLS(ln, "", "") }()
	} else {
		p.SetUnencryptedHTTP2(true)
		srv.Protocols = &p
		go func() { defer close(done); _ = srv.Serve(ln) }()
	}
	t.Cleanup(func() { _ = srv.Close(); <-done })
	return ln.Addr().String()
}

// h2Instance is a running target.
type h2Instance struct {
	name string // the target's name (h2Target.name)
	addr string // 127.0.0.1:port
	tls  bool
	app  *h2App
	// parks: riptide serving h2c, or TLS with RIPTIDE_TLS_ENGINE=eventloop,
	// on the event loop, where an idle connection parks; newH2Attacker
	// then waits until its connection has parked, so that every attack
	// starts on a parked connection.
	parks bool
}

// startH2 starts target on a fresh loopback port, in TLS or cleartext mode;
// it is stopped when the test ends.
func startH2(t testing.TB, target h2Target, useTLS bool) *h2Instance {
	t.Helper()
	var tlsConf *tls.Config
	if useTLS {
		tlsConf = h2TestServerTLS(t)
	}
	app := &h2App{gate: make(chan int64, 1<<12), hold: make(chan struct{})}
	addr := target.serve(t, tlsConf, app)
	parks := target.name != "net-http" && (!useTLS && riptide.H2Parks() || useTLS && riptide.H2TLSParks())
	return &h2Instance{name: target.name, addr: addr, tls: useTLS, app: app, parks: parks}
}

// url returns the URL of path on the instance (https for TLS, http for h2c).
func (in *h2Instance) url(path string) string {
	if in.tls {
		return "https://" + in.addr + path
	}
	return "http://" + in.addr + path
}

func (in *h2Instance) mode() string {
	if in.tls {
		return "tls"
	}
	return "h2c"
}

// forEachH2 runs f as a subtest for every target in both modes.
func forEachH2(t *testing.T, f func(t *testing.T, in *h2Instance)) {
	for _, target := range h2Targets {
		for _, useTLS := range []bool{false, true} {
			name := target.name + "/h2c"
			if useTLS {
				name = target.name + "/tls"
			}
			t.Run(name, func(t *testing.T) {
				f(t, startH2(t, target, useTLS))
			})
		}
	}
}

// h2TestCert returns the test certificate (internal/testcert) and its PEM,
// made once per test binary.
func h2TestCert(t testing.TB) (tls.Certificate, []byte) {
	t.Helper()
	cert, err := testcert.Cert()
	if err != nil {
		t.Fatal(err)
	}
	return cert, testcert.PEM(cert)
}

// h2TestServerTLS is the server TLS config of every TLS target.
func h2TestServerTLS(t testing.TB) *tls.Config {
	cert, _ := h2TestCert(t)
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		NextProtos:   []string{"h2", "http/1.1"},
	}
}

// h2TestClientTLS trusts the test certificate and offers the given ALPN protocols.
func h2TestClientTLS(t testing.TB, protos ...string) *tls.Config {
	_, certPEM := h2TestCert(t)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	return &tls.Config{RootCAs: pool, NextProtos: protos, ServerName: "127.0.0.1"}
}

// h2Client returns a Go client that speaks HTTP/2 to in: over TLS (ALPN h2)
// or h2c prior knowledge. It never falls back to HTTP/1.1.
func h2Client(t testing.TB, in *h2Instance) *http.Client {
	tr := &http.Transport{ForceAttemptHTTP2: true}
	var p http.Protocols
	if in.tls {
		p.SetHTTP2(true)
		tr.TLSClientConfig = h2TestClientTLS(t)
	} else {
		p.SetUnencryptedHTTP2(true)
	}
	tr.Protocols = &p
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// h2Dial opens a raw connection to in: TLS with ALPN h2 (checked), or TCP.
// readBuf, when positive, shrinks the socket receive buffer first, so that a
// client that does not read makes the server's writes back up quickly.
func h2Dial(t testing.TB, in *h2Instance, readBuf int) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", in.addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if readBuf > 0 {
		_ = c.(*net.TCPConn).SetReadBuffer(readBuf)
	}
	if !in.tls {
		return c
	}
	tc := tls.Client(c, h2TestClientTLS(t, "h2"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		t.Fatal(err)
	}
	if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
		c.Close()
		t.Fatalf("ALPN negotiated %q, want h2", p)
	}
	return tc
}

// assertServes checks that in answers a fresh HTTP/2 connection: GET / is
// 200 "Hello, World!" over HTTP/2.
func assertServes(t testing.TB, in *h2Instance) {
	t.Helper()
	c := h2Client(t, in)
	resp, err := c.Get(in.url("/"))
	if err != nil {
		t.Fatalf("server no longer serves a fresh connection: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || string(body) != h2HelloBody || resp.ProtoMajor != 2 {
		t.Fatalf("fresh connection: got %s %d %q, want HTTP/2.0 200 %q", resp.Proto, resp.StatusCode, body, h2HelloBody)
	}
}

// needTool skips a test whose third-party tool (h2spec, curl, python3 with
// httpx) is missing, except when RIPTIDE_REQUIRE_TOOLS is set, as .ci/run
// does: there a missing tool fails, so a broken install step cannot pass as
// a skip.
func needTool(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("RIPTIDE_REQUIRE_TOOLS") != "" {
		t.Fatalf("required tool missing (RIPTIDE_REQUIRE_TOOLS is set): "+format, args...)
	}
	t.Skipf(format, args...)
}
