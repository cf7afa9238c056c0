package riptide

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide/internal/clock"
	"github.com/riptide-http/riptide/internal/testcert"
)

// altSvcTLS returns the server's and a client's TLS configuration (the
// client offers protos) for the test certificate.
func altSvcTLS(t *testing.T, protos ...string) (server, client *tls.Config) {
	t.Helper()
	cert, err := testcert.Cert()
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}},
		&tls.Config{RootCAs: testcert.Pool(cert), ServerName: "127.0.0.1", NextProtos: protos}
}

// listenH3 registers an HTTP/3 listener on srv as the http3 module's Serve
// does, without QUIC: Alt-Svc and shutdown see it.
func listenH3(t *testing.T, srv *Server, port int) *QUICListener {
	t.Helper()
	l, err := srv.ListenQUIC(QUICOptions{AltSvcPort: port})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// altSvcRoutes answers / plainly and /own with an Alt-Svc of its own, on
// the native door or, through FromHTTP, the compat door.
func altSvcRoutes(compat bool) Handler {
	if compat {
		return FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/own" {
				w.Header().Set("Alt-Svc", "clear")
			}
			io.WriteString(w, "ok")
		}))
	}
	return HandlerFunc(func(x *Ctx) {
		if string(x.Path()) == "/own" {
			x.SetHeader("Alt-Svc", "clear")
		}
		x.WriteString("ok")
	})
}

// TestAltSvc: while an HTTP/3 listener is registered, HTTPS responses
// (HTTP/1.1 and HTTP/2 over TLS) of both doors carry Alt-Svc for its port,
// unless the handler set its own; not after the listener closes, nor while
// draining; Shutdown closes the listener. Cleartext responses (HTTP/1.1,
// h2c) never carry it: no browser takes an alternative service from a
// cleartext origin (they did).
func TestAltSvc(t *testing.T) {
	t.Parallel()
	const want = `h3=":4433"; ma=86400`
	for _, door := range []string{"native", "compat"} {
		for _, proto := range []string{"HTTP/1.1", "h2c", "HTTPS/1.1", "h2"} {
			t.Run(door+"/"+proto, func(t *testing.T) {
				srv := &Server{Handler: altSvcRoutes(door == "compat"), HTTP2: &HTTP2Config{H2C: true}, Logger: slog.New(slog.DiscardHandler)}
				useTLS := proto == "HTTPS/1.1" || proto == "h2"
				scheme := "http://"
				var clientTLS *tls.Config
				if useTLS {
					srv.TLSConfig, clientTLS = altSvcTLS(t)
					scheme = "https://"
				}
				addr := serveTest(t, srv, testServeOptions{TLS: useTLS}).Addr
				tr := &http.Transport{TLSClientConfig: clientTLS, Protocols: new(http.Protocols)}
				tr.Protocols.SetHTTP1(proto == "HTTP/1.1" || proto == "HTTPS/1.1")
				tr.Protocols.SetUnencryptedHTTP2(proto == "h2c")
				tr.Protocols.SetHTTP2(proto == "h2")
				defer tr.CloseIdleConnections()
				cl := &http.Client{Transport: tr}
				get := func(path string) []string {
					t.Helper()
					resp, err := cl.Get(scheme + addr + path)
					if err != nil {
						t.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.Proto != map[string]string{"HTTP/1.1": "HTTP/1.1", "h2c": "HTTP/2.0", "HTTPS/1.1": "HTTP/1.1", "h2": "HTTP/2.0"}[proto] {
						t.Fatalf("response over %s, want %s", resp.Proto, proto)
					}
					return resp.Header.Values("Alt-Svc")
				}
				if got := get("/"); len(got) != 0 {
					t.Fatalf("no HTTP/3 listener: Alt-Svc %q", got)
				}
				l := listenH3(t, srv, 4433)
				if !useTLS {
					if got := get("/"); len(got) != 0 {
						t.Fatalf("cleartext %s: Alt-Svc %q, want none", proto, got)
					}
					return
				}
				if got := get("/"); len(got) != 1 || got[0] != want {
					t.Fatalf("Alt-Svc %q, want %q", got, want)
				}
				if got := get("/own"); len(got) != 1 || got[0] != "clear" {
					t.Fatalf("handler's own Alt-Svc: got %q, want [clear]", got)
				}
				l.Close()
				if got := get("/"); len(got) != 0 {
					t.Fatalf("listener closed: Alt-Svc %q", got)
				}
				l2 := listenH3(t, srv, 4433)
				srv.Drain()
				if got := get("/"); len(got) != 0 {
					t.Fatalf("draining: Alt-Svc %q", got)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				tr.CloseIdleConnections()
				if err := srv.Shutdown(ctx); err != nil {
					t.Fatal(err)
				}
				select {
				case <-l2.Done():
				default:
					t.Fatal("Shutdown did not stop the running HTTP/3 listener (Done open)")
				}
				select {
				case <-l.Done():
					t.Fatal("Shutdown stopped a listener closed before it (Done closed)")
				default:
				}
				if _, err := srv.ListenQUIC(QUICOptions{AltSvcPort: 4433}); err != ErrServerClosed {
					t.Fatalf("ListenQUIC after Shutdown: %v, want ErrServerClosed", err)
				}
			})
		}
	}
}

// TestAltSvcZeroAllocs: the Alt-Svc line costs no allocation (native
// door, HTTPS/1.1, over loopback as TestZeroAllocs): a request allocates
// no more with it than without (crypto/tls itself allocates on both ends;
// over cleartext, where the request allocates nothing, no Alt-Svc is sent).
func TestAltSvcZeroAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	serverTLS, clientTLS := altSvcTLS(t, "http/1.1")
	srv := &Server{TLSConfig: serverTLS, Logger: slog.New(slog.DiscardHandler), Handler: HandlerFunc(func(c *Ctx) {
		c.SetHeader("Content-Type", "text/plain")
		c.WriteString("Hello, World!")
	})}
	addr := serveTest(t, srv, testServeOptions{TLS: true}).Addr
	client := func() *allocClient {
		nc, err := tls.Dial("tcp", addr, clientTLS)
		if err != nil {
			t.Fatal(err)
		}
		return newAllocClientOn(t, nc, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
	}
	without := testing.AllocsPerRun(2000, client().roundTrip)
	listenH3(t, srv, 443)
	ac := client()
	if !strings.Contains(string(ac.buf[:ac.size]), "\r\nAlt-Svc: h3=\":443\"; ma=86400\r\n") {
		t.Fatalf("response without Alt-Svc:\n%s", ac.buf[:ac.size])
	}
	if allocs := testing.AllocsPerRun(2000, ac.roundTrip); allocs > without {
		t.Errorf("%v allocs per request with Alt-Svc, %v without", allocs, without)
	}
}

// TestCoreHasNoQUIC: the core module does not depend on quic-go: not in
// its go.mod, and not among the packages a program of the core module
// (examples/hello, which serves HTTP/1.1 and HTTP/2) builds with.
func TestCoreHasNoQUIC(t *testing.T) {
	t.Parallel()
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mod), "quic-go") {
		t.Errorf("go.mod requires quic-go:\n%s", mod)
	}
	for _, pkg := range []string{modulePath, modulePath + "/examples/hello"} {
		for _, d := range goListDeps(t, pkg) {
			if strings.Contains(d, "quic-go") || strings.HasPrefix(d, modulePath+"/http3") {
				t.Errorf("%s depends on %s", pkg, d)
			}
		}
	}
}

// TestH3ListenerHoldsClock: an HTTP/3 listener holds the server clock while
// it runs, as Serve's TCP listeners do, so that its responses' Date field
// is the one made once a second (clock.Value) instead of the real clock
// read, formatted and allocated per response; it releases it on Close.
func TestH3ListenerHoldsClock(t *testing.T) {
	if clock.Sec() != 0 {
		t.Skip("another user holds the clock")
	}
	srv := &Server{Handler: HandlerFunc(func(x *Ctx) {})}
	l := listenH3(t, srv, 4433)
	if clock.Sec() == 0 {
		t.Error("the clock is not running while an HTTP/3 listener runs")
	}
	if n := testing.AllocsPerRun(100, func() { clock.Value() }); n != 0 {
		t.Errorf("Date value: %v allocations, want 0", n)
	}
	l.Close()
	l.Close() // a second Close releases nothing more
	srv.Close()
}
