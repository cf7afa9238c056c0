// Command fasthttp serves the benchmark or probe routes with
// valyala/fasthttp (pinned in bench/go.mod) and its default server settings.
//
//	fasthttp -addr 127.0.0.1:8080 -profile bench [-tls]
package main

import (
	"github.com/valyala/fasthttp"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/fastroutes"
)

func main() {
	o := benchserver.ParseFlags()
	o.RequireNoH2C("fasthttp") // no HTTP/2 in fasthttp
	srv := &fasthttp.Server{Handler: fastroutes.Handler(o.Profile)}
	if o.TLS {
		srv.TLSConfig = o.TLSConfig // HTTP/1.1 over TLS (ServeTLS)
	}
	benchserver.Main(o, o.Serve(srv.Serve, srv.ServeTLS), func() { srv.Shutdown() })
}
