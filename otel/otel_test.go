package otelriptide

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	qhttp3 "github.com/quic-go/quic-go/http3"
	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/http3"
	"github.com/riptide-http/riptide/internal/israce"
	"github.com/riptide-http/riptide/internal/loopback"
	"github.com/riptide-http/riptide/internal/testcert"
	"github.com/riptide-http/riptide/router"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

const (
	parentTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	parentSpan  = "00f067aa0ba902b7"
)

// app is a router whose handler answers with the traceparent it would
// inject into an outgoing request (the trace context going out).
func app(prop propagation.TextMapPropagator) *router.Router {
	r := router.New()
	r.HandleFunc("GET /users/{id}", func(c *riptide.Ctx) {
		h := http.Header{}
		prop.Inject(Context(c), propagation.HeaderCarrier(h))
		c.WriteString(h.Get("Traceparent"))
	})
	r.HandleFunc("GET /fail", func(c *riptide.Ctx) { c.Error(503, "down") })
	return r
}

// attrs returns a span's attributes as a map.
func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

// TestSpans: a server span per request on HTTP/1.1, HTTP/2 (h2c) and
// HTTP/3 (the http3 module, quic-go's client),
// checked with the SDK's in-memory exporter: child of the caller's W3C
// traceparent (in), the trace context the handler injects names the
// server span (out), named by the route, with the semantic convention
// attributes; a 5xx sets an error status; a request without traceparent
// starts a trace; an unsampled caller gets no span, and the handler's
// calls pass its trace context on.
func TestSpans(t *testing.T) {
	for _, proto := range []string{"HTTP/1.1", "HTTP/2.0", "HTTP/3.0"} {
		t.Run(proto, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			prop := propagation.TraceContext{}
			h := Middleware(Config{TracerProvider: tp, Propagator: prop})(app(prop))
			srv := &riptide.Server{Handler: h, Logger: slog.New(slog.DiscardHandler)}
			client := &http.Client{Timeout: 20 * time.Second}
			if proto == "HTTP/2.0" {
				srv.HTTP2 = &riptide.HTTP2Config{H2C: true}
				var p http.Protocols
				p.SetUnencryptedHTTP2(true)
				client.Transport = &http.Transport{Protocols: &p}
			}
			var base string
			if proto == "HTTP/3.0" {
				base, client = serveH3(t, srv)
			} else {
				base = serveTest(t, srv)
			}
			get := func(path, traceparent string) (int, string) {
				t.Helper()
				req, _ := http.NewRequest("GET", base+path, nil)
				if traceparent != "" {
					req.Header.Set("Traceparent", traceparent)
				}
				req.Header.Set("User-Agent", "otel-test")
				res, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				b, _ := io.ReadAll(res.Body)
				if res.Proto != proto {
					t.Errorf("%s over %s, want %s", path, res.Proto, proto)
				}
				return res.StatusCode, string(b)
			}

			_, out := get("/users/7", "00-"+parentTrace+"-"+parentSpan+"-01")
			spans := exp.GetSpans()
			if len(spans) != 1 {
				t.Fatalf("%d spans, want 1", len(spans))
			}
			s := spans[0]
			if s.SpanKind != trace.SpanKindServer || s.Name != "GET /users/{id}" ||
				s.Parent.TraceID().String() != parentTrace || s.Parent.SpanID().String() != parentSpan || !s.Parent.IsRemote() ||
				s.SpanContext.TraceID().String() != parentTrace {
				t.Errorf("span %q kind %v parent %v trace %v, want server span \"GET /users/{id}\", child of the caller's", s.Name, s.SpanKind, s.Parent, s.SpanContext.TraceID())
			}
			if want := "00-" + parentTrace + "-" + s.SpanContext.SpanID().String() + "-01"; out != want {
				t.Errorf("trace context injected by the handler: %q, want %q (the server span)", out, want)
			}
			version := map[string]string{"HTTP/1.1": "1.1", "HTTP/2.0": "2", "HTTP/3.0": "3"}[proto]
			a := attrs(s)
			for k, want := range map[attribute.Key]string{
				"http.request.method":       "GET",
				"url.path":                  "/users/7",
				"http.route":                "/users/{id}",
				"network.protocol.version":  version,
				"user_agent.original":       "otel-test",
				"http.response.status_code": "200",
			} {
				if got := a[k].String(); got != want {
					t.Errorf("attribute %s = %q, want %q", k, got, want)
				}
			}
			if a["server.address"].String() == "" || a["client.address"].String() == "" {
				t.Errorf("server.address %q, client.address %q: want both set", a["server.address"].String(), a["client.address"].String())
			}

			exp.Reset()
			if code, _ := get("/fail", ""); code != 503 {
				t.Fatalf("/fail: %d", code)
			}
			spans = exp.GetSpans()
			if len(spans) != 1 || spans[0].Status.Code != codes.Error || spans[0].Parent.IsValid() || attrs(spans[0])["http.response.status_code"].AsInt64() != 503 {
				t.Errorf("/fail without traceparent: %+v, want one root span with an error status and 503", spans)
			}

			exp.Reset()
			unsampled := "00-" + parentTrace + "-" + parentSpan + "-00"
			if _, out := get("/users/8", unsampled); out != unsampled {
				t.Errorf("unsampled caller: the handler injected %q, want the caller's context passed on, %q", out, unsampled)
			}
			if spans := exp.GetSpans(); len(spans) != 0 {
				t.Errorf("unsampled caller: %d spans, want 0", len(spans))
			}
		})
	}
}

// TestUnsampledParent: the in-place traceparent check agrees with the W3C
// format (and the propagator's refusals).
func TestUnsampledParent(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want bool
	}{
		{"00-" + parentTrace + "-" + parentSpan + "-00", true},
		{"00-" + parentTrace + "-" + parentSpan + "-02", true},
		{"00-" + parentTrace + "-" + parentSpan + "-01", false},
		{"00-" + parentTrace + "-" + parentSpan + "-03", false},
		{"00-00000000000000000000000000000000-" + parentSpan + "-00", false},
		{"00-" + parentTrace + "-0000000000000000-00", false},
		{"00-" + parentTrace + "-" + parentSpan + "-0", false},
		{"01-" + parentTrace + "-" + parentSpan + "-00", false},
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-" + parentSpan + "-00", false},
		{"00_" + parentTrace + "-" + parentSpan + "-00", false},
		{"", false},
	} {
		if got := unsampledParent([]byte(tc.v)); got != tc.want {
			t.Errorf("unsampledParent(%q) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

// TestUnsampledZeroAllocs: a request whose caller did not sample it, and
// one the Filter leaves out, cost nothing through the middleware.
func TestUnsampledZeroAllocs(t *testing.T) {
	if israce.Enabled {
		t.Skip("the race detector allocates")
	}
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	hello := riptide.HandlerFunc(func(c *riptide.Ctx) { c.WriteString("hello") })
	h := Middleware(Config{TracerProvider: tp, Propagator: propagation.TraceContext{},
		Filter: func(c *riptide.Ctx) bool { return string(c.Path()) != "/healthz" }})(hello)
	addr := loopback.Serve(t, h)
	for _, tc := range []struct{ name, req string }{
		{"unsampled caller", "GET / HTTP/1.1\r\nHost: x\r\nTraceparent: 00-" + parentTrace + "-" + parentSpan + "-00\r\n\r\n"},
		{"filtered out", "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := loopback.Dial(t, addr, tc.req)
			if a := testing.AllocsPerRun(2000, c.RoundTrip); a != 0 {
				t.Errorf("%v allocs per request, want 0", a)
			}
		})
	}
	if n := len(exp.GetSpans()); n != 0 {
		t.Errorf("%d spans, want 0", n)
	}
}

// serveH3 serves srv over HTTP/3 (the http3 module) on a loopback UDP
// port with the test certificate, and returns its URL and a quic-go
// HTTP/3 client trusting it.
func serveH3(t *testing.T, srv *riptide.Server) (string, *http.Client) {
	t.Helper()
	cert, err := testcert.Cert()
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = http3.Serve(srv, pc, &tls.Config{Certificates: []tls.Certificate{cert}}, nil)
	}()
	pool := x509.NewCertPool()
	pool.AddCert(cert.Leaf)
	tr := &qhttp3.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", NextProtos: []string{"h3"}}}
	t.Cleanup(func() {
		tr.Close()
		_ = srv.Close()
		<-done
		pc.Close()
	})
	return "https://" + pc.LocalAddr().String(), &http.Client{Transport: tr, Timeout: 20 * time.Second}
}

// serveTest runs srv on a loopback port until the test ends.
func serveTest(t *testing.T, srv *riptide.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	return "http://" + ln.Addr().String()
}

// TestRootDroppedBySamplerAllocs: a request with no traceparent that the
// SDK's own sampler drops (NeverSample here, a ratio sampler's misses
// alike) costs only what the SDK's Tracer.Start allocates for a dropped
// span: its non-recording span and the context that carries it (2). The
// middleware adds none of its own (its start options are made once; passed
// as a fresh variadic slice they cost one more).
func TestRootDroppedBySamplerAllocs(t *testing.T) {
	if israce.Enabled {
		t.Skip("the race detector allocates")
	}
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sdktrace.NeverSample()))
	hello := riptide.HandlerFunc(func(c *riptide.Ctx) { c.WriteString("hello") })
	h := Middleware(Config{TracerProvider: tp, Propagator: propagation.TraceContext{}})(hello)
	addr := loopback.Serve(t, h)
	c := loopback.Dial(t, addr, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if a := testing.AllocsPerRun(2000, c.RoundTrip); a > 2 {
		t.Errorf("%v allocs per request, want at most the SDK's 2", a)
	}
	if n := len(exp.GetSpans()); n != 0 {
		t.Errorf("%d spans, want 0", n)
	}
}
