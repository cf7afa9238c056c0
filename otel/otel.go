// Package otelriptide traces riptide native handlers with OpenTelemetry:
// a server span per request, its parent taken from the request's trace
// context (W3C traceparent with the default propagator), the same on
// HTTP/1.1, HTTP/2 and HTTP/3, since it wraps the handler rather than a
// protocol. It is a module of its own (github.com/riptide-http/riptide/otel)
// so that the core keeps its dependencies.
//
//	h := otelriptide.Middleware(otelriptide.Config{})(router)
//
// In the handler, Context(c) is the request's context with its span, for
// the calls it makes (an outgoing request injects the trace context from
// it: the "out" half of propagation). A request whose traceparent says the
// caller did not sample it is served without a span and allocates nothing
// (TestUnsampledZeroAllocs), as the SDK's default ParentBased sampler
// would decide; set Config.RecordUnsampledParents to hand those to the
// sampler too. A request without a traceparent goes to the tracer: one
// its sampler drops costs only what the SDK's Start allocates for a
// dropped span, its non-recording span and the context carrying it (2
// allocations with sdktrace.NeverSample, TestRootDroppedBySamplerAllocs;
// about 10 for a recorded span with AlwaysSample, over a loopback
// connection).
package otelriptide

import (
	"context"
	"strings"

	"github.com/riptide-http/riptide"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the tracer the middleware
// uses.
const ScopeName = "github.com/riptide-http/riptide/otel"

// Config configures Middleware; the zero value uses the global tracer
// provider and propagator (otel.SetTracerProvider,
// otel.SetTextMapPropagator).
type Config struct {
	// TracerProvider makes the tracer (default otel.GetTracerProvider()).
	TracerProvider trace.TracerProvider
	// Propagator reads the caller's trace context from the request
	// headers (default otel.GetTextMapPropagator()).
	Propagator propagation.TextMapPropagator
	// Filter, when set, is asked per request; false serves it without a
	// span (health checks, say), at no cost.
	Filter func(c *riptide.Ctx) bool
	// RecordUnsampledParents hands requests whose W3C traceparent has the
	// sampled flag unset to the tracer's sampler like any other, instead
	// of serving them without a span.
	RecordUnsampledParents bool
}

// Middleware returns middleware that serves each request inside a server
// span named "METHOD ROUTE" (the router's pattern, Ctx.Pattern, once the
// handler has run; "METHOD" without one), with the HTTP semantic
// convention attributes, the response status, and an error status for
// 5xx answers.
func Middleware(cfg Config) func(riptide.Handler) riptide.Handler {
	tp := cfg.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	prop := cfg.Propagator
	if prop == nil {
		prop = otel.GetTextMapPropagator()
	}
	tracer := tp.Tracer(ScopeName)
	return func(next riptide.Handler) riptide.Handler {
		return riptide.HandlerFunc(func(c *riptide.Ctx) {
			if (cfg.Filter != nil && !cfg.Filter(c)) || (!cfg.RecordUnsampledParents && unsampledParent(c.Header("Traceparent"))) {
				next.ServeCtx(c)
				return
			}
			serve(c, next, tracer, prop)
		})
	}
}

// serverKind is the start option of every span, made once: passed as a
// fresh variadic slice it cost an allocation per request.
var serverKind = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}

// serve runs next inside a span.
func serve(c *riptide.Ctx, next riptide.Handler, tracer trace.Tracer, prop propagation.TextMapPropagator) {
	parent := prop.Extract(c, carrier{c})
	method := methodString(c.Method())
	ctx, span := tracer.Start(parent, method, serverKind...)
	defer span.End()
	if span.IsRecording() {
		span.SetAttributes(
			attribute.String("http.request.method", method),
			attribute.String("url.path", string(c.Path())),
			attribute.String("server.address", string(c.Host())),
			attribute.String("network.protocol.version", protoVersion(c)),
			attribute.String("client.address", c.RemoteAddr().String()),
		)
		if ua := c.Header("User-Agent"); len(ua) > 0 {
			span.SetAttributes(attribute.String("user_agent.original", string(ua)))
		}
	}
	c.SetLocal(ctxKey{}, ctx)
	next.ServeCtx(c)
	if !span.IsRecording() {
		return
	}
	status := c.Status()
	span.SetAttributes(attribute.Int("http.response.status_code", status))
	if p := c.Pattern(); p != "" {
		route := p
		if i := strings.IndexByte(p, '/'); i > 0 {
			route = p[i:] // without the method and host
		}
		span.SetAttributes(attribute.String("http.route", route))
		span.SetName(method + " " + route)
	}
	if status >= 500 {
		span.SetStatus(codes.Error, "")
	}
}

type ctxKey struct{}

// methodString returns the method as a string, a constant for the usual
// ones (no allocation).
func methodString(m []byte) string {
	switch string(m) {
	case "GET":
		return "GET"
	case "HEAD":
		return "HEAD"
	case "POST":
		return "POST"
	case "PUT":
		return "PUT"
	case "PATCH":
		return "PATCH"
	case "DELETE":
		return "DELETE"
	case "OPTIONS":
		return "OPTIONS"
	}
	return string(m)
}

// Context returns the request's context with its server span (a child of
// the caller's), for the calls the handler makes and the trace context
// they inject. For a request served without a span because its caller did
// not sample it, the caller's trace context, so that calls pass the
// decision on (made here, when asked: the request itself cost nothing);
// c itself otherwise. Like c, it is valid until the handler returns.
func Context(c *riptide.Ctx) context.Context {
	if ctx, ok := c.Local(ctxKey{}).(context.Context); ok {
		return ctx
	}
	if unsampledParent(c.Header("Traceparent")) {
		return propagation.TraceContext{}.Extract(c, carrier{c})
	}
	return c
}

// unsampledParent reports a valid W3C traceparent (version 00) whose
// sampled flag is unset, reading the header's bytes in place.
func unsampledParent(v []byte) bool {
	// "00-" 32 hex "-" 16 hex "-" 2 hex
	if len(v) != 55 || v[0] != '0' || v[1] != '0' || v[2] != '-' || v[35] != '-' || v[52] != '-' {
		return false
	}
	zeroTrace, zeroSpan := true, true
	for i, b := range v[3:55] {
		if i == 32 || i == 49 {
			continue
		}
		if !(b >= '0' && b <= '9' || b >= 'a' && b <= 'f') {
			return false
		}
		if b != '0' {
			if i < 32 {
				zeroTrace = false
			} else if i < 49 {
				zeroSpan = false
			}
		}
	}
	if zeroTrace || zeroSpan {
		return false // invalid IDs: the propagator ignores the header
	}
	return unhex(v[54])&1 == 0
}

func unhex(b byte) byte {
	if b <= '9' {
		return b - '0'
	}
	return b - 'a' + 10
}

func protoVersion(c *riptide.Ctx) string {
	switch {
	case c.IsHTTP3():
		return "3"
	case c.IsHTTP2():
		return "2"
	case c.ProtoMinor() == 0:
		return "1.0"
	}
	return "1.1"
}

// carrier reads request headers for the propagator.
type carrier struct{ c *riptide.Ctx }

func (h carrier) Get(key string) string { return string(h.c.Header(key)) }
func (h carrier) Set(string, string)    {}
func (h carrier) Keys() []string {
	hs := h.c.Request().Headers
	keys := make([]string, len(hs))
	for i := range hs {
		keys[i] = string(hs[i].Name)
	}
	return keys
}
