package harness

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
)

// TestIdleConns: -connections sets an idle workload's connection count
// (the count its description and load command give too; h3idle's at most
// H3IdleConns) and leaves the other workloads as they are.
func TestIdleConns(t *testing.T) {
	for _, name := range []string{"idle", "idletls", "h2idle", "h2idletls", "h3idle"} {
		w := mustWorkload(name)
		if got := w.idleConns(0); got.Idle != w.Idle {
			t.Errorf("%s with -connections 0: %d connections, want %d", name, got.Idle, w.Idle)
		}
		want := 12345
		if w.HTTP3 {
			want = H3IdleConns // its most
		}
		got := w.idleConns(12345)
		if n := strconv.Itoa(want); got.Idle != want || !strings.Contains(got.Desc, n+" connections") || !strings.HasPrefix(got.LoadCommand(50, 1), n+" idle") {
			t.Errorf("%s with -connections 12345: %d connections, %q, %q", name, got.Idle, got.Desc, got.LoadCommand(50, 1))
		}
	}
	if w := mustWorkload("plaintext").idleConns(12345); w.Idle != 0 {
		t.Errorf("plaintext with -connections 12345 became idle: %+v", w)
	}
}

// TestH2IdleTLSOne checks the h2idletls workload: the HTTP/2 servers run it
// (h2o and nghttpd included) with -tls, and its client completes one GET
// stream over TLS with ALPN h2 against net/http, leaving the connection
// open.
func TestH2IdleTLSOne(t *testing.T) {
	w := mustWorkload("h2idletls")
	if w.Tool() != "idle" || w.HTTP2 != H2TLS || w.TLS || !w.Extra {
		t.Fatalf("h2idletls workload: %+v", w)
	}
	if got := w.ServerFlags(); len(got) != 1 || got[0] != "-tls" {
		t.Errorf("h2idletls server flags = %v", got)
	}
	for _, s := range Registry() {
		if s.Supports(w) != s.HTTP2 {
			t.Errorf("%s supports h2idletls = %v (%s), want %v", s.Name, s.Supports(w), s.Unsupported(w), s.HTTP2)
		}
	}
	cfg, err := benchserver.SelfSignedTLS()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || r.ProtoMajor != 2 {
			rw.WriteHeader(505)
			return
		}
		io.WriteString(rw, "Hello, World!")
	}))
	srv.TLS = cfg
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	c, err := h2IdleOne(addr, "", w)
	if err != nil {
		t.Fatal(err)
	}
	if st := c.(*tls.Conn).ConnectionState(); st.NegotiatedProtocol != "h2" {
		t.Errorf("ALPN %q, want h2", st.NegotiatedProtocol)
	}
	c.Close()
	w.ExpectBody = []byte("other")
	if c, err := h2IdleOne(addr, "", w); err == nil {
		c.Close()
		t.Fatal("a wrong body was accepted")
	}
}

// TestH3IdleOne checks the h3idle workload: only the HTTP/3 servers run
// it, and its client, over one shared QUIC transport, completes one GET
// per connection and checks the body (quic-go's http3.Server answering a
// wrong one is refused; the right one accepted).
func TestH3IdleOne(t *testing.T) {
	w := mustWorkload("h3idle")
	if w.Tool() != "idle" || !w.HTTP3 || !w.Extra {
		t.Fatalf("h3idle workload: %+v", w)
	}
	for _, s := range Registry() {
		if s.Supports(w) != s.HTTP3 {
			t.Errorf("%s supports h3idle = %v (%s), want %v", s.Name, s.Supports(w), s.Unsupported(w), s.HTTP3)
		}
	}
	addr := wrongBodyH3Server(t) // "Hello, Wordl!"
	tr, err := newH3IdleTransport()
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if c, err := h3IdleOne(ctx, tr, addr, w); err == nil {
		c.Close()
		t.Fatal("a wrong body was accepted")
	}
	w.ExpectBody = []byte("Hello, Wordl!")
	var cs []io.Closer
	for range 2 {
		c, err := h3IdleOne(ctx, tr, addr, w)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	for _, c := range cs {
		c.Close()
	}
}

// TestTLSOnly: riptide-tlsloop (riptide with TLS on the event loop) runs
// the workloads over TLS only; without TLS it would be riptide again.
func TestTLSOnly(t *testing.T) {
	s, ok := Lookup("riptide-tlsloop")
	if !ok || !s.TLSOnly {
		t.Fatalf("riptide-tlsloop: registered %v, TLSOnly %v", ok, s.TLSOnly)
	}
	for _, w := range Workloads() {
		tls := w.TLS || w.HTTP2 == H2TLS
		if s.Supports(w) != (tls && !w.HTTP3) {
			t.Errorf("riptide-tlsloop supports %s = %v (%s), want %v", w.Name, s.Supports(w), s.Unsupported(w), tls)
		}
	}
}

// TestIdleConnsSummary: a report gives an idle workload the count
// -connections set (Config.IdleConns), or its own when none was given,
// whatever load-generator count Run derived (Config.Connections).
func TestIdleConnsSummary(t *testing.T) {
	for _, c := range []struct{ given, want int }{{0, H2IdleConns}, {10000, 10000}} {
		res := &Results{Config: Config{Connections: DefaultConnections, IdleConns: c.given}, Workloads: []string{"h2idle"}, Servers: []string{"riptide"},
			Runs: []RunRecord{{Workload: "h2idle", Server: "riptide", Round: 1, WrkStats: WrkStats{Requests: 1, IdleKiBPerConn: 3}}}}
		ws := Summarize(res)
		if len(ws) != 1 || !strings.HasPrefix(ws[0].Load, strconv.Itoa(c.want)+" idle") {
			t.Errorf("-connections %d: summary %+v, want %d idle connections", c.given, ws, c.want)
		}
	}
}
