package serve

import (
	"context"
	"net"
	"net/http"

	"github.com/riptide-http/riptide"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/riptide-http/riptide/bench/eventstore/fastport"
	"github.com/riptide-http/riptide/bench/eventstore/riptideport"
)

// Builder makes a server for an opened application: serve runs it on a
// listener, stop shuts it down.
type Builder func(e *Env) (serve func(net.Listener) error, stop func())

// Names lists the servers in report order; the first is the baseline.
var Names = []string{"nethttp", "riptide-compat", "fasthttp-adaptor", "fasthttp-native", "riptide-native"}

// Servers are the five ways of serving the same application, by name. The
// first three serve the unchanged app.Handler; the native ones port the
// RPC endpoint and keep SSE on the http.Handler.
var Servers = map[string]Builder{
	"nethttp": func(e *Env) (func(net.Listener) error, func()) {
		srv := &http.Server{Handler: e.App.Handler(e.Log)}
		return srv.Serve, func() { srv.Shutdown(context.Background()) }
	},
	"riptide-compat": func(e *Env) (func(net.Listener) error, func()) {
		srv := &riptide.Server{Handler: riptide.FromHTTP(e.App.Handler(e.Log))}
		return srv.Serve, func() { srv.Shutdown(context.Background()) }
	},
	"fasthttp-adaptor": func(e *Env) (func(net.Listener) error, func()) {
		return fasthttpServe(&fasthttp.Server{Handler: fasthttpadaptor.NewFastHTTPHandler(e.App.Handler(e.Log))})
	},
	"fasthttp-native": func(e *Env) (func(net.Listener) error, func()) {
		return fasthttpServe(&fasthttp.Server{Handler: fastport.Handler(e.App, e.Log)})
	},
	"riptide-native": func(e *Env) (func(net.Listener) error, func()) {
		// The body bound mirrors fasthttp's default; the RPC endpoint
		// answers anything over eventstore.MaxBodyBytes itself.
		srv := &riptide.Server{Handler: riptideport.Handler(e.App, e.Log), MaxRequestBodySize: 4 << 20}
		return srv.Serve, func() { srv.Shutdown(context.Background()) }
	},
}

// fasthttpServe stops a fasthttp server by closing its listener, not with
// Shutdown: Shutdown resets the server's done channel, which RequestCtx.Done
// reads, without synchronisation, and the SQLite driver reads it from
// goroutines (the race detector reports it). The process exits right after.
func fasthttpServe(srv *fasthttp.Server) (func(net.Listener) error, func()) {
	lnc := make(chan net.Listener, 1)
	return func(ln net.Listener) error {
			lnc <- ln
			return srv.Serve(ln)
		}, func() {
			select {
			case ln := <-lnc:
				ln.Close()
			default:
			}
		}
}
