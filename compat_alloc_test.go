package riptide

import (
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"testing"

	"github.com/riptide-http/riptide/internal/israce"
	"github.com/riptide-http/riptide/internal/testcert"
)

// compatAllocRequest is a GET with 10 header fields, as a browser sends.
const compatAllocRequest = "GET /hello?lang=en HTTP/1.1\r\n" +
	"Host: localhost:8080\r\n" +
	"User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n" +
	"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n" +
	"Accept-Language: en-US,en;q=0.5\r\n" +
	"Accept-Encoding: gzip, deflate, br\r\n" +
	"Connection: keep-alive\r\n" +
	"Cookie: session=abc123; theme=dark\r\n" +
	"Referer: http://localhost:8080/\r\n" +
	"Cache-Control: max-age=0\r\n" +
	"X-Request-Id: 7f3c2a9e-1b4d-4c8e-9a6f-2d5e8b1c0f47\r\n" +
	"\r\n"

// TestCompatAllocs measures allocations per request through the compat
// door over a real loopback keep-alive connection, and net/http's for the
// same handler and request in the same run. testing.AllocsPerRun counts
// every allocation in the process; the client writes a prebuilt request
// and reads into a fixed buffer, so it allocates nothing and the figure is
// the server's.
func TestCompatAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "Hello, World!")
	})

	srv := &Server{Handler: FromHTTP(hello), Logger: slog.New(slog.DiscardHandler)}
	ripClient := newAllocClient(t, serveTest(t, srv, testServeOptions{}).Addr, compatAllocRequest)
	rip := testing.AllocsPerRun(2000, ripClient.roundTrip)
	ripExact := mallocsPerRun(2000, ripClient.roundTrip)

	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	std := &http.Server{Handler: hello}
	go std.Serve(ln2)
	t.Cleanup(func() { std.Close() })
	nh := testing.AllocsPerRun(2000, newAllocClient(t, ln2.Addr().String(), compatAllocRequest).roundTrip)

	t.Logf("GET with 10 headers through an http.HandlerFunc: riptide compat %v allocs/request (%.4f exactly), net/http %v",
		rip, ripExact, nh)
	// 4: the request Header map's four (a map with more than 8 keys:
	// header, directory, table, groups). The request's own block (Request,
	// URL, context, body, header values and the compact head) is one of
	// compatSlabMax allocated together on a kept-alive connection, so it
	// adds 1/compatSlabMax. AllocsPerRun rounds down; the exact figure is
	// checked too, with room for 0.01 (20 allocations in 2000 runs) made
	// elsewhere in the process.
	wantSlabAllocs(t, "riptide compat", rip, ripExact, 4)

	// A handler that sets a response field: the response Header map costs
	// two allocations (its header and its first group) besides what
	// Header().Set allocates itself (the value's slice). The map is made
	// for each request and never reused: a handler may keep it (net/http
	// never reuses one either).
	typed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "Hello, World!")
	})
	srv3 := &Server{Handler: FromHTTP(typed), Logger: slog.New(slog.DiscardHandler)}
	typedClient := newAllocClient(t, serveTest(t, srv3, testServeOptions{}).Addr, compatAllocRequest)
	ripTyped := testing.AllocsPerRun(2000, typedClient.roundTrip)
	ripTypedExact := mallocsPerRun(2000, typedClient.roundTrip)
	t.Logf("the same, the handler setting Content-Type: riptide compat %v allocs/request (%.4f exactly)", ripTyped, ripTypedExact)
	wantSlabAllocs(t, "riptide compat, handler setting Content-Type", ripTyped, ripTypedExact, 7)

	// The same handler over HTTP/2 (h2c), counted as TestH2Allocs counts:
	// a client that allocates nothing, a request of two fields besides
	// the pseudo-headers, each an index into the HPACK table. The same
	// compat door as over HTTP/1.1, so the same objects: the request's
	// block (one of compatSlabMax allocated together, compatStreamSlabs),
	// its Header map (two: a map of up to 8 keys and its group), the
	// response Header map (two) and Set's value slice.
	t.Run("HTTP/2", func(t *testing.T) {
		if israce.Enabled {
			t.Skip("allocation counts need a build without -race")
		}
		ac := startH2AllocServer(t, &Server{Handler: FromHTTP(typed), Logger: slog.New(slog.DiscardHandler), HTTP2: &HTTP2Config{H2C: true}})
		h2 := testing.AllocsPerRun(2000, ac.roundTrip)
		h2Exact := mallocsPerRun(2000, ac.roundTrip)
		t.Logf("the same over HTTP/2: riptide compat %v allocs/request (%.4f exactly)", h2, h2Exact)
		wantSlabAllocs(t, "riptide compat over HTTP/2, handler setting Content-Type", h2, h2Exact, 5)
	})
}

// TestCompatAllocsConns is TestCompatAllocs with requests on several
// keep-alive connections in turn, on a listener bound to the unspecified
// address, as a server under load takes them: on the event-loop engine one
// worker serves one connection's request, then another's. What the compat
// door makes once per connection (the Request's RemoteAddr string, the
// local address in its Context) must stay made once per connection, not
// once per change of connection (before, the worker kept them for the last
// connection it served: each request paid for net.TCPAddr, its String and
// a getsockname(2) with its net.TCPAddr).
func TestCompatAllocsConns(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	if israce.Enabled {
		t.Skip("allocation counts need a build without -race")
	}
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.RemoteAddr == "" || r.Context().Value(http.LocalAddrContextKey) == nil {
			w.WriteHeader(http.StatusInternalServerError)
		}
		io.WriteString(w, "Hello, World!")
	})
	const conns = 4
	n, exact := allocsInTurn(t, serveAddrConns(t, EngineAuto, FromHTTP(hello)), compatAllocRequest, conns)
	t.Logf("GET with 10 headers on %d connections in turn: riptide compat %v allocs/request (%.4f exactly)", conns, n, exact)
	// As on one connection (TestCompatAllocs): the request Header map's
	// four, and the request block's share of its slab.
	wantSlabAllocs(t, "riptide compat, connections in turn", n, exact, 4)
}

// TestCompatAddrsConns checks that each request of connections served in
// turn (TestCompatAllocsConns) gets its own connection's addresses, now
// that they are carried with the connection rather than kept by the worker.
func TestCompatAddrsConns(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		la, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		if la == nil {
			http.Error(w, "no local address", http.StatusInternalServerError)
			return
		}
		io.WriteString(w, r.RemoteAddr+" "+la.String())
	})
	// Each request's RemoteAddr and local address.
	getInTurn(t, serveAddrConns(t, EngineAuto, FromHTTP(h)), 4, 20, func(nc net.Conn) string {
		return nc.LocalAddr().String() + " " + nc.RemoteAddr().String()
	})
}

// wantSlabAllocs checks what a compat request allocates: at most max as
// AllocsPerRun counts (n, rounded down), and exactly (exact) at most max
// plus the request block's share of its slab (1/compatSlabMax) and 0.01
// (20 allocations in 2000 runs) made elsewhere in the process.
func wantSlabAllocs(t *testing.T, what string, n, exact float64, max int) {
	t.Helper()
	if n > float64(max) {
		t.Errorf("%s: %v allocs per request, want at most %d", what, n, max)
	}
	if limit := float64(max) + 1.0/compatSlabMax + 0.01; exact > limit {
		t.Errorf("%s: %.4f allocs per request exactly, want at most %.4f", what, exact, limit)
	}
}

// mallocsPerRun is testing.AllocsPerRun without its rounding down: the
// process's allocations per call of f, averaged over runs calls, after
// a warm-up of 2*compatSlabMax calls.
func mallocsPerRun(runs int, f func()) float64 {
	mallocs, _ := memPerRun(runs, f)
	return mallocs
}

// memPerRun is mallocsPerRun with the bytes allocated per call too.
func memPerRun(runs int, f func()) (mallocs, bytes float64) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for range 2 * compatSlabMax {
		f()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(runs), float64(after.TotalAlloc-before.TotalAlloc) / float64(runs)
}

// Over TLS, the compat door allocates no more per request than over plain
// TCP: the request's TLS field is the connection's state, made once per
// connection (net/http shares one *tls.ConnectionState between the
// requests of a connection too). Native over TLS is measured on the same
// kind of connection to subtract what TLS itself allocates (the client's
// and the server's record layer).
func TestCompatTLSAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	if israce.Enabled {
		// The race detector's instrumentation allocates: test.sh runs the
		// allocation tests again without it.
		t.Skip("allocation counts need a build without -race")
	}
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || !r.TLS.HandshakeComplete {
			w.WriteHeader(http.StatusInternalServerError)
		}
		io.WriteString(w, "Hello, World!")
	})
	cert, err := testcert.Cert()
	if err != nil {
		t.Fatal(err)
	}
	tlsClient := func(h Handler) *allocClient {
		srv := &Server{Handler: h, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}, Logger: slog.New(slog.DiscardHandler)}
		ts := serveTest(t, srv, testServeOptions{TLS: true})
		nc, err := tls.Dial("tcp", ts.Addr,
			&tls.Config{RootCAs: testcert.Pool(cert), ServerName: "127.0.0.1", NextProtos: []string{"http/1.1"}})
		if err != nil {
			t.Fatal(err)
		}
		return newAllocClientOn(t, nc, compatAllocRequest)
	}
	native := HandlerFunc(func(x *Ctx) { x.WriteString("Hello, World!") })
	nativeTLS := mallocsPerRun(2000, tlsClient(native).roundTrip)
	compatTLS := mallocsPerRun(2000, tlsClient(FromHTTP(hello)).roundTrip)

	plainSrv := &Server{Handler: FromHTTP(hello), Logger: slog.New(slog.DiscardHandler)}
	compatPlain := mallocsPerRun(2000, newAllocClient(t, serveTest(t, plainSrv, testServeOptions{}).Addr, compatAllocRequest).roundTrip)

	t.Logf("GET with 10 headers, allocations per request: native over TLS %.4f, compat over TLS %.4f, compat over TCP %.4f",
		nativeTLS, compatTLS, compatPlain)
	// 0.01: room for 20 allocations made elsewhere in the process in 2000 runs.
	if compatTLS-nativeTLS > compatPlain+0.01 {
		t.Errorf("compat over TLS allocates %.4f per request beyond native over TLS, over TCP %.4f in all", compatTLS-nativeTLS, compatPlain)
	}

}

// compatAPIRequest is what the event-store benchmark's Go client sends:
// five header values besides Host.
const compatAPIRequest = "POST /rpc HTTP/1.1\r\n" +
	"Host: 127.0.0.1:41234\r\n" +
	"User-Agent: Go-http-client/1.1\r\n" +
	"Content-Length: 2\r\n" +
	"Authorization: Bearer token-alpha\r\n" +
	"Content-Type: application/json\r\n" +
	"Accept-Encoding: gzip\r\n" +
	"\r\n{}"

// BenchmarkCompatAPIRequest reports the bytes the compat door allocates per
// request for an API client's request (B/op counts the whole process; the
// client allocates nothing).
func BenchmarkCompatAPIRequest(b *testing.B) {
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "Hello, World!")
	})
	srv := &Server{Handler: FromHTTP(hello), Logger: slog.New(slog.DiscardHandler)}
	ac := newAllocClient(b, serveTest(b, srv, testServeOptions{}).Addr, compatAPIRequest)
	b.ReportAllocs()
	for b.Loop() {
		ac.roundTrip()
	}
}
