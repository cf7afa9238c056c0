package benchserver

import (
	"context"

	"github.com/riptide-http/riptide"
)

// ConfigureRiptide applies -h2c, -tls, -h2inline and -engine to a riptide
// server: h2c through HTTP2Config.H2C (prior knowledge on the HTTP/1.1
// port), TLS through TLSConfig (ServeTLS negotiates h2 or http/1.1 with
// ALPN; HTTP/2 over TLS is on by default), -h2inline through
// HTTP2Config.InlineHandlers, the engine through Server.Engine (and
// -tlsengine through Server.TLSEngine). Without
// them it leaves srv untouched, so HTTP/1.1 behaviour is unchanged.
func ConfigureRiptide(srv *riptide.Server, o Options) {
	switch o.Engine {
	case "goroutine":
		srv.Engine = riptide.EngineGoroutine
	case "eventloop":
		srv.Engine = riptide.EngineEventLoop
	case "onloop":
		srv.Engine = riptide.EngineOnLoop
	}
	switch o.TLSEngine {
	case "eventloop":
		srv.TLSEngine = riptide.EngineEventLoop
	case "goroutine":
		srv.TLSEngine = riptide.EngineGoroutine
	}
	if o.H2C || o.H2Inline {
		srv.HTTP2 = &riptide.HTTP2Config{H2C: o.H2C, InlineHandlers: o.H2Inline}
	}
	if o.TLS {
		srv.TLSConfig = o.TLSConfig
	}
}

// MainRiptide runs a riptide benchmark server: srv, its Handler set,
// configured by the flags o and served until SIGINT or SIGTERM.
func MainRiptide(o Options, srv *riptide.Server) {
	ConfigureRiptide(srv, o)
	Main(o, o.Serve(srv.Serve, srv.ServeTLS), func() { srv.Shutdown(context.Background()) })
}
