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
	"crypto/tls"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/h2test"
	"github.com/riptide-http/riptide/internal/testcert"
)

// Limits every target is started with; the attack tests check them.
const (
	h2TestMaxStreams     = h2test.MaxStreams     // SETTINGS_MAX_CONCURRENT_STREAMS
	h2TestMaxHeaderBytes = h2test.MaxHeaderBytes // request header list size limit
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

// h2App is the test routes, the same on every target:
//
//	GET /       200 "Hello, World!" (text/plain), after the request stream ends
//	POST /      200, echoes the request body
//	GET /slow   counted in slow, holds the handler for h2SlowHold, then 200
//	/hold       (h2test.HoldPath) holds the stream, reading no body, until
//	            release (at the latest when the test ends)
//
// /slow and /hold serve the attacks that start on a parked connection
// (h2parkattack_test.go); the engine's own attack tests are in internal/h2.
type h2App struct {
	slow h2test.Handlers // the handlers of /slow
	// held is closed by release: the /hold handlers return.
	held        chan struct{}
	releaseOnce sync.Once
	// h2Config, if set, changes a riptide target's HTTP2Config after the
	// test limits are set.
	h2Config func(*riptide.HTTP2Config)
}

// h2SlowHold is how long a /slow handler runs.
const h2SlowHold = 5 * time.Millisecond

// newH2App returns the routes' state; the /hold handlers are released
// when the test ends, at the latest.
func newH2App(t testing.TB) *h2App {
	a := &h2App{held: make(chan struct{})}
	t.Cleanup(a.release)
	return a
}

// release lets every /hold handler, and those to come, return.
func (a *h2App) release() { a.releaseOnce.Do(func() { close(a.held) }) }

// attackRoute serves path if it is /slow or /hold, and reports whether it
// was.
func (a *h2App) attackRoute(path string) bool {
	switch path {
	case "/slow":
		a.slow.Enter()
		time.Sleep(h2SlowHold)
		a.slow.Leave()
	case h2test.HoldPath:
		select {
		case <-a.held:
		case <-time.After(h2AttackBound):
		}
	default:
		return false
	}
	return true
}

const h2HelloBody = h2test.HelloBody

// stdHandler is the test routes as an http.Handler (net/http and compat targets).
func (a *h2App) stdHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.attackRoute(r.URL.Path) {
			return
		}
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
}

// nativeHandler is the test routes on riptide's native API.
func (a *h2App) nativeHandler() riptide.Handler {
	return riptide.HandlerFunc(func(c *riptide.Ctx) {
		if a.attackRoute(string(c.Path())) {
			return
		}
		if string(c.Path()) != "/" {
			c.SetStatus(404)
			return
		}
		if string(c.Method()) == http.MethodPost {
			_, _ = io.Copy(c, c.Body())
			return
		}
		_, _ = io.Copy(io.Discard, c.Body()) // see stdHandler
		c.SetHeader("Content-Type", "text/plain; charset=utf-8")
		_, _ = c.WriteString(h2HelloBody)
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
		return serveRiptideConfig(t, tlsConf, h, app.h2Config)
	}
}

// serveRiptideInline is the native target with HTTP2Config.InlineHandlers:
// requests without a body run on the connection's goroutine.
func serveRiptideInline(t testing.TB, tlsConf *tls.Config, app *h2App) string {
	return serveRiptideConfig(t, tlsConf, app.nativeHandler(), func(c *riptide.HTTP2Config) {
		h2Inline(c)
		if app.h2Config != nil {
			app.h2Config(c)
		}
	})
}

// h2Inline turns InlineHandlers on.
func h2Inline(c *riptide.HTTP2Config) { c.InlineHandlers = true }

// serveRiptideHandler serves h on a riptide.Server configured like every
// target (limits above; HTTP/2 over TLS, h2c and Upgrade: h2c on) until
// the test ends, and returns its address.
func serveRiptideHandler(t testing.TB, tlsConf *tls.Config, h riptide.Handler) string {
	return serveRiptideConfig(t, tlsConf, h, nil)
}

// serveRiptideConfig is serveRiptideHandler, with the HTTP2Config then
// changed by h2Config (if not nil).
func serveRiptideConfig(t testing.TB, tlsConf *tls.Config, h riptide.Handler, h2Config func(*riptide.HTTP2Config)) string {
	h2 := &riptide.HTTP2Config{H2C: true, H2CUpgrade: true, MaxConcurrentStreams: h2TestMaxStreams}
	if h2Config != nil {
		h2Config(h2)
	}
	srv := &riptide.Server{
		Handler:        h,
		MaxHeaderBytes: h2TestMaxHeaderBytes,
		HTTP2:          h2,
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
	// parks: riptide serving h2c, or TLS (unless RIPTIDE_TLS_ENGINE=goroutine),
	// on the event loop, where an idle connection parks; newH2Attacker
	// then waits until its connection has parked, so that every attack
	// starts on a parked connection.
	parks bool
}

// startH2 starts target on a fresh loopback port, in TLS or cleartext mode;
// it is stopped when the test ends.
func startH2(t testing.TB, target h2Target, useTLS bool) *h2Instance {
	t.Helper()
	return startH2Config(t, target, useTLS, nil)
}

// startH2Config is startH2 with a riptide target's HTTP2Config changed by
// h2Config (if not nil).
func startH2Config(t testing.TB, target h2Target, useTLS bool, h2Config func(*riptide.HTTP2Config)) *h2Instance {
	t.Helper()
	var tlsConf *tls.Config
	if useTLS {
		tlsConf = h2TestServerTLS(t)
	}
	app := newH2App(t)
	app.h2Config = h2Config
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

func (in *h2Instance) mode() string { return h2test.Mode(in.tls) }

// forEachH2 runs f as a subtest for every target in both modes.
func forEachH2(t *testing.T, f func(t *testing.T, in *h2Instance)) {
	forEachH2Config(t, nil, f)
}

// forEachH2Config is forEachH2 with each riptide target's HTTP2Config
// changed by h2Config (if not nil).
func forEachH2Config(t *testing.T, h2Config func(*riptide.HTTP2Config), f func(t *testing.T, in *h2Instance)) {
	for _, target := range h2Targets {
		h2test.ForEachMode(t, target.name, func(t *testing.T, useTLS bool) {
			f(t, startH2Config(t, target, useTLS, h2Config))
		})
	}
}

// h2TestCert returns the test certificate (internal/testcert) and its PEM,
// made once per test binary.
func h2TestCert(t testing.TB) (tls.Certificate, []byte) {
	t.Helper()
	cert := h2test.Cert(t)
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
	return h2test.ClientTLS(t, protos...)
}

// h2Client returns a Go client that speaks HTTP/2 to in: over TLS (ALPN h2)
// or h2c prior knowledge. It never falls back to HTTP/1.1.
func h2Client(t testing.TB, in *h2Instance) *http.Client {
	return h2test.Client(t, in.tls)
}

// h2Dial opens a raw connection to in: TLS with ALPN h2 (checked), or TCP.
// readBuf, when positive, shrinks the socket receive buffer first, so that a
// client that does not read makes the server's writes back up quickly.
func h2Dial(t testing.TB, in *h2Instance, readBuf int) net.Conn {
	t.Helper()
	return h2test.DialMode(t, in.addr, in.tls, readBuf)
}

// assertServes checks that in answers a fresh HTTP/2 connection: GET / is
// 200 "Hello, World!" over HTTP/2.
func assertServes(t testing.TB, in *h2Instance) {
	t.Helper()
	h2test.AssertServes(t, in.addr, in.tls)
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

// h2AttackBound bounds each attack connection (h2test.AttackBound).
const h2AttackBound = h2test.AttackBound

// h2Attacker is a raw HTTP/2 client connection to a target.
type h2Attacker struct{ *h2test.Attacker }

// newH2Attacker dials in, sends the client preface and an empty SETTINGS
// frame. readBuf > 0 shrinks the socket receive buffer (see h2Dial). On a
// target whose idle h2c connections park, it returns once the connection
// has parked, so that every attack starts on a parked connection (no
// goroutine, no buffer): the frames that follow resume it.
func newH2Attacker(t testing.TB, in *h2Instance, readBuf int) *h2Attacker {
	t.Helper()
	c := h2Dial(t, in, readBuf)
	var parked <-chan struct{}
	if in.parks {
		parked = riptide.H2ParkWatch(c.LocalAddr().String())
	}
	scheme := "http"
	if in.tls {
		scheme = "https"
	}
	a := &h2Attacker{h2test.NewAttacker(t, c, scheme, in.addr)}
	if parked != nil {
		select {
		case <-parked:
		case <-time.After(h2AttackBound):
			t.Fatal("the idle h2c connection never parked on the event loop")
		}
	}
	return a
}

// h2StallWait is how long a blocked write must last for the flood tests to
// take it as the server no longer reading. A slow server mistaken for one
// applying backpressure still passes the other checks.
const h2StallWait = 2 * time.Second
